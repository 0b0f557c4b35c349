"""Evidence selection: score each claim only against its top-k windows by a cheap similarity.

Two rankers, picked with the judges' ``evidence`` setting:

* ``embedding`` (default): cosine of sentence embeddings (the packaged MiniLM
  unless ``evidence_model`` names another), made by the engine embedder
  (:mod:`groundjudge.local_nli.embedder`) on the judge's device and dtype. Every
  window and claim vector is kept in the process's shared vector cache, so the 17
  hypotheses of one contract embed it once, whichever judges read it.
  On ContractNLI (128-token windows) it finds a gold evidence span among the
  top 5 windows of 78% of hypotheses, against 34% for TF-IDF.
* ``tfidf``: word 1-2-gram TF-IDF fitted per example: no model at all.

The cost of NLI then grows with claims x k instead of claims x windows, which
is what makes long documents (contracts) affordable on a CPU.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from groundjudge.local_nli.embedder import EmbedderSpec, embed
from groundjudge.local_nli.model import DEFAULT_EMBEDDER

EvidenceMethod = Literal["embedding", "tfidf"]
EVIDENCE_METHODS: tuple[str, ...] = ("embedding", "tfidf")


class LRUCache:
    """A small thread-safe least-recently-used cache (values made outside the lock)."""

    def __init__(self, size: int = 64):
        self.size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def peek(self, key: Hashable) -> Any:
        """The cached value of ``key`` or None (without making it)."""
        with self._lock:
            return self._items.get(key)

    def get_or_make(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The cached value of ``key``, made (and cached) on a miss."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = make()
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value


Embedder = str | EmbedderSpec
"""An embedder named (hub name or folder: device and dtype ``auto``) or fully specified (its placement too)."""


def embed_context(texts: Sequence[str], model: Embedder = DEFAULT_EMBEDDER) -> np.ndarray:
    """Unit-length embeddings (n, d) of one context's windows or sentences (each cached in the shared cache)."""
    return embed(texts, model)


def embed_claims(claims: Sequence[str], model: Embedder = DEFAULT_EMBEDDER) -> np.ndarray:
    """Unit-length embeddings (n, d) of claims, each cached (claims such as contract hypotheses repeat)."""
    return embed(claims, model) if claims else np.zeros((0, 1))


def similarity(claims: Sequence[str], windows: Sequence[str], method: EvidenceMethod = "embedding",
               model: Embedder = DEFAULT_EMBEDDER) -> np.ndarray:
    """(claims x windows) similarity by the chosen method (cosine in both cases)."""
    if method == "embedding":
        return embed_claims(claims, model) @ embed_context(windows, model).T
    if method != "tfidf":
        raise ValueError(f"unknown evidence method {method!r}; known: {', '.join(EVIDENCE_METHODS)}")
    # imported here: scikit-learn takes ~1 s to import, and a process that judges only with LLMs (a Ray actor, a
    # served LLM judge) imports this module without ever ranking by TF-IDF
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, token_pattern=r"(?u)\b\w+\b")
    try:
        matrix = vectorizer.fit_transform(list(windows) + list(claims))
    except ValueError:   # no word at all (punctuation only): every window is as good as any other
        return np.zeros((len(claims), len(windows)))
    return (matrix[len(windows):] @ matrix[:len(windows)].T).toarray()


def top_k_windows(claims: Sequence[str], windows: Sequence[str], k: int, method: EvidenceMethod = "tfidf",
                  model: Embedder = DEFAULT_EMBEDDER) -> list[list[int]]:
    """For each claim, the indices of its k most similar windows, best first (ties: earlier first)."""
    return _top_k(len(claims), len(windows), k, lambda: similarity(claims, windows, method, model))


def _top_k(claims: int, windows: int, k: int, scores: Callable[[], np.ndarray]) -> list[list[int]]:
    """Each claim's k best windows by ``scores()`` (claims x windows; asked only when there is a choice)."""
    if not windows or k <= 0:
        return [[] for _ in range(claims)]
    if windows <= k:
        return [list(range(windows)) for _ in range(claims)]
    return [[int(i) for i in np.argsort(-row, kind="stable")[:k]] for row in scores()]


@dataclass(frozen=True)
class Selection:
    """The (claim, window) pairs to score for one example, and what selection saved."""

    pairs: tuple[tuple[int, int], ...]
    """(claim index, window index), grouped by claim, best window first."""
    pairs_all: int
    """Pairs scoring every claim against every window would have taken."""

    @property
    def pairs_scored(self) -> int:
        """Pairs kept: at most claims x k."""
        return len(self.pairs)

    def rows_of(self, claim: int) -> list[int]:
        """Indices into ``pairs`` (and into the scores of ``pairs``) that belong to one claim."""
        return [row for row, (c, _) in enumerate(self.pairs) if c == claim]


def select_evidence(claims: Sequence[str], windows: Sequence[str], k: int, method: EvidenceMethod = "tfidf",
                    model: Embedder = DEFAULT_EMBEDDER) -> Selection:
    """The top-k windows of every claim as one flat list of pairs (to score in one batched call)."""
    return _selection(top_k_windows(claims, windows, k, method, model), len(claims), len(windows))


def _selection(chosen: list[list[int]], claims: int, windows: int) -> Selection:
    """Each claim's chosen windows as one flat list of (claim, window) pairs."""
    return Selection(pairs=tuple((c, w) for c, picks in enumerate(chosen) for w in picks), pairs_all=claims * windows)


def select_evidence_many(items: Sequence[tuple[Sequence[str], Sequence[str]]], k: int,
                         method: EvidenceMethod = "tfidf", model: Embedder = DEFAULT_EMBEDDER) -> list[Selection]:
    """:func:`select_evidence` of many answers' (claims, windows) at once: with ``method='embedding'`` every claim
    and window of every answer is embedded in one embedder call (length-sorted batches, each distinct text once)
    instead of two calls per answer."""
    if method != "embedding":
        return [select_evidence(claims, windows, k, method, model) for claims, windows in items]
    texts = [text for claims, windows in items if len(windows) > k > 0 for text in (*claims, *windows)]
    vectors = embed(texts, model) if texts else None
    out, offset = [], 0
    for claims, windows in items:
        def scores(at: int = offset, n: int = len(claims), m: int = len(windows)) -> np.ndarray:
            return vectors[at:at + n] @ vectors[at + n:at + n + m].T

        out.append(_selection(_top_k(len(claims), len(windows), k, scores), len(claims), len(windows)))
        if len(windows) > k > 0:
            offset += len(claims) + len(windows)
    return out
