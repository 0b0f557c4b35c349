"""Per-answer demonstrations: the pool entries whose answers are nearest the judged answer (cosine of sentence
embeddings, by default the packaged all-MiniLM-L6-v2 the cosine judge uses). Answers are embedded by the engine
embedder (:mod:`groundjudge.local_nli.embedder`, its shared vector cache) in float32, so the demonstrations an answer
gets, and with them the prompt, do not depend on the machine's precision. The pool's embeddings are computed once
per process and pool."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence

from groundjudge.judges.demonstrations.pool import Demonstration

_LOCK = threading.Lock()
_POOL_VECTORS: dict[tuple[str, str], object] = {}
_MAX_POOLS = 8


def _pool_key(pool: Sequence[Demonstration]) -> str:
    digest = hashlib.sha256()
    for demo in pool:
        digest.update(f"{demo.id}\0{demo.answer}\0".encode("utf-8"))
    return digest.hexdigest()


EMBEDDER_DTYPE = "float32"
"""The neighbours' precision (not ``auto``): the same demonstrations, hence the same prompts, on every machine."""


def _embed(texts: list[str], embedder: str):
    """Unit vectors of ``texts`` by the engine embedder ``embedder`` names (hub name or folder), in float32."""
    from groundjudge.local_nli.embedder import EmbedderSpec, sentence_embedder

    return sentence_embedder(EmbedderSpec(name=embedder, dtype=EMBEDDER_DTYPE)).embed(texts)


def pool_vectors(pool: Sequence[Demonstration], embedder: str):
    """The unit embeddings of the pool's answers (one row per entry), cached per pool and embedder."""
    key = (embedder, _pool_key(pool))
    with _LOCK:
        if key not in _POOL_VECTORS:
            if len(_POOL_VECTORS) >= _MAX_POOLS:
                _POOL_VECTORS.pop(next(iter(_POOL_VECTORS)))
            _POOL_VECTORS[key] = _embed([demo.answer for demo in pool], embedder)
        return _POOL_VECTORS[key]


def nearest(pool: Sequence[Demonstration], answer: str, k: int, embedder: str) -> list[Demonstration]:
    """The ``k`` entries of ``pool`` whose answers are most similar to ``answer``, most similar first (ties:
    pool order)."""
    import numpy as np

    vectors = pool_vectors(pool, embedder)
    query = _embed([answer], embedder)[0]
    similarity = vectors @ query
    order = np.argsort(-similarity, kind="stable")[:k]
    return [pool[int(i)] for i in order]
