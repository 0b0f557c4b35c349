"""MiniCheck (Tang, Laban & Durrett, EMNLP 2024) as a batched P(supported) scorer, and its document chunks.

The published recipe (``Liyan06/MiniCheck``, ``minicheck/inference.py``): the document is cut into chunks of
whole sentences (about 400 units), every claim is scored against every chunk, and a claim's support is its
maximum over chunks. Each pair is one text, ``{chunk}{eos}{claim}`` (``predict: `` first for Flan-T5; see
``prompts/minicheck_pair.j2``). Backends:

* ``roberta`` / ``deberta``: a two-way sequence classifier; P(supported) is the softmax of label 1
  (``lytang/MiniCheck-RoBERTa-Large``, ``lytang/MiniCheck-DeBERTa-v3-Large``).
* ``flan-t5``: a seq2seq model; one decoder step from the start token, softmax over the logits of the
  first tokens of "0" and "1"; P(supported) = P("1") (``lytang/MiniCheck-Flan-T5-Large``).

The backend is read from the config's model_type (t5 -> flan-t5, roberta, deberta(-v2)); ``backend=`` wins.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from groundjudge.local_nli.backend_check import settle_scorer, support_verdicts
from groundjudge.local_nli.devices import Placement, placement
from groundjudge.local_nli.hhem_model import read_config
from groundjudge.local_nli.inputs import render
from groundjudge.local_nli.model import resolve_model
from groundjudge.local_nli.model_cache import load_pretrained
from groundjudge.local_nli.pair_scorer import PairScorer, support_column
from groundjudge.local_nli.segment import Window, windows
from groundjudge.local_nli.settings import ModelSettings

log = logging.getLogger(__name__)

DEFAULT_MINICHECK = "lytang/MiniCheck-Flan-T5-Large"
"""The best MiniCheck under 1B parameters (the paper's MiniCheck-FT5)."""
HUB_MODELS = {"roberta": "lytang/MiniCheck-RoBERTa-Large", "deberta": "lytang/MiniCheck-DeBERTa-v3-Large",
              "flan-t5": DEFAULT_MINICHECK}
"""The published checkpoint of each backend."""
BACKENDS: tuple[str, ...] = ("auto", "roberta", "deberta", "flan-t5")
MAX_LENGTH = {"roberta": 512, "deberta": 2048, "flan-t5": 2048}
"""The recipe's input limit per backend (RoBERTa's learned positions stop at 512)."""
TEMPLATE = "minicheck_pair.j2"


def infer_backend(config: dict[str, Any]) -> str:
    """The backend a checkpoint's config.json implies: t5 / mt5 -> flan-t5; deberta(-v2) -> deberta; else roberta
    (any other sequence classifier reads the text the same way)."""
    model_type = str(config.get("model_type", "")).lower()
    if model_type in ("t5", "mt5", "umt5"):
        return "flan-t5"
    if model_type.startswith("deberta"):
        return "deberta"
    return "roberta"


def word_count(text: str) -> int:
    """Whitespace-separated words (MiniCheck's chunk unit for Flan-T5)."""
    return len(text.split())


def chunk_context(context: Sequence[str], chunk_words: int, max_tokens: int,
                  count_tokens: Callable[[str], int]) -> list[Window]:
    """The documents as chunks of whole sentences of at most ``chunk_words`` words (no overlap, as MiniCheck),
    each re-cut where it has more than ``max_tokens`` tokens, so that no chunk is truncated by the model."""
    out: list[Window] = []
    for chunk in windows(tuple(context), max(chunk_words, 1), word_count, overlap=0):
        if count_tokens(chunk.text) <= max_tokens:
            out.append(chunk)
            continue
        for piece in windows((chunk.text,), max(max_tokens, 16), count_tokens, overlap=0):
            out.append(Window(doc_index=chunk.doc_index, start=chunk.start + piece.start,
                              end=chunk.start + piece.end, text=piece.text))
    return out


@dataclass
class MiniCheckModel(PairScorer):
    """A loaded MiniCheck model: ``score_pairs(chunks, claims)`` -> P(supported) per pair."""

    backend: str = "flan-t5"
    supported: int = 1
    """Sequence classifiers: the index of the supported label. Flan-T5: unused."""
    label_tokens: tuple[int, int] = (0, 0)
    """Flan-T5: the token ids of "0" and "1" (the first token of each)."""

    def text(self, premise: str, claim: str) -> str:
        """MiniCheck's input for one pair."""
        return render(TEMPLATE, backend=self.backend, premise=premise, claim=claim, eos=self.tokenizer.eos_token or "")

    def support(self, batch: dict[str, Any]) -> np.ndarray:
        """P(supported): softmax of the classifier, or of the "0" / "1" logits of Flan-T5's first decoded token."""
        import torch

        if self.backend != "flan-t5":
            logits = self.model(**batch).logits.float()
            return torch.softmax(logits, dim=-1)[:, self.supported].cpu().numpy()
        start = self.model.config.decoder_start_token_id or 0
        decoder = torch.full((batch["input_ids"].shape[0], 1), start, dtype=torch.long, device=self.device)
        logits = self.model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                            decoder_input_ids=decoder).logits[:, 0, :].float()
        pair = logits[:, list(self.label_tokens)]
        return torch.softmax(pair, dim=-1)[:, 1].cpu().numpy()


