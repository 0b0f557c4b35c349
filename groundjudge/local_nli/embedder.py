"""Sentence embeddings on the engine of the cross-encoders: what ``cosine``, ``views`` and evidence selection embed.

A :class:`SentenceEmbedder` runs a sentence-transformers model (by default the packaged all-MiniLM-L6-v2) the way
:class:`~groundjudge.local_nli.nli_model.NLIModel` runs a cross-encoder: the texts of a call not yet in the shared
vector cache (:mod:`groundjudge.local_nli.vector_cache`) are tokenized in one call, each distinct text once, sorted
by length and cut into batches (:func:`~groundjudge.local_nli.batches.run_sorted`), on the engine's backends:
transformers in float32 (oneDNN-packed linear layers on CPU) or bfloat16, int8-quantised on CPU, or ONNX Runtime
float32 / int8 (:mod:`groundjudge.local_nli.onnx_encoder`); ``dtype=auto`` keeps bfloat16 only where its cosine
verdicts on the shipped check set agree with float32's (:mod:`groundjudge.local_nli.backend_check`). Token
vectors are pooled as the model's own sentence-transformers config says (:mod:`groundjudge.local_nli.pooling`)
and every vector comes back unit length (the judges compare them by dot product), so in float32 the vectors are
``SentenceTransformer.encode(normalize_embeddings=True)``'s up to float rounding.
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
from groundjudge.local_nli.batches import BatchPlan, ScoreStats, accepted_inputs, run_sorted, to_row
from groundjudge.local_nli.devices import DeviceError, Placement, placement
from groundjudge.local_nli.model import DEFAULT_EMBEDDER, resolve_model, torch_threads
from groundjudge.local_nli.model_cache import load_pretrained, shared
from groundjudge.local_nli.pooling import PoolingConfig, pool, read_pooling
from groundjudge.local_nli.vector_cache import SENTENCE_VECTORS, VectorCache

log = logging.getLogger(__name__)

BACKENDS = ("torch", "onnx")
"""``torch``: transformers on CUDA / MPS / CPU; ``onnx``: ONNX Runtime on CPU."""
CHECK_RULE = "embedder-cosine>=0.5"
"""How ``dtype=auto`` reads an embedder's verdict on a check-set pair: cosine(premise, hypothesis) >= 0.5 (the
``cosine`` judge's default threshold)."""


@dataclass(frozen=True)
class EmbedderSpec:
    """Which embedder, where and how: hashable, so judges naming the same one share a loaded engine."""

    name: str = DEFAULT_EMBEDDER
    """Hub name or local folder of a sentence-transformers model."""
    device: str = "auto"
    dtype: str = "auto"
    backend: str = "torch"
    int8: bool = False
    batch_size: int = 64


def spec_for(model: str | EmbedderSpec, where: Placement | None = None) -> EmbedderSpec:
    """``model`` as a spec: a name runs on ``where``'s device at its dtype (``auto`` when ``where`` chose it by
    ``dtype=auto``), so evidence selection follows the judge's placement; without ``where``, device and dtype
    ``auto``."""
    if isinstance(model, EmbedderSpec):
        return model
    if where is None:
        return EmbedderSpec(name=model)
    return EmbedderSpec(name=model, device=where.device, dtype="auto" if where.auto else where.dtype)


@dataclass(frozen=True)
class _Encoder:
    """A loaded tokenizer + transformer (token vectors), shared per (path, placement, backend)."""

    tokenizer: Any
    model: Any
    lock: threading.Lock


def _encoder(path: str, where: Placement, backend: str, int8: bool) -> _Encoder:
    """The shared transformer of a (path, placement, backend, int8), loaded once per process."""
    if backend == "torch" and not int8:
        loaded = load_pretrained("AutoModel", path, where)
        return _Encoder(tokenizer=loaded.tokenizer, model=loaded.model, lock=loaded.lock)
    return shared(("AutoModel", path, where.device, where.dtype, "int8" if int8 else "", backend),
                  lambda: _load_encoder(path, backend, int8))


