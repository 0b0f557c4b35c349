"""Keep oneDNN's per-shape caches from growing with a run: each new input shape of a model on CPU leaves a
primitive in oneDNN's primitive cache and another in PyTorch's ideep cache (``ONEDNN_PRIMITIVE_CACHE_CAPACITY``
and ``LRU_CACHE_CAPACITY``, 1,024 entries each by default). The engine batches length-sorted texts, so the shapes
(batch size x tokens) vary with every call: measured on all-MiniLM-L6-v2 in float32, ~2 MB of memory per new shape
stayed allocated (the embedder alone grew 0.58 -> 0.68 GB over 1,200 answers, a 20,000-answer ``cosine`` run
~0.3 GB more than a 2,000-answer one). With both caches bounded the memory stops growing once they are full.
Held to one entry (0 and 1) every call creates its primitives again, which cost 12-17% of one engine call; 16
entries keep most of the speed at a fixed ~0.1 GB (results/perf: one ``nli`` call over the legal sample 5.02 s at
one entry, 4.29 s at 16, 4.08 s at 64, 4.31 s at 1,024; peak RSS 0.72 / 0.79 / 1.08 / 1.05 GB).

:func:`bound_shape_caches` sets both variables when the user has not: they are read when the first primitive is
made, so it runs when :mod:`groundjudge.local_nli` is imported, before any model is loaded. A user who prefers the
speed sets them (e.g. ``ONEDNN_PRIMITIVE_CACHE_CAPACITY=1024 LRU_CACHE_CAPACITY=1024``) in the environment.
"""

from __future__ import annotations

import os

CAPACITIES = {"ONEDNN_PRIMITIVE_CACHE_CAPACITY": "16", "LRU_CACHE_CAPACITY": "16"}
"""The bounds set by default: 16 shapes each (ideep's cache needs at least one entry: 0 crashes it)."""


def bound_shape_caches() -> dict[str, str]:
    """Set each of :data:`CAPACITIES` in the environment unless it is set already; returns the values in force."""
    return {name: os.environ.setdefault(name, value) for name, value in CAPACITIES.items()}
