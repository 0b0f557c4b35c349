"""Any sequence-classification NLI / consistency model as a batched (premise, hypothesis) scorer.

Labels are read from the model's ``config.id2label`` (checkpoints order them
differently), or from the ``labels`` a user names when the config says only
LABEL_0 / LABEL_1. All pairs of a call are tokenized at once, sorted by token
length and cut into batches, so batches carry little padding; a pair repeated
within the call is scored once; results come back in input order. Only the
premise is cut to fit (``only_first``), and never silently: every cut pair is
counted in ``ScoreStats``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from groundjudge.local_nli.backend_check import check_pairs, settle
from groundjudge.local_nli.batches import BatchPlan, ScoreStats, pad_rows, run_sorted
from groundjudge.local_nli.cls_only import cls_only_last_layer
from groundjudge.local_nli.devices import DeviceError, Placement, placement
from groundjudge.local_nli.inputs import token_count
from groundjudge.local_nli.model import ModelUnavailable, resolve_model, torch_threads
from groundjudge.local_nli.model_cache import load_pretrained, shared
from groundjudge.local_nli.settings import ModelSettings

log = logging.getLogger(__name__)

ENTAILMENT, NEUTRAL, CONTRADICTION = 0, 1, 2
"""Column order of the probabilities returned by ``score_pairs``."""

_CONTRADICTION_STEMS = ("contradict", "refut", "inconsistent", "not_supported", "unsupported", "hallucinat",
                        "unfaithful", "ungrounded", "not_entail", "non_entail")
_ENTAILMENT_STEMS = ("entail", "support", "consistent", "faithful", "grounded")
_NEUTRAL_STEMS = ("neutral", "not_enough", "unverifiable", "unknown")
# negative names are tried first: "not_supported" contains "support", "inconsistent" contains "consistent"
_STEMS = ((CONTRADICTION, _CONTRADICTION_STEMS), (NEUTRAL, _NEUTRAL_STEMS), (ENTAILMENT, _ENTAILMENT_STEMS))


class LabelMapError(ModelUnavailable, ValueError):
    """A model whose label names cannot be mapped to entailment / neutral / contradiction (the model is unusable
    as given, so a run stops with the message instead of failing every example)."""


def _column(name: str) -> int | None:
    key = str(name).lower().replace(" ", "_").replace("-", "_")
    for column, stems in _STEMS:
        if any(stem in key for stem in stems):
            return column
    return None


LABELS_HINT = ("name the checkpoint's label order with the judge's labels= setting, e.g. "
               "labels=[not_supported,supported] or labels=[contradiction,entailment] for a two-label model, "
               "labels=[entailment,neutral,contradiction] for a three-label one")
"""How to fix a model whose labels cannot be read (quoted in LabelMapError)."""


def map_labels(id2label: dict[int, str], labels: Sequence[str] | None = None) -> dict[int, int]:
    """Model label index -> column (ENTAILMENT / NEUTRAL / CONTRADICTION), by label name (case-insensitive).

    ``labels``, when given, overrides the config: the name of label 0, 1, ... in the checkpoint's order
    (for configs that say only LABEL_0 / LABEL_1). A two-label model is entailment vs not-entailment: its
    other label goes to CONTRADICTION even when named neutral / not_enough_info, so nothing is lost.
    """
    names = dict(id2label)
    if labels:
        if len(labels) != len(id2label):
            raise LabelMapError(f"labels={list(labels)} names {len(labels)} labels but the model has "
                                f"{len(id2label)} ({dict(id2label)}); {LABELS_HINT}")
        names = dict(enumerate(labels))
    mapping = {int(i): c for i, n in names.items() if (c := _column(n)) is not None}
    unmapped = {i: n for i, n in names.items() if int(i) not in mapping}
    source = f"labels={list(labels)}" if labels else f"the model's labels {dict(id2label)}"
    if unmapped or ENTAILMENT not in mapping.values():
        raise LabelMapError(
            f"cannot map {source} to entailment / neutral / contradiction "
            f"(unmapped: {unmapped or 'none'}, entailment found: {ENTAILMENT in mapping.values()}); {LABELS_HINT}")
    if len(names) == 2:
        if sorted(mapping.values()).count(ENTAILMENT) != 1:
            raise LabelMapError(f"{source}: a two-label model needs exactly one entailment-like label "
                                f"(got {names}); {LABELS_HINT}")
        mapping = {i: ENTAILMENT if c == ENTAILMENT else CONTRADICTION for i, c in mapping.items()}
    return mapping


@dataclass(frozen=True)
class _Backbone:
    """A loaded tokenizer + model, shared by every NLIModel of the same (path, placement, precision, backend)."""

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


BACKENDS = ("torch", "onnx")
"""``torch``: transformers on CUDA / MPS / CPU; ``onnx``: ONNX Runtime on CPU (see onnx_backend)."""


def _backbone(path: str, int8: bool, where: Placement, backend: str = "torch") -> _Backbone:
    """The shared backbone of a (path, int8, placement, backend), loaded once per process by one thread; a plain
    torch model is the very one every other local judge naming (path, placement) uses."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
    if backend == "onnx" and where.device != "cpu":
        raise DeviceError(f"backend=onnx runs on CPU only, not on {where.device}; use backend=torch there")
    quantise = int8 and where.device == "cpu"
    if int8 and not quantise:
        log.warning("int8 dynamic quantisation is for CPU; running %s unquantised on %s", path, where.device)
    if backend == "torch" and not quantise:
        loaded = load_pretrained("AutoModelForSequenceClassification", path, where)
        return _Backbone(tokenizer=loaded.tokenizer, model=loaded.model, device=where.device,
                         limit=_model_limit(loaded.tokenizer, loaded.model.config), lock=loaded.lock)
    return shared(("AutoModelForSequenceClassification", path, where.device, where.dtype, "int8" if quantise else "",
                   backend), lambda: _load_backbone(path, quantise, backend))


