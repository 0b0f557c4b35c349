"""``--local-memory``: the memory a chunk of answers may take in a local judge's model, and the chunk size it allows.

A chunk's activations are estimated, as an upper bound, as if all its pairs went through the model at once:

    answers x pairs per answer x tokens per pair x hidden size x layers x 4 bytes (float32)

with the model's hidden size and layers read from its ``config.json`` (BERT-style ``hidden_size`` /
``num_hidden_layers``, T5-style ``d_model`` / ``num_layers`` + ``num_decoder_layers``; a model whose config cannot
be read counts as BERT-base, 768 x 12), tokens per pair from the judge's settings (``max_length``, else its evidence
window plus a claim, else 256), and pairs per answer the most any answer has needed so far (the judges' own
``answer_pairs`` count), before the first chunk one claim against the judge's ``top_k`` windows. The chunk size is
then ``min(--local-chunk, budget // per answer)``, re-computed before every chunk, so it falls when long answers come.
A budget that cannot hold one answer of one claim is refused in one line, before anything is judged. The model's
weights are not part of the budget: they are loaded once, whatever the chunk size.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ByteSize, TypeAdapter, ValidationError

from groundjudge.errors import UsageError
from groundjudge.runs.chunk_option import DEFAULT_LOCAL_CHUNK, check_local_chunk

LOCAL_MEMORY_FLAG = "--local-memory"
"""The flag (and, as ``local_memory``, the run option) of the budget."""

BYTES_PER_VALUE = 4
"""float32 activations (bfloat16 would take half: the estimate stays an upper bound)."""

CLAIM_TOKENS = 64
"""Tokens a claim adds to its evidence window in a pair."""

TOKENS_PER_WORD = 1.4
"""Sub-word tokens per word, for a judge that sets its chunks in words (MiniCheck's ``chunk_words``)."""

DEFAULT_PAIR_TOKENS = 256
"""Tokens per input of a judge that sets neither a length nor a window (cosine's sentences)."""

BERT_BASE = (768, 12)
"""(hidden size, layers) assumed for a model whose config cannot be read."""

_SIZES = TypeAdapter(ByteSize)


def parse_memory(value: Any) -> int | None:
    """``value`` (``2GB``, ``512MiB``, ``1.5 GB``, a number of bytes) in bytes; None stays None; anything else is a
    UsageError naming the flag and the allowed values."""
    if value is None:
        return None
    try:
        size = int(_SIZES.validate_python(value))
    except ValidationError:
        size = 0
    if isinstance(value, bool) or size < 1:
        raise UsageError(f"{LOCAL_MEMORY_FLAG} (local_memory) must be a size above 0 such as 512MB, 2GB or 1.5GiB "
                         f"(units B, KB, MB, GB, KiB, MiB, GiB); got {value!r}")
    return size


@lru_cache(maxsize=32)
def model_shape(model: str) -> tuple[int, int]:
    """(hidden size, layers) of a local model, from its config.json (BERT-base's when it cannot be read)."""
    try:
        from groundjudge.local_nli.model import resolve_model

        config = json.loads((Path(resolve_model(model)) / "config.json").read_text(encoding="utf-8"))
    except Exception:  # noqa: BLE001 - an unreadable config falls back to the documented assumption
        return BERT_BASE
    hidden = config.get("hidden_size") or config.get("d_model") or BERT_BASE[0]
    layers = config.get("num_hidden_layers") or (config.get("num_layers", 0) + config.get("num_decoder_layers", 0))
    return int(hidden), int(layers or BERT_BASE[1])


def pair_tokens(judge: Any) -> int:
    """Tokens of one model input of ``judge``: its ``max_length``, else its window plus a claim, else 256."""
    if getattr(judge, "max_length", None):
        return int(judge.max_length)
    if getattr(judge, "window_tokens", None):
        return int(judge.window_tokens) + CLAIM_TOKENS
    if getattr(judge, "chunk_words", None):
        return int(judge.chunk_words * TOKENS_PER_WORD) + CLAIM_TOKENS
    return DEFAULT_PAIR_TOKENS


def pair_bytes(judge: Any) -> int:
    """Estimated activation bytes of one input pair of ``judge``'s model (tokens x hidden x layers x 4)."""
    hidden, layers = model_shape(str(getattr(judge, "model", "") or ""))
    return pair_tokens(judge) * hidden * layers * BYTES_PER_VALUE


def _readable(size: int) -> str:
    return ByteSize(size).human_readable(decimal=True)


@dataclass
class ChunkSizer:
    """The chunk size of one judge under a budget, re-computed from the answers seen (see the module)."""

    judge: Any
    spec: str
    largest: int = DEFAULT_LOCAL_CHUNK
    budget: int | None = None
    pairs: int = 1
    """The most pairs one answer has needed so far (one claim x top_k before any answer is seen)."""

    def __post_init__(self) -> None:
        self.pairs = max(1, int(getattr(self.judge, "top_k", 1) or 1))
        self.per_pair = pair_bytes(self.judge) if self.budget is not None else 0
        if self.budget is not None and self.budget < self.pairs * self.per_pair:
            raise UsageError(
                f"{LOCAL_MEMORY_FLAG} (local_memory) {_readable(self.budget)} cannot hold one answer of judge "
                f"{self.spec!r} (about {_readable(self.pairs * self.per_pair)}: {self.pairs} pair(s) x {pair_tokens(self.judge)} "
                f"tokens x its model's hidden size and layers x 4 bytes); give at least that much, or leave it out "
                f"(allowed: a size above 0 such as 512MB or 2GB)")

    def size(self) -> int:
        """The size of the next chunk: ``largest``, or fewer where the budget allows fewer (at least one)."""
        if self.budget is None:
            return self.largest
        return max(1, min(self.largest, self.budget // (self.pairs * self.per_pair)))

    def observe(self, timings: Iterable[dict[str, float]]) -> None:
        """Take the answers just scored into account (their ``answer_pairs``, where the judge counts them)."""
        seen = [int(t.get("answer_pairs", 0)) for t in timings]
        self.pairs = max([self.pairs, *seen])


@dataclass(frozen=True)
class LocalChunks:
    """How a run sizes local judges' chunks: at most ``size`` answers, fewer where ``memory`` (bytes) says."""

    size: int = DEFAULT_LOCAL_CHUNK
    memory: int | None = None

    def sizer(self, judge: Any, spec: str) -> ChunkSizer:
        """The sizer of one judge's chunks (raises the one-line refusal when the budget cannot hold an answer)."""
        return ChunkSizer(judge=judge, spec=spec, largest=check_local_chunk(self.size), budget=self.memory)


def as_local_chunks(value: int | LocalChunks) -> LocalChunks:
    """A chunk size (``--local-chunk``) or a :class:`LocalChunks` as a :class:`LocalChunks` (the size checked)."""
    if isinstance(value, LocalChunks):
        check_local_chunk(value.size)
        return value
    return LocalChunks(size=check_local_chunk(value))


def check_budget(tasks: Sequence[Any], chunking: LocalChunks, batched: Any) -> None:
    """Refuse, before anything is judged, a budget that cannot hold one answer of a judge that is chunked
    (``batched(judge)`` true)."""
    if chunking.memory is None:
        return
    for task in tasks:
        if batched(task.judge):
            chunking.sizer(task.judge, task.spec)
