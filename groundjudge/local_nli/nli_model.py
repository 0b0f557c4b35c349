"""Any sequence-classification NLI / consistency model as a batched (premise, hypothesis) scorer.

Labels are read from the model's ``config.id2label`` (checkpoints order them
differently). All pairs of a call are tokenized at once, sorted by token
length and cut into batches, so batches carry little padding; results come
back in input order. Only the premise is cut to fit (``only_first``), and
never silently: every cut pair is counted in ``ScoreStats``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from groundjudge.local_nli.model import best_device, resolve_model, torch_threads

log = logging.getLogger(__name__)

ENTAILMENT, NEUTRAL, CONTRADICTION = 0, 1, 2
"""Column order of the probabilities returned by ``score_pairs``."""

_CONTRADICTION_STEMS = ("contradict", "refut", "inconsistent", "not_supported", "unsupported", "hallucinat",
                        "unfaithful", "ungrounded", "not_entail", "non_entail")
_ENTAILMENT_STEMS = ("entail", "support", "consistent", "faithful", "grounded")
_NEUTRAL_STEMS = ("neutral", "not_enough", "unverifiable", "unknown")
# negative names are tried first: "not_supported" contains "support", "inconsistent" contains "consistent"
_STEMS = ((CONTRADICTION, _CONTRADICTION_STEMS), (NEUTRAL, _NEUTRAL_STEMS), (ENTAILMENT, _ENTAILMENT_STEMS))


class LabelMapError(ValueError):
    """A model whose label names cannot be mapped to entailment / neutral / contradiction."""


def map_labels(id2label: dict[int, str]) -> dict[int, int]:
    """Model label index -> column (ENTAILMENT / NEUTRAL / CONTRADICTION), by label name (case-insensitive)."""
    mapping: dict[int, int] = {}
    for index, name in id2label.items():
        key = str(name).lower().replace(" ", "_").replace("-", "_")
        for column, stems in _STEMS:
            if any(stem in key for stem in stems):
                mapping[int(index)] = column
                break
    unmapped = {i: n for i, n in id2label.items() if int(i) not in mapping}
    if unmapped or ENTAILMENT not in mapping.values():
        raise LabelMapError(
            f"cannot map the model's labels {dict(id2label)} to entailment / neutral / contradiction "
            f"(unmapped: {unmapped or 'none'}, entailment found: {ENTAILMENT in mapping.values()}); "
            "name them in the model's config.id2label, e.g. {0: 'entailment', 1: 'neutral', 2: 'contradiction'}")
    return mapping


@dataclass
class ScoreStats:
    """What the scorer did: pairs scored, pairs whose premise was cut to fit, pairs whose claim was cut too."""

    pairs_scored: int = 0
    pairs_truncated: int = 0
    claims_truncated: int = 0
    """Pairs whose hypothesis alone did not fit, so it was cut as well (longest_first)."""
    batches: int = 0
    padded_tokens: int = 0
    """Tokens fed to the model, padding included (a measure of wasted work)."""
    real_tokens: int = 0

    def add(self, other: ScoreStats) -> None:
        """Accumulate another call's counts into this one."""
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_timings(self) -> dict[str, float]:
        """The counts as floats, for ``JudgeResult.timings``."""
        return {"pairs_scored": float(self.pairs_scored), "pairs_truncated": float(self.pairs_truncated),
                "claims_truncated": float(self.claims_truncated), "batches": float(self.batches)}


@dataclass(frozen=True)
class _Backbone:
    """A loaded tokenizer + model, shared by every NLIModel of the same (path, precision)."""

    tokenizer: Any
    model: Any
    device: str
    limit: int
    lock: threading.Lock


def _model_limit(tokenizer: Any, config: Any) -> int:
    """The longest input the model takes, from the tokenizer, else the position embeddings, else 512."""
    if 0 < tokenizer.model_max_length < 100_000:
        return int(tokenizer.model_max_length)
    return min(int(getattr(config, "max_position_embeddings", 512) or 512), 512)


_LOAD_LOCK = threading.Lock()


