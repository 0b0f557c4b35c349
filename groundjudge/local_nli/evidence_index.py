"""Evidence for a claim among one context's sentences: the ``evidence_k`` best-matching sentences, ranked by
sentence-embedding cosine (``embedding``) or TF-IDF (``tfidf``), as training pairs and the ``crossencoder`` judge's
card input build them; :func:`evidence_for` does it for the claims of many answers with one embedder call."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class EvidenceIndex:
    """One context's sentences, ranked against a claim by embedding or TF-IDF cosine."""

    def __init__(self, sentences_: Sequence[str], method: str = "tfidf", model: Any = None):
        """Index the given context sentences (at least one) for ``method`` ('embedding' or 'tfidf'); ``model``: the
        sentence embedder of ``embedding`` (a hub name, a folder or an ``EmbedderSpec``; None: the packaged
        all-MiniLM-L6-v2)."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.sentences = list(sentences_)
        self.method = method
        self.model = model
        self._matrix = self._vectorizer = None
        if method == "embedding":
            return
        if method != "tfidf":
            raise ValueError(f"unknown evidence method {method!r}; known: embedding, tfidf")
        self._vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, lowercase=True,
                                           token_pattern=r"(?u)\b\w+\b")
        try:
            self._matrix = self._vectorizer.fit_transform(self.sentences)
        except ValueError:  # no token at all in the context
            self._matrix = None

    def scores_many(self, claims: Sequence[str], claim_vectors: np.ndarray | None = None) -> np.ndarray:
        """(claims x context sentences) cosine similarity, every claim in one embedder call (or one TF-IDF
        transform); ``claim_vectors``: the claims' unit embeddings, already made (``method='embedding'`` only)."""
        if self.method == "embedding":
            from groundjudge.local_nli.evidence import embed_claims, embed_context

            model = _embedder(self.model)
            vectors = embed_claims(claims, model) if claim_vectors is None else claim_vectors
            return vectors @ embed_context(self.sentences, model).T
        if self._matrix is None:
            return np.zeros((len(claims), len(self.sentences)))
        return (self._vectorizer.transform(list(claims)) @ self._matrix.T).toarray()

    def scores(self, claim: str) -> np.ndarray:
        """Cosine similarity of the claim to every context sentence."""
        return self.scores_many([claim])[0]

    def ranked(self, claim: str) -> list[int]:
        """All sentence indices, best match first (ties: earlier first)."""
        return [int(i) for i in np.argsort(-self.scores(claim), kind="stable")]

    def top(self, claim: str, k: int) -> list[int]:
        """Indices of the k best-matching sentences, in document order (ties: earlier first)."""
        return _top(self.scores(claim), k)

    def evidence(self, claim: str, k: int) -> str:
        """The k best-matching sentences joined in document order."""
        return self.evidence_many([claim], k)[0]

    def evidence_many(self, claims: Sequence[str], k: int, claim_vectors: np.ndarray | None = None) -> list[str]:
        """:meth:`evidence` of each claim, their similarities computed together (see :meth:`scores_many`)."""
        rows = self.scores_many(claims, claim_vectors) if len(claims) else np.zeros((0, len(self.sentences)))
        return [" ".join(self.sentences[i] for i in _top(row, k)) for row in rows]

    def support(self, claim: str) -> float:
        """Best cosine of the claim to any context sentence: a lexical support score."""
        scores = self.scores(claim)
        return float(scores.max()) if len(scores) else 0.0


def _top(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the k highest scores, in index order (ties: earlier first)."""
    return sorted(int(i) for i in np.argsort(-scores, kind="stable")[:max(k, 1)])


def _embedder(model: Any) -> Any:
    """The embedder an index names, the packaged default for None."""
    if model is not None:
        return model
    from groundjudge.local_nli.model import DEFAULT_EMBEDDER

    return DEFAULT_EMBEDDER


def evidence_for(items: Sequence[tuple[EvidenceIndex, Sequence[str]]], k: int) -> list[list[str]]:
    """Each item's claims' evidence (:meth:`EvidenceIndex.evidence_many`), for the claims of many answers at
    once: with ``method='embedding'`` every claim of every item and the sentences of every context in one
    embedder call (one per embedder, where the indexes name several)."""
    by_model: dict[Any, list[int]] = {}
    for position, (index, _) in enumerate(items):
        if index.method == "embedding":
            by_model.setdefault(_embedder(index.model), []).append(position)
    vectors: dict[int, np.ndarray] = {}
    for model, positions in by_model.items():
        from groundjudge.local_nli.evidence import embed_claims

        claims = [claim for p in positions for claim in items[p][1]]
        contexts = {id(items[p][0]): items[p][0].sentences for p in positions}
        # one call for the claims and every context's sentences: the sentence vectors stay in the shared vector
        # cache, where each index's own lookup (EvidenceIndex.scores_many) finds them
        made = embed_claims(claims + [text for sentences in contexts.values() for text in sentences], model)
        offset = 0
        for p in positions:
            count = len(items[p][1])
            vectors[p], offset = made[offset:offset + count], offset + count
    return [index.evidence_many(claims, k, vectors.get(p)) for p, (index, claims) in enumerate(items)]
