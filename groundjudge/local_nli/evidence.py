"""Evidence selection: score each claim only against its top-k windows by cheap lexical similarity.

A TF-IDF model (word unigrams and bigrams) is fitted per example on its
windows and claims; each claim keeps the k windows with the highest cosine.
The cost of NLI then grows with claims x k instead of claims x windows, which
is what makes long documents (contracts) affordable on a CPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer


def top_k_windows(claims: Sequence[str], windows: Sequence[str], k: int) -> list[list[int]]:
    """For each claim, the indices of its k most similar windows, best first (TF-IDF cosine, word 1-2-grams)."""
    if not windows or k <= 0:
        return [[] for _ in claims]
    if len(windows) <= k:
        return [list(range(len(windows))) for _ in claims]
    vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, token_pattern=r"(?u)\b\w+\b")
    try:
        matrix = vectorizer.fit_transform(list(windows) + list(claims))
    except ValueError:   # no word at all (punctuation only): keep the first windows
        return [list(range(k)) for _ in claims]
    similarity = (matrix[len(windows):] @ matrix[:len(windows)].T).toarray()
    return [[int(i) for i in np.argsort(-row, kind="stable")[:k]] for row in similarity]


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


def select_evidence(claims: Sequence[str], windows: Sequence[str], k: int) -> Selection:
    """The top-k windows of every claim as one flat list of pairs (to score in one batched call)."""
    chosen = top_k_windows(claims, windows, k)
    pairs = tuple((c, w) for c, picks in enumerate(chosen) for w in picks)
    return Selection(pairs=pairs, pairs_all=len(claims) * len(windows))