def _label_tokens(tokenizer: Any) -> tuple[int, int]:
    """The first token ids of "0" and "1" (T5: "▁" and "▁1", i.e. 3 and 209 in Flan-T5's vocabulary)."""
    ids = tuple(tokenizer("0", add_special_tokens=False)["input_ids"][:1] +
                tokenizer("1", add_special_tokens=False)["input_ids"][:1])
    if len(ids) != 2 or ids[0] == ids[1]:
        raise ValueError(f"the tokenizer does not tell '0' from '1' by their first token ({ids}); "
                         "a MiniCheck Flan-T5 model needs both")
    return int(ids[0]), int(ids[1])


def _minicheck_scorer(path: str, chosen: str, settings: ModelSettings, max_length: int | None,
                      where: Placement) -> MiniCheckModel:
    """A MiniCheck scorer of backend ``chosen`` on ``where`` (see :func:`load_minicheck_model`)."""
    auto = "AutoModelForSeq2SeqLM" if chosen == "flan-t5" else "AutoModelForSequenceClassification"
    loaded = load_pretrained(auto, path, where)
    limit = MAX_LENGTH[chosen]
    if chosen == "roberta":
        positions = int(getattr(loaded.model.config, "max_position_embeddings", 514) or 514)
        limit = min(limit, positions - 2)   # RoBERTa's first two positions are reserved
    model = MiniCheckModel(loaded=loaded, max_length=min(max_length or limit, limit), batch_size=settings.batch_size,
                           backend=chosen, placement=where)
    if chosen == "flan-t5":
        model.label_tokens = _label_tokens(loaded.tokenizer)
    else:
        model.supported = support_column(dict(loaded.model.config.id2label), tuple(settings.labels), 1)
    return model


@lru_cache(maxsize=8)
def load_minicheck_model(name: str = DEFAULT_MINICHECK, settings: ModelSettings = ModelSettings(), *,
                         backend: str = "auto", max_length: int | None = None) -> MiniCheckModel:
    """A MiniCheck scorer, one per settings; the weights are shared with every local judge naming the same
    model and placement (a RoBERTa / DeBERTa checkpoint with the ``nli`` judge, too). ``dtype=auto`` is
    settled by the check set (support >= 0.5 the same as float32, see groundjudge.local_nli.backend_check)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown MiniCheck backend {backend!r}; known: {', '.join(BACKENDS)}")
    path = resolve_model(name)
    chosen = infer_backend(read_config(path)) if backend == "auto" else backend

    def build(where: Placement) -> MiniCheckModel:
        return _minicheck_scorer(path, chosen, settings, max_length, where)

    where = settle_scorer(placement(settings.device, settings.dtype), path,
                          f"minicheck:{chosen}:{list(settings.labels)}", build, support_verdicts)
    model = build(where)
    log.info("MiniCheck %s: backend %s, max_length %d", name, chosen, model.max_length)
    return model
