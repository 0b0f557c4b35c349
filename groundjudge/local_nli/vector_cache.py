"""One bounded cache of sentence vectors per process, shared by every judge of a run.

Keyed by (the embedder's identity: model folder, device, dtype, backend; the text), so a document's sentences and
windows are embedded once whichever judges read them (``cosine``, ``nli``'s evidence selection, ``views``...) and
however the answers are chunked, and a vector made in bfloat16 is never handed to a float32 judge. The cache holds
at most :data:`MAX_BYTES` of vectors and texts (``GROUNDJUDGE_EMBED_CACHE_MB``, default 256): the least recently
used go first, so memory stays flat over a long run.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence

import numpy as np

ENV_SIZE = "GROUNDJUDGE_EMBED_CACHE_MB"
"""The environment variable bounding the cache, in MiB."""


def max_bytes() -> int:
    """The cache's bound in bytes: ``GROUNDJUDGE_EMBED_CACHE_MB`` MiB (0: no caching), else 256 MiB."""
    raw = os.environ.get(ENV_SIZE, "").strip()
    try:
        size = float(raw) if raw else 256.0
    except ValueError:
        size = -1.0
    if size < 0:
        raise ValueError(f"{ENV_SIZE}={raw!r} is not a size; use a number of MiB >= 0 (0 switches the cache off)")
    return int(size * 2**20)


class VectorCache:
    """A thread-safe least-recently-used map (identity, text) -> vector, bounded in bytes."""

    def __init__(self, limit: int | None = None):
        self.limit = limit
        """Bytes held at most (None: :func:`max_bytes`, read when first needed)."""
        self._items: OrderedDict[tuple[Hashable, str], np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @staticmethod
    def _size(key: tuple[Hashable, str], vector: np.ndarray) -> int:
        return int(vector.nbytes) + len(key[1]) + 64

    def get_many(self, identity: Hashable, texts: Sequence[str]) -> list[np.ndarray | None]:
        """The cached vector of each text (None where there is none), each found one made most recent."""
        found: list[np.ndarray | None] = []
        with self._lock:
            for text in texts:
                vector = self._items.get((identity, text))
                if vector is not None:
                    self._items.move_to_end((identity, text))
                found.append(vector)
            hit = sum(v is not None for v in found)
            self.hits += hit
            self.misses += len(found) - hit
        return found

    def put_many(self, identity: Hashable, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Keep a vector per text (copied, so a batch's array is not kept alive by one row), evicting the least
        recently used beyond the bound."""
        limit = max_bytes() if self.limit is None else self.limit
        with self._lock:
            for text, vector in zip(texts, vectors):
                key = (identity, text)
                row = np.array(vector, dtype=np.float32, copy=True)
                size = self._size(key, row)
                if size > limit:
                    continue
                if key in self._items:
                    self._bytes -= self._size(key, self._items.pop(key))
                self._items[key] = row
                self._bytes += size
            while self._bytes > limit and self._items:
                old_key, old = self._items.popitem(last=False)
                self._bytes -= self._size(old_key, old)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def nbytes(self) -> int:
        """Bytes held now (vectors, texts and a fixed overhead per entry)."""
        return self._bytes

    def clear(self) -> None:
        """Forget every vector and the hit counts."""
        with self._lock:
            self._items.clear()
            self._bytes = 0
            self.hits = self.misses = 0


SENTENCE_VECTORS = VectorCache()
"""The process's cache, used by every engine embedder."""