def _load_backbone(path: str, int8: bool, backend: str) -> _Backbone:
    """Load a tokenizer and an int8-quantised (CPU) or ONNX Runtime model."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.set_num_threads(torch_threads())
    tokenizer = AutoTokenizer.from_pretrained(path)
    if backend == "onnx":
        from groundjudge.local_nli.onnx_backend import OnnxClassifier

        log.info("loading NLI model from %s with ONNX Runtime (int8=%s)", path, int8)
        model = OnnxClassifier(path, int8)
    else:
        log.info("loading NLI model from %s on cpu, int8-quantised", path)
        model = AutoModelForSequenceClassification.from_pretrained(path).eval()
        model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear: _int8_qconfig()}, dtype=torch.qint8)
        cls_only_last_layer(model)
    return _Backbone(tokenizer=tokenizer, model=model, device="cpu", limit=_model_limit(tokenizer, model.config),
                     lock=threading.Lock())


def _int8_qconfig() -> Any:
    """One weight scale per output channel where the quantised engine has it (x86 / fbgemm / onednn): as fast as
    one per tensor, and the probabilities move about a third less (scripts/bench_nli_engine.py)."""
    import torch
    from torch.ao.quantization import default_dynamic_qconfig, per_channel_dynamic_qconfig

    return per_channel_dynamic_qconfig if torch.backends.quantized.engine in ("x86", "fbgemm", "onednn") \
        else default_dynamic_qconfig


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
    device: str = "auto"
    """``auto`` (cuda, else mps, else cpu), ``cpu``, ``cuda`` or ``mps`` (see groundjudge.local_nli.devices)."""
    dtype: str = "auto"
    """``auto`` (bfloat16 where the device computes it natively and the check set's verdicts agree with float32,
    see groundjudge.local_nli.backend_check; else float32), ``float32``, ``bfloat16`` (same as ``bf16=True``)
    or ``float16`` (GPU only). ``int8`` and ``backend=onnx`` run float32 weights under ``auto``."""
    labels: tuple[str, ...] = ()
    """The checkpoint's label names in index order, overriding its config (see :func:`map_labels`)."""
    deduplicate: bool = True
    """Score each distinct (premise, hypothesis) of a call once and copy its result to the repeats (False: score
    every pair, for comparison)."""
    stats: ScoreStats = field(default_factory=ScoreStats)
    """Counts over every call of this instance."""

    def __post_init__(self) -> None:
        where = self.settled(placement("cpu" if self.backend == "onnx" and self.device == "auto" else self.device,
                                       self.dtype, self.bf16))
        backbone = _backbone(resolve_model(self.name), self.int8, where, self.backend)
        self.tokenizer, self.model, self.device = backbone.tokenizer, backbone.model, backbone.device
        self.placement = where
        self._lock = backbone.lock
        self.max_length = min(self.max_length or backbone.limit, backbone.limit)
        self.special_tokens = self.tokenizer.num_special_tokens_to_add(pair=True)
        config = self.model.config
        self.single_logit = config.num_labels == 1
        if self.single_logit and self.labels and len(self.labels) != 1:
            raise LabelMapError(f"labels={list(self.labels)} names {len(self.labels)} labels but the model has one "
                                "logit (read as the sigmoid of entailment)")
        self.columns = {0: ENTAILMENT} if self.single_logit else map_labels(config.id2label, self.labels)

    def settled(self, where: Placement) -> Placement:
        """``where`` with ``dtype=auto`` decided: float32 for int8 and ONNX (their own weights), else the check
        of bfloat16 against float32 on the check set (argmax labels), run once per machine and model."""
        if where.auto and where.dtype != "float32" and (self.int8 or self.backend != "torch"):
            return Placement(where.device, "float32", auto=True, note=f"dtype=auto: {self.backend_name()} runs float32")
        path = resolve_model(self.name)

        def verdicts(dtype: str) -> list[int]:
            model = NLIModel(name=path, batch_size=self.batch_size, device=where.device, dtype=dtype,
                             labels=self.labels)
            return model.score_pairs(*check_pairs()).argmax(axis=1).tolist()

        return settle(where, path, f"nli-argmax:{list(self.labels)}", verdicts)

    def backend_name(self) -> str:
        """``int8``, ``onnx``, ``onnx int8`` or ``torch``."""
        return " ".join(part for part in ("onnx" if self.backend == "onnx" else "", "int8" if self.int8 else "")
                        if part) or self.backend

    def token_length(self, text: str) -> int:
        """Tokens of a text without special tokens."""
        return token_count(self.tokenizer, text)

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
        return pad_rows(rows, self.tokenizer.pad_token_id, self.tokenizer.padding_side == "left")

    def score_pairs(self, premises: Sequence[str], hypotheses: Sequence[str], *, sort_by_length: bool = True,
                    stats: ScoreStats | None = None) -> np.ndarray:
        """Probabilities [entailment, neutral, contradiction] per pair, in input order.

        Pairs are sorted by token length and batched (``sort_by_length=False``:
        batches in input order, for comparison); out of memory, a batch is halved and
        retried, and the smaller size kept. ``stats``, if given, receives this call's
        counts; ``self.stats`` accumulates every call's.
        """
        if len(premises) != len(hypotheses):
            raise ValueError(f"{len(premises)} premises but {len(hypotheses)} hypotheses")
        n = len(premises)
        result = np.zeros((n, 3), dtype=np.float32)
        call = ScoreStats()
        if n:
            rows = self.encode(premises, hypotheses, call)
            with self._lock:
                plan = BatchPlan.for_tokenizer(self.tokenizer, self.batch_size, self.device,
                                               sort_by_length=sort_by_length, deduplicate=self.deduplicate)
                scored, self.batch_size = run_sorted(
                    rows, lambda batch: self.probabilities(self.model(**batch).logits), plan, call)
            result = np.vstack(scored).astype(np.float32)
            call.pairs_scored = n
        self.stats.add(call)
        if stats is not None:
            stats.add(call)
        return result


NLI_SETTINGS = ModelSettings(batch_size=16)
"""The settings ``load_nli_model`` uses when given none: 16 pairs per forward pass, the rest as ModelSettings."""


@lru_cache(maxsize=8)
def load_nli_model(name: str, settings: ModelSettings = NLI_SETTINGS, *, max_length: int | None = None,
                   int8: bool = False, bf16: bool = False, backend: str = "torch") -> NLIModel:
    """One NLIModel per (name, settings, max_length, precision, backend) in a process; the weights are loaded
    once per (model, device, precision, backend) and shared with every other local judge naming them.
    ``max_length``, ``int8``, ``bf16`` and ``backend`` are as on :class:`NLIModel`."""
    return NLIModel(name=name, batch_size=settings.batch_size, max_length=max_length, int8=int8, bf16=bf16,
                    backend=backend, device=settings.device, dtype=settings.dtype, labels=tuple(settings.labels))
