"""Vectara HHEM-2.1-open (``vectara/hallucination_evaluation_model``) as a batched P(consistent) scorer.

HHEM is Flan-T5-base's encoder with a two-way token-classification head, published with its own modelling
code (``HHEMv2ForSequenceClassification``, config ``HHEMv2Config``, model_type ``HHEMv2``). Each pair is
written with the prompt of ``prompts/hhem_pair.j2`` (which begins with a literal ``<pad>`` token), tokenized
with the Flan-T5 tokenizer, and the head's logits at the first position give, by softmax, P(consistent) =
class 1. Three ways to load it:

* ``trust_remote_code=True``: transformers runs the checkpoint's own Python code (only when asked).
* ``native=True``: no remote code; the checkpoint's weights (``t5.*``) are loaded into transformers' own
  ``T5ForTokenClassification`` built from the Flan-T5 config: the same network, the same numbers.
* A plain T5 checkpoint (a ``T5ForTokenClassification`` or ``T5ForSequenceClassification`` with two labels,
  e.g. one fine-tuned in HHEM's format) loads without either.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from groundjudge.local_nli.backend_check import settle_scorer, support_verdicts
from groundjudge.local_nli.devices import Placement, placement
from groundjudge.local_nli.inputs import render
from groundjudge.local_nli.model import ModelUnavailable, resolve_model
from groundjudge.local_nli.model_cache import Loaded, load_pretrained
from groundjudge.local_nli.pair_scorer import PairScorer, support_column
from groundjudge.local_nli.settings import ModelSettings

log = logging.getLogger(__name__)

DEFAULT_HHEM = "vectara/hallucination_evaluation_model"
"""Hub name of HHEM-2.1-open."""
FOUNDATION = "google/flan-t5-base"
"""The tokenizer (and, for ``native``, the config) HHEM is built on, unless its config names another."""
TEMPLATE = "hhem_pair.j2"
TOKENIZER_FILES = ("tokenizer.json", "spiece.model", "tokenizer_config.json")


class RemoteCodeRequired(ModelUnavailable):
    """A checkpoint that ships its own modelling code, loaded without ``trust_remote_code`` or ``native``."""


def read_config(path: str) -> dict[str, Any]:
    """A model directory's config.json as a dict ({} when absent)."""
    try:
        return json.loads((Path(path) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def model_kind(config: dict[str, Any]) -> str:
    """``hhem`` (the published remote-code checkpoint), ``token`` (a T5 token classifier: first-position
    logits) or ``sequence`` (any sequence classifier)."""
    architectures = config.get("architectures") or []
    if config.get("model_type") == "HHEMv2" or "HHEMv2ForSequenceClassification" in architectures:
        return "hhem"
    return "token" if any(a.endswith("ForTokenClassification") for a in architectures) else "sequence"


def _has_tokenizer(path: str) -> bool:
    return any((Path(path) / name).exists() for name in TOKENIZER_FILES)


def load_hhem(name: str, trust_remote_code: bool, native: bool, tokenizer: str, where: Placement) -> tuple[
        Loaded, str]:
    """The shared loaded model and its kind; RemoteCodeRequired names the settings that load HHEM itself."""
    path = resolve_model(name)
    config = read_config(path)
    kind = model_kind(config)
    if tokenizer:
        tok = resolve_model(tokenizer)
    elif _has_tokenizer(path):
        tok = path
    else:
        tok = resolve_model(config.get("foundation") or FOUNDATION)
    if kind == "hhem":
        if trust_remote_code:
            return load_pretrained("AutoModelForSequenceClassification", path, where, tokenizer=tok,
                                   trust_remote_code=True), kind
        if native:
            from transformers import AutoConfig

            t5 = AutoConfig.from_pretrained(resolve_model(config.get("foundation") or FOUNDATION), num_labels=2)
            return load_pretrained("T5ForTokenClassification", path, where, tokenizer=tok, config=t5,
                                   key_mapping={r"^t5\.": ""}), "token"
        raise RemoteCodeRequired(
            f"model {name!r} ships its own modelling code (HHEMv2ForSequenceClassification); pass "
            "trust_remote_code=true to run it (e.g. --judge hhem:trust_remote_code=true), or native=true to load "
            "its weights into transformers' T5ForTokenClassification without running any code from the hub")
    auto = "AutoModelForTokenClassification" if kind == "token" else "AutoModelForSequenceClassification"
    return load_pretrained(auto, path, where, tokenizer=tok, trust_remote_code=trust_remote_code), kind


@dataclass
class HHEMModel(PairScorer):
    """A loaded HHEM(-like) model: ``score_pairs(premises, hypotheses)`` -> P(consistent) per pair."""

    kind: str = "hhem"
    consistent: int = 1
    """The label index of 'consistent' (HHEM: 1)."""

    def text(self, premise: str, claim: str) -> str:
        """HHEM's prompt for one pair."""
        return render(TEMPLATE, premise=premise, hypothesis=claim)

    def support(self, batch: dict[str, Any]) -> np.ndarray:
        """Softmax over the two-way head (at the first position for a token classifier): P(consistent)."""
        import torch

        logits = self.model(**batch).logits.float()
        if logits.dim() == 3:
            logits = logits[:, 0, :]
        return torch.softmax(logits, dim=-1)[:, self.consistent].cpu().numpy()


def _hhem_scorer(name: str, settings: ModelSettings, trust_remote_code: bool, native: bool, tokenizer: str,
                 max_length: int, where: Placement) -> HHEMModel:
    """An HHEM scorer on ``where`` (see :func:`load_hhem_model`)."""
    labels = tuple(settings.labels)
    loaded, kind = load_hhem(name, trust_remote_code, native, tokenizer, where)
    config = loaded.model.config
    if getattr(config, "num_labels", 2) != 2 and not labels:
        log.warning("%s has %d labels; HHEM has two (consistent = 1)", name, config.num_labels)
    column = support_column(dict(getattr(config, "id2label", {0: "LABEL_0", 1: "LABEL_1"})), labels, 1)
    return HHEMModel(loaded=loaded, max_length=max_length, batch_size=settings.batch_size, kind=kind,
                     consistent=column, placement=where)


@lru_cache(maxsize=8)
def load_hhem_model(name: str = DEFAULT_HHEM, settings: ModelSettings = ModelSettings(), *,
                    trust_remote_code: bool = False, native: bool = False, tokenizer: str = "",
                    max_length: int = 1024) -> HHEMModel:
    """An HHEM scorer, one per settings; its weights are shared with every judge naming the same model and placement.

    ``tokenizer``: hub name or path (default: the model's own, else its config's foundation). ``max_length`` is
    not capped by the tokenizer's 512: T5's relative positions take longer inputs (HHEM-2.1 was trained with no
    fixed context limit; memory grows with the length). ``dtype=auto`` is settled by the check set (support
    >= 0.5 the same as float32, see groundjudge.local_nli.backend_check).
    """
    def build(where: Placement) -> HHEMModel:
        return _hhem_scorer(name, settings, trust_remote_code, native, tokenizer, max_length, where)

    where = placement(settings.device, settings.dtype)
    rule = f"hhem:remote={trust_remote_code},native={native},tokenizer={tokenizer}:{list(settings.labels)}"
    return build(settle_scorer(where, resolve_model(name), rule, build, support_verdicts))