def _load_encoder(path: str, backend: str, int8: bool) -> _Encoder:
    """A tokenizer and an ONNX Runtime (float32 / int8) or int8-quantised torch transformer on CPU."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from groundjudge.local_nli.nli_model import _int8_qconfig

    torch.set_num_threads(torch_threads())
    tokenizer = AutoTokenizer.from_pretrained(path)
    if backend == "onnx":
        from groundjudge.local_nli.onnx_encoder import OnnxEncoder

        log.info("loading embedder %s with ONNX Runtime (int8=%s)", path, int8)
        return _Encoder(tokenizer=tokenizer, model=OnnxEncoder(path, int8), lock=threading.Lock())
    log.info("loading embedder %s on cpu, int8-quantised", path)
    model = AutoModel.from_pretrained(path).eval()
    model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear: _int8_qconfig()}, dtype=torch.qint8)
    return _Encoder(tokenizer=tokenizer, model=model, lock=threading.Lock())


@dataclass
class SentenceEmbedder:
    """A loaded sentence embedder: ``embed(texts)`` -> (n, dim) unit vectors, cached per text."""

    name: str = DEFAULT_EMBEDDER
    batch_size: int = 64
    device: str = "auto"
    """``auto``, ``cpu``, ``cuda`` or ``mps`` (see groundjudge.local_nli.devices)."""
    dtype: str = "auto"
    """``auto`` (bfloat16 where native and its check-set verdicts agree with float32's), ``float32``,
    ``bfloat16`` or ``float16`` (GPU only); ``int8`` and ``backend=onnx`` run float32 weights under ``auto``."""
    backend: str = "torch"
    int8: bool = False
    """Dynamically quantised int8 linear layers (CPU; with ``backend=onnx`` onnxruntime's own quantisation)."""
    cache: VectorCache | None = SENTENCE_VECTORS
    """Where vectors are kept across calls and judges (None: nothing kept; the dtype=auto check uses that)."""
    stats: ScoreStats = field(default_factory=ScoreStats)
    """Counts over every call: ``pairs_scored`` = texts run through the model, ``duplicates`` = texts of a call
    not run (repeated in it, or already cached)."""

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise DeviceError(f"unknown backend {self.backend!r}; use one of: {', '.join(BACKENDS)}")
        if self.backend == "onnx" and self.device not in ("auto", "cpu"):
            raise DeviceError(f"backend=onnx runs on CPU only, not on {self.device}; use backend=torch there")
        self.path = resolve_model(self.name)
        where = self.settled(placement("cpu" if self.backend == "onnx" else self.device, self.dtype))
        if self.int8 and where.device != "cpu":
            log.warning("int8 dynamic quantisation is for CPU; running %s unquantised on %s", self.name, where.device)
            self.int8 = False
        encoder = _encoder(self.path, where, self.backend, self.int8)
        self.tokenizer, self.model, self._lock, self.placement = encoder.tokenizer, encoder.model, encoder.lock, where
        self.pooling: PoolingConfig = read_pooling(self.path)
        limit = self.tokenizer.model_max_length if 0 < self.tokenizer.model_max_length < 100_000 else 512
        self.max_length = min(self.pooling.max_seq_length or limit, limit)
        self.inputs = accepted_inputs(self.model)
        self.identity = (self.path, where.device, where.dtype, self.backend_name())
        """What makes two embedders' vectors interchangeable: the vector cache's key besides the text."""

    def settled(self, where: Placement) -> Placement:
        """``where`` with ``dtype=auto`` decided: float32 for int8 and ONNX, else bfloat16 only when the cosine
        verdicts of the check set's pairs agree with float32's (once per machine and model)."""
        if where.auto and where.dtype != "float32" and (self.int8 or self.backend != "torch"):
            return Placement(where.device, "float32", auto=True, note=f"dtype=auto: {self.backend_name()} runs float32")

        def verdicts(dtype: str) -> list[bool]:
            probe = SentenceEmbedder(name=self.path, batch_size=self.batch_size, device=where.device, dtype=dtype,
                                     cache=None)
            premises, hypotheses = check_pairs()
            return [bool(c >= 0.5) for c in (probe.embed(premises) * probe.embed(hypotheses)).sum(axis=1)]

        return settle(where, self.path, CHECK_RULE, verdicts)

    def backend_name(self) -> str:
        """``torch``, ``int8``, ``onnx`` or ``onnx int8``."""
        return " ".join(part for part in ("onnx" if self.backend == "onnx" else "", "int8" if self.int8 else "")
                        if part) or self.backend

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length vectors (n, dim) of the texts, in input order: each distinct text not cached is embedded
        once (all of them in one tokenizer call and length-sorted batches), then kept in the shared cache."""
        texts = list(texts)
        unique = list(dict.fromkeys(texts))
        found = self.cache.get_many(self.identity, unique) if self.cache is not None else [None] * len(unique)
        missing = [text for text, vector in zip(unique, found) if vector is None]
        computed = self._compute(missing) if missing else None
        if computed is not None and self.cache is not None:
            self.cache.put_many(self.identity, missing, computed)
        with self._lock:
            self.stats.duplicates += len(texts) - len(missing)
        made = dict(zip(missing, computed)) if computed is not None else {}
        vectors = {text: vector if vector is not None else made[text] for text, vector in zip(unique, found)}
        if not texts:
            return np.zeros((0, self.dimension()), dtype=np.float32)
        return np.vstack([vectors[text] for text in texts]).astype(np.float32, copy=False)

    def _compute(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of distinct texts: one tokenizer call, length-sorted batches, pooled as the model says."""
        encoded = self.tokenizer(list(texts), truncation=True, max_length=self.max_length, verbose=False,
                                 return_attention_mask=True)
        rows = [to_row(encoded, self.inputs, i) for i in range(len(texts))]
        for row in rows:   # pooling reads the mask, whether or not the model's forward takes it
            row.setdefault("attention_mask", [1] * len(row["input_ids"]))
        call = ScoreStats()

        def forward(batch: dict[str, Any]) -> Any:
            feed = {k: v for k, v in batch.items() if k in self.inputs}
            vectors = pool(self.model(**feed).last_hidden_state, batch["attention_mask"], self.pooling)
            return vectors.cpu().numpy() if self.pooling.normalize else _unit(vectors).cpu().numpy()

        with self._lock:
            plan = BatchPlan.for_tokenizer(self.tokenizer, self.batch_size, self.placement.device)
            out, self.batch_size = run_sorted(rows, forward, plan, call)
            call.pairs_scored, call.duplicates = len(texts), 0   # texts run (a repeat was left out by embed)
            self.stats.add(call)
        return np.vstack(out).astype(np.float32)

    def dimension(self) -> int:
        """Length of one vector."""
        return int(self.model.config.hidden_size) * len(self.pooling.modes)


def _unit(vectors: Any) -> Any:
    """Rows scaled to unit length (the judges compare vectors by dot product)."""
    import torch

    return torch.nn.functional.normalize(vectors, p=2, dim=1)


@lru_cache(maxsize=16)
def sentence_embedder(model: str | EmbedderSpec = DEFAULT_EMBEDDER) -> SentenceEmbedder:
    """One engine embedder per spec in a process (its weights shared with every embedder naming the same model,
    placement and backend; its vectors with every judge, through the shared vector cache)."""
    spec = spec_for(model)
    return SentenceEmbedder(name=spec.name, batch_size=spec.batch_size, device=spec.device, dtype=spec.dtype,
                            backend=spec.backend, int8=spec.int8)


def embed(texts: Sequence[str], model: str | EmbedderSpec = DEFAULT_EMBEDDER) -> np.ndarray:
    """Unit-length vectors (n, dim) of ``texts`` by the embedder ``model`` names (a hub name or folder, or a spec)."""
    return sentence_embedder(model).embed(texts)