BACKENDS = ("torch", "onnx")
"""``torch``: transformers on CUDA / MPS / CPU; ``onnx``: ONNX Runtime on CPU (see onnx_backend)."""


def _backbone(path: str, int8: bool, bf16: bool, backend: str = "torch") -> _Backbone:
    """The shared backbone, loaded by one thread at a time (so never twice)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
    with _LOAD_LOCK:
        return _load_backbone(path, int8, bf16, backend)


@lru_cache(maxsize=4)
def _load_backbone(path: str, int8: bool, bf16: bool, backend: str = "torch") -> _Backbone:
    """Load a tokenizer and model once per process (per precision and backend)."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.set_num_threads(torch_threads())
    tokenizer = AutoTokenizer.from_pretrained(path)
    if backend == "onnx":
        from groundjudge.local_nli.onnx_backend import OnnxClassifier

        log.info("loading NLI model from %s with ONNX Runtime (int8=%s)", path, int8)
        model = OnnxClassifier(path, int8)
        return _Backbone(tokenizer=tokenizer, model=model, device="cpu", limit=_model_limit(tokenizer, model.config),
                         lock=threading.Lock())
    device = best_device()
    log.info("loading NLI model from %s on %s (int8=%s, bf16=%s)", path, device, int8, bf16)
    model = AutoModelForSequenceClassification.from_pretrained(path).to(device).eval()
    if int8 and device != "cpu":
        log.warning("int8 dynamic quantisation is for CPU; running %s unquantised on %s", path, device)
    elif int8:
        model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    elif bf16:
        model = model.to(torch.bfloat16)
    return _Backbone(tokenizer=tokenizer, model=model, device=device, limit=_model_limit(tokenizer, model.config),
                     lock=threading.Lock())


