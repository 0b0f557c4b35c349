"""One bounded cache of sentence vectors per process, shared by every judge of a run.

Keyed by (the embedder's identity: model folder, device, dtype, backend; the text), so a document's sentences and
windows are embedded once whichever judges read them (``cosine``, ``nli``'s evidence selection, ``views``...) and
however the answers are chunked, and a vector made in bfloat16 is never handed to a float32 judge. The cache holds
at most :func:`max_bytes` (``GROUNDJUDGE_EMBED_CACHE_MB``, default :data:`DEFAULT_MB` MiB), counted as the memory
its entries keep alive (each vector's and text's Python object, the key and the map's slot: ~1.9 KB per MiniLM
sentence, where the vector alone is 1.5 KB); the least recently used go first.

The default holds ~34,000 MiniLM sentences: more than the answers a run groups by document at once
(:data:`~groundjudge.runs.local_chunks.GROUPING_WINDOW` chunks, 2,048 answers at the default chunk size, ~20,000
sentences of short documents), so a document's sentences are embedded once within a run's grouping window, and once
for all judges of a run whose distinct sentences fit. It is also what a long run's memory grows by before the cache
is full: a larger bound (256 MiB before) made a run of 20,000 answers take ~0.3 GB more than one of 2,000.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence

import numpy as np

ENV_SIZE = "GROUNDJUDGE_EMBED_CACHE_MB"
"""The environment variable bounding the cache, in MiB."""
DEFAULT_MB = 64
"""The bound when ``GROUNDJUDGE_EMBED_CACHE_MB`` is not set (see the module docstring)."""
ENTRY_OVERHEAD = 160
"""Bytes an entry keeps alive besides its vector and text objects: its (identity, text) key tuple (56) and its
slot in the ordered map (hash table entry, index and order links, with the table's spare room: ~100)."""


def max_bytes() -> int:
    """The cache's bound in bytes: ``GROUNDJUDGE_EMBED_CACHE_MB`` MiB (0: no caching), else :data:`DEFAULT_MB`."""
    raw = os.environ.get(ENV_SIZE, "").strip()
    try:
        size = float(raw) if raw else float(DEFAULT_MB)
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
    def entry_bytes(text: str, vector: np.ndarray) -> int:
        """The memory one entry keeps alive: the vector (array object and its data), the text, the key and the
        map's slot (:data:`ENTRY_OVERHEAD`)."""
        return sys.getsizeof(vector) + sys.getsizeof(text) + ENTRY_OVERHEAD

    @classmethod
    def _size(cls, key: tuple[Hashable, str], vector: np.ndarray) -> int:
        return cls.entry_bytes(key[1], vector)

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
        """Bytes held now, as :meth:`entry_bytes` counts them."""
        return self._bytes

    def clear(self) -> None:
        """Forget every vector and the hit counts."""
        with self._lock:
            self._items.clear()
            self._bytes = 0
            self.hits = self.misses = 0


SENTENCE_VECTORS = VectorCache()
"""The process's cache, used by every engine embedder."""
