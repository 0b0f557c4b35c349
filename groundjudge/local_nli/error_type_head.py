"""The local error-type head: a sequence classifier (transformers ``AutoModelForSequenceClassification``) with one
label per error type of a taxonomy, read from and written to a model folder.

The folder holds the transformers model and tokenizer, ``error_types.json`` (the type names in label order, the
input format and evidence count) and the training card ``model_card.json``. :func:`load_head` refuses a folder
that is not one, in one line naming it. :meth:`ErrorTypeHead.predict` types a batch of :class:`TypedPair`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, Field

from groundjudge.local_nli.error_type_data import EVIDENCE_K, TypedPair, head_input
from groundjudge.local_nli.model import torch_threads

HEAD_FILE = "error_types.json"
"""The head's own settings file inside its model folder."""

INPUT_FORMAT = "claim+diff+evidence/v1"
"""The text pair :func:`groundjudge.local_nli.error_type_data.head_input` makes; a folder made for another is refused."""

_LOCK = threading.Lock()


class HeadSettings(BaseModel):
    """``error_types.json``: what the head predicts and how its input is made."""

    types: tuple[str, ...] = Field(min_length=2, description="Error type names in label order.")
    input_format: str = INPUT_FORMAT
    evidence_k: int = Field(default=EVIDENCE_K, ge=1, description="Context sentences shown with each claim.")
    max_length: int = Field(default=160, ge=16, description="Tokens per input (longer pairs are truncated).")


class HeadError(ValueError):
    """A folder that is not an error-type head (or one made for another input format)."""


@dataclass
class ErrorTypeHead:
    """A loaded head: the classifier, its tokenizer and settings."""

    model: object
    tokenizer: object
    settings: HeadSettings

    def probabilities(self, pairs: Sequence[TypedPair], batch_size: int = 16) -> list[list[float]]:
        """P(type) for each pair, in the order of ``settings.types``."""
        import torch

        out: list[list[float]] = []
        self.model.eval()
        for i in range(0, len(pairs), batch_size):
            texts = [head_input(p.claim, p.evidence) for p in pairs[i:i + batch_size]]
            enc = self.tokenizer([a for a, _ in texts], [b for _, b in texts], truncation=True, padding=True,
                                 max_length=self.settings.max_length, return_tensors="pt")
            with torch.inference_mode():
                logits = self.model(**enc).logits.float()
            out += torch.softmax(logits, dim=-1).tolist()
        return out

    def predict(self, pairs: Sequence[TypedPair]) -> list[str]:
        """The most probable type of each pair."""
        names = self.settings.types
        return [names[max(range(len(p)), key=p.__getitem__)] for p in self.probabilities(pairs)]

    def save(self, folder: str | Path, card: dict | None = None) -> Path:
        """Write the model, tokenizer, settings and (when given) the card into ``folder``."""
        path = Path(folder)
        path.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(path)
        self.tokenizer.save_pretrained(path)
        (path / HEAD_FILE).write_text(self.settings.model_dump_json(indent=1) + "\n", encoding="utf-8")
        if card is not None:
            (path / "model_card.json").write_text(json.dumps(card, indent=1, ensure_ascii=False) + "\n",
                                                  encoding="utf-8")
        return path


def new_head(base: str, settings: HeadSettings) -> ErrorTypeHead:
    """A fresh head on a base encoder folder (its classifier initialised at random), labels named by type."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    labels = dict(enumerate(settings.types))
    model = AutoModelForSequenceClassification.from_pretrained(
        base, num_labels=len(labels), id2label=labels, label2id={v: k for k, v in labels.items()},
        ignore_mismatched_sizes=True, problem_type="single_label_classification")
    return ErrorTypeHead(model=model, tokenizer=AutoTokenizer.from_pretrained(base), settings=settings)


def head_settings(folder: str | Path) -> HeadSettings:
    """The settings of a head folder; HeadError (one line naming the folder) if it is not one."""
    path = Path(folder).expanduser()
    if not (path / HEAD_FILE).is_file():
        raise HeadError(f"{path}: not an error-type model folder (no {HEAD_FILE}; make one with "
                        "`groundjudge train-error-types`)")
    try:
        settings = HeadSettings.model_validate_json((path / HEAD_FILE).read_text(encoding="utf-8"))
    except ValueError as err:
        raise HeadError(f"{path / HEAD_FILE}: {str(err).splitlines()[0]}") from None
    if settings.input_format != INPUT_FORMAT:
        raise HeadError(f"{path}: made for input format {settings.input_format!r}, this version reads "
                        f"{INPUT_FORMAT!r}")
    return settings


@lru_cache(maxsize=4)
def load_head(folder: str) -> ErrorTypeHead:
    """A head folder loaded once per process (on CPU, $GROUNDJUDGE_THREADS torch threads)."""
    settings = head_settings(folder)
    with _LOCK:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        torch.set_num_threads(torch_threads())
        model = AutoModelForSequenceClassification.from_pretrained(folder)
        if model.config.num_labels != len(settings.types):
            raise HeadError(f"{folder}: the model has {model.config.num_labels} labels, {HEAD_FILE} names "
                            f"{len(settings.types)} types")
        return ErrorTypeHead(model=model.eval(), tokenizer=AutoTokenizer.from_pretrained(folder), settings=settings)
