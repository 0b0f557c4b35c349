"""Evidence chunks for LLM judges: each claim (or answer sentence) read only against its top-k document windows.

The documents are cut into windows of whole sentences of at most ``chunk_words`` words (one sentence shared
between neighbours, an over-long sentence split on whitespace: nothing is cut off), and every query is matched to
its k most similar windows with the ranking the ``nli`` judge uses (sentence-embedding cosine, or TF-IDF). A long
contract then costs k windows per claim instead of the whole contract, and the windows read are kept in the
record as :class:`~groundjudge.types.Evidence` with their offsets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from groundjudge.local_nli.evidence import EvidenceMethod, top_k_windows
from groundjudge.local_nli.model import DEFAULT_EMBEDDER
from groundjudge.local_nli.segment import Window, windows
from groundjudge.types import Evidence

EvidenceMode = Literal["full", "chunks"]
"""What an LLM judge reads: the whole documents, or each claim's top-k windows."""


def word_count(text: str) -> int:
    """Whitespace-separated words: the chunk budget's unit (close to tokens / 1.3 for English)."""
    return len(text.split())


def chunk_documents(context: Sequence[str], chunk_words: int) -> list[Window]:
    """The documents as windows of whole sentences of at most ``chunk_words`` words, in document order."""
    return windows(tuple(context), max(chunk_words, 8), word_count)


def as_evidence(window: Window) -> Evidence:
    """A window as recorded evidence (its document and character offsets)."""
    return Evidence(text=window.text, doc_index=window.doc_index, start=window.start, end=window.end)


def top_chunks(queries: Sequence[str], context: Sequence[str], k: int, chunk_words: int,
               ranker: EvidenceMethod = "embedding", model: str = DEFAULT_EMBEDDER) -> list[list[Evidence]]:
    """For each query, its k most similar windows of the documents, in document order (a short document is one
    window: every query gets all of it)."""
    wins = chunk_documents(context, chunk_words)
    picks = top_k_windows(list(queries), [w.text for w in wins], k, ranker, model)
    return [[as_evidence(wins[i]) for i in sorted(chosen)] for chosen in picks]


def union_chunks(per_query: Sequence[Sequence[Evidence]]) -> list[Evidence]:
    """Every window picked for any query, once, in document order."""
    seen: dict[tuple, Evidence] = {}
    for chunks in per_query:
        for chunk in chunks:
            seen.setdefault((chunk.doc_index, chunk.start, chunk.end), chunk)
    return [seen[key] for key in sorted(seen, key=lambda k: (k[0], k[1] or 0))]
