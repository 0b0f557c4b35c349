"""The premise of a pair made from a document: the evidence the trained judge will select for its claim.

The crossencoder judge reads ``evidence`` (``embedding`` or ``tfidf``) and ``evidence_k`` from the card and, for
each claim, joins the ``evidence_k`` best-matching sentences of the whole context in document order
(:class:`~groundjudge.local_nli.pairs.EvidenceIndex` over
:func:`~groundjudge.local_nli.pairs.context_sentences`). :class:`DocEvidence` builds every premise of
``train --from-documents`` the same way, so a model is trained on the input it is judged with:

* a grounded claim's premise is that selection, and the claim is dropped (check ``evidence_missed_support``) when
  the selection misses one of the sentences that support it;
* an ungrounded claim's premise is the selection for the ungrounded claim itself;
* a ``removed_support`` premise is the same ranking with the removed sentence left out: the claim's evidence minus
  that sentence, the next-best match in its place (what the judge selects where the document lacks it).
"""

from __future__ import annotations

from collections.abc import Sequence

from groundjudge.local_nli.doc_sources import Document
from groundjudge.local_nli.pairs import EvidenceIndex, context_sentences

MISSED = "evidence_missed_support"
"""The check a grounded claim fails when the judge's evidence selection leaves out one of its supporting
sentences."""


def premise_rule(method: str, k: int) -> str:
    """The card's words for how the premises were built."""
    ranking = "sentence-embedding cosine" if method == "embedding" else "TF-IDF"
    return (f"the judge's own evidence: the claim's {k} best-matching document sentence(s) by {ranking}, in "
            f"document order (a grounded claim whose supporting sentences are not all among them is dropped: "
            f"{MISSED}); for removed_support, that evidence minus the removed sentence, the next-best match in its place")


class DocEvidence:
    """One document's evidence selection, as the judge will make it (``method`` and ``k`` as on the card)."""

    def __init__(self, doc: Document, method: str, k: int):
        """Index every sentence of the document's context (the judge's pool, short sentences included)."""
        self.k = k
        self.pool = context_sentences(doc.example) or list(doc.sentences)
        self.index = EvidenceIndex(self.pool, method)
        self.where = _positions(doc.sentences, self.pool)

    def select(self, claim: str, removed: int | None = None) -> list[int]:
        """Pool indices of the claim's evidence, in document order; ``removed`` (a document sentence index) is left
        out of the document first."""
        gone = None if removed is None else self.where[removed]
        return sorted([i for i in self.index.ranked(claim) if i != gone][:self.k])

    def text(self, chosen: Sequence[int]) -> str:
        """The selected sentences joined."""
        return " ".join(self.pool[i] for i in chosen)

    def premise(self, claim: str, removed: int | None = None) -> str:
        """The judge's evidence for ``claim`` (without sentence ``removed``)."""
        return self.text(self.select(claim, removed))

    def supported_premise(self, claim: str, support: Sequence[int]) -> str | None:
        """The judge's evidence for a grounded ``claim``, or None when it misses a supporting sentence."""
        chosen = self.select(claim)
        if not {self.where[i] for i in support} <= set(chosen):
            return None
        return self.text(chosen)


def _positions(sentences: Sequence[str], pool: Sequence[str]) -> list[int]:
    """Where each of the document's sentences (a subsequence of the pool) lies in the pool."""
    out, at = [], 0
    for sentence in sentences:
        while at < len(pool) and pool[at] != sentence:
            at += 1
        if at == len(pool):
            raise ValueError(f"sentence not in its context: {sentence[:60]!r}")
        out.append(at)
        at += 1
    return out


__all__ = ["MISSED", "DocEvidence", "premise_rule"]