@dataclass
class NLIModel:
    """A loaded NLI model: ``score_pairs(premises, hypotheses)`` -> (n, 3) probabilities."""

    name: str
    batch_size: int = 16
    max_length: int | None = None
    """Longest pair in tokens (None: the model's own limit; never above it)."""
    int8: bool = False
    """Dynamically quantise the linear layers to int8 (CPU): about 2.5x faster; probabilities move by a few
    hundredths (mean 0.014, max 0.08 on a fine-tuned MiniLM in scripts/bench_nli_engine.py)."""
    bf16: bool = False
    """Run in bfloat16: about 2.2x faster on CPUs with AVX512-BF16 / AMX (and on GPUs), and closer than int8
    (mean 0.0003, max 0.006 in the same benchmark)."""
    backend: str = "torch"
    """``torch`` or ``onnx`` (ONNX Runtime on CPU; with ``int8`` its own dynamic quantisation)."""
    stats: ScoreStats = field(default_factory=ScoreStats)
    """Counts over every call of this instance."""

    def __post_init__(self) -> None:
        backbone = _backbone(resolve_model(self.name), self.int8, self.bf16, self.backend)
        self.tokenizer, self.model, self.device = backbone.tokenizer, backbone.model, backbone.device
        self._lock = backbone.lock
        self.max_length = min(self.max_length or backbone.limit, backbone.limit)
        self.special_tokens = self.tokenizer.num_special_tokens_to_add(pair=True)
        config = self.model.config
        self.single_logit = config.num_labels == 1
        self.columns = {0: ENTAILMENT} if self.single_logit else map_labels(config.id2label)

    def token_length(self, text: str) -> int:
        """Tokens of a text without special tokens."""
        return len(self.tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    def premise_room(self, hypotheses: Sequence[str]) -> int:
        """Tokens left for a premise beside the longest of these hypotheses (special tokens included)."""
        longest = max((self.token_length(h) for h in hypotheses), default=0)
        return self.max_length - longest - self.special_tokens

    def probabilities(self, logits: Any) -> np.ndarray:
        """(n, 3) [entailment, neutral, contradiction] from the model's logits.

        A one-logit model's sigmoid is P(entailment) and its complement goes to
        contradiction; a two-label model has no neutral mass.
        """
        import torch

        logits = logits.float()
        out = np.zeros((logits.shape[0], 3), dtype=np.float32)
        if self.single_logit:
            p = torch.sigmoid(logits[:, 0]).cpu().numpy()
            out[:, ENTAILMENT], out[:, CONTRADICTION] = p, 1 - p
            return out
        probs = torch.softmax(logits, dim=-1).cpu().numpy()
        for index, column in self.columns.items():
            out[:, column] += probs[:, index]
        return out

    def encode(self, premises: Sequence[str], hypotheses: Sequence[str], stats: ScoreStats) -> list[dict[str, list]]:
        """Token ids per pair; a pair too long has its premise cut (counted), or its claim too if it must be."""
        encoded = self.tokenizer(list(premises), list(hypotheses), truncation=False, verbose=False,
                                 return_attention_mask=True)
        keys = [k for k in ("input_ids", "token_type_ids", "attention_mask") if k in encoded]
        rows = [{k: encoded[k][i] for k in keys} for i in range(len(premises))]
        for i, row in enumerate(rows):
            if len(row["input_ids"]) <= self.max_length:
                continue
            stats.pairs_truncated += 1
            claim_fits = self.token_length(hypotheses[i]) + self.special_tokens < self.max_length
            if not claim_fits:
                stats.claims_truncated += 1
            cut = self.tokenizer(premises[i], hypotheses[i], max_length=self.max_length, verbose=False,
                                 return_attention_mask=True, truncation="only_first" if claim_fits else "longest_first")
            rows[i] = {k: cut[k] for k in keys}
        return rows

    def pad(self, rows: Sequence[dict[str, list]]) -> dict[str, Any]:
        """One batch as tensors, padded to its longest pair on the tokenizer's padding side."""
        import torch

        width = max(len(r["input_ids"]) for r in rows)
        pad_values = {"input_ids": self.tokenizer.pad_token_id or 0, "token_type_ids": 0, "attention_mask": 0}
        left = self.tokenizer.padding_side == "left"
        batch = {}
        for key in rows[0]:
            filled = [([pad_values[key]] * (width - len(r[key])) + r[key]) if left
                      else (r[key] + [pad_values[key]] * (width - len(r[key]))) for r in rows]
            batch[key] = torch.tensor(filled, dtype=torch.long)
        return batch

    def score_pairs(self, premises: Sequence[str], hypotheses: Sequence[str], *, sort_by_length: bool = True,
                    stats: ScoreStats | None = None) -> np.ndarray:
        """Probabilities [entailment, neutral, contradiction] per pair, in input order.

        Pairs are sorted by token length and batched (``sort_by_length=False``:
        batches in input order, for comparison). ``stats``, if given, receives
        this call's counts; ``self.stats`` accumulates every call's.
        """
        import torch

        if len(premises) != len(hypotheses):
            raise ValueError(f"{len(premises)} premises but {len(hypotheses)} hypotheses")
        n = len(premises)
        result = np.zeros((n, 3), dtype=np.float32)
        call = ScoreStats()
        if n:
            rows = self.encode(premises, hypotheses, call)
            lengths = np.array([len(r["input_ids"]) for r in rows])
            order = np.argsort(lengths, kind="stable") if sort_by_length else np.arange(n)
            with self._lock, torch.inference_mode():
                for start in range(0, n, self.batch_size):
                    index = order[start:start + self.batch_size]
                    batch = {k: v.to(self.device) for k, v in self.pad([rows[i] for i in index]).items()}
                    result[index] = self.probabilities(self.model(**batch).logits)
                    call.batches += 1
                    call.padded_tokens += int(batch["input_ids"].numel())
                    call.real_tokens += int(lengths[index].sum())
            call.pairs_scored = n
        self.stats.add(call)
        if stats is not None:
            stats.add(call)
        return result


@lru_cache(maxsize=8)
def load_nli_model(name: str, batch_size: int = 16, max_length: int | None = None, int8: bool = False,
                   bf16: bool = False, backend: str = "torch") -> NLIModel:
    """One NLIModel per settings in a process; the weights are loaded once per (model, precision, backend)."""
    return NLIModel(name=name, batch_size=batch_size, max_length=max_length, int8=int8, bf16=bf16, backend=backend)
