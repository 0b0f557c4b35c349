"""Inputs of the local error-type head: an ungrounded claim, the context sentences that bear on it, and what changed.

One function builds the head's text pair for training and for judging alike (:func:`head_input`), so a model
never sees inputs at judging time that differ in form from those it learned on. The evidence is the ``k`` context
sentences that share the most content words with the claim (:func:`select_evidence`: lexical, no model), and the
pair's second text spells out the words the claim adds to the evidence and the evidence words it leaves out
(a word diff), so a one-word edit is visible at once.

Training pairs come from typed variants (:func:`typed_pairs`): native rows with ``label: ungrounded`` and one
``error_types`` entry, as ``groundjudge perturb`` writes them. The claim is the answer sentence that carries the
edit (``meta.perturbation.edit``), else the answer sentence least found in the context.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from groundjudge.text import sentence_spans, sentences
from groundjudge.types import Example

EVIDENCE_K = 2
"""Context sentences shown with each claim."""

DIFF_WORDS = 12
"""Most words listed on each side of the diff."""

_WORD = re.compile(r"[A-Za-z0-9$%§]+(?:['’.-][A-Za-z0-9]+)*")
_STOP = frozenset([
    "a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "and", "or", "is", "are", "was", "were",
    "be", "been", "it", "its", "this", "that", "these", "those", "with", "as", "from", "which", "who", "whom",
    "whose", "not", "no", "any", "all", "such", "other", "than", "then", "there", "their", "they", "them",
    "he", "she", "his", "her", "we", "our", "you", "your", "i", "shall", "will", "may", "must", "can",
    "would", "could", "should", "has", "have", "had", "do", "does", "did", "upon", "under", "into", "out",
    "if", "so"])


class TypedPair(BaseModel):
    """One training or evaluation input of the error-type head."""

    model_config = ConfigDict(frozen=True)
    claim: str = Field(description="The ungrounded sentence of the answer.")
    evidence: tuple[str, ...] = Field(description="The context sentences that bear on it, most overlapping first.")
    label: str | None = Field(default=None, description="The intended error type (None when unknown).")
    source_id: str = Field(default="", description="The row it came from.")
    group: str = Field(default="", description="The row's group (document or item).")


def words(text: str) -> list[str]:
    """The lowercased words of a text."""
    return [w.lower() for w in _WORD.findall(text)]


def _content(text: str) -> Counter:
    return Counter(w for w in words(text) if w not in _STOP)


def overlap(claim: str, sentence: str) -> float:
    """Share of the claim's content words (with multiplicity) found in the sentence."""
    want, have = _content(claim), _content(sentence)
    total = sum(want.values())
    return sum(min(n, have[w]) for w, n in want.items()) / total if total else 0.0


def context_sentence_texts(context: Sequence[str]) -> list[str]:
    """Every sentence of the context's documents, in order."""
    return [doc[s:e] for doc in context for s, e in sentence_spans(doc)]


def select_evidence(claim: str, context: Sequence[str], k: int = EVIDENCE_K) -> tuple[str, ...]:
    """The ``k`` context sentences sharing the most content words with the claim (ties: the earlier one)."""
    found = context_sentence_texts(context)
    ranked = sorted(range(len(found)), key=lambda i: (-overlap(claim, found[i]), i))
    return tuple(found[i] for i in ranked[:k])


def word_diff(evidence: str, claim: str) -> tuple[list[str], list[str]]:
    """The claim's words missing from the evidence (added) and the evidence words the claim replaced or dropped
    (removed), by a word-level alignment; at most :data:`DIFF_WORDS` each."""
    old, new = words(evidence), words(claim)
    added, removed = [], []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if op in ("replace", "delete"):
            removed += old[i1:i2]
        if op in ("replace", "insert"):
            added += new[j1:j2]
    return added[:DIFF_WORDS], removed[:DIFF_WORDS]


def head_input(claim: str, evidence: Sequence[str]) -> tuple[str, str]:
    """The text pair the head reads: the claim, then the diff against the best evidence sentence and the evidence."""
    best = evidence[0] if evidence else ""
    added, removed = word_diff(best, claim)
    diff = f"added: {' '.join(added) or '-'} | removed: {' '.join(removed) or '-'}"
    return claim, f"{diff} | source: {' '.join(evidence)}"


def edited_sentence(example: Example) -> str:
    """The answer sentence that carries the row's edit (``meta.perturbation.edit.after_start``), else the answer
    sentence least found in the context."""
    spans = sentence_spans(example.answer)
    edit = ((example.meta or {}).get("perturbation") or {}).get("edit") or {}
    at = edit.get("after_start")
    if isinstance(at, int) and spans:
        for start, end in spans:
            if start <= at < end or (at == end and at == len(example.answer)):
                return example.answer[start:end].strip()
    texts = sentences(example.answer) or [example.answer]
    found = context_sentence_texts(example.context)
    return min(texts, key=lambda s: max((overlap(s, c) for c in found), default=0.0))


def source_sentence(example: Example) -> str | None:
    """The source answer's sentence that a `perturb` variant's edit changed (the edit undone at its offsets), or
    None for a row without a recorded edit."""
    edit = ((example.meta or {}).get("perturbation") or {}).get("edit") or {}
    if not all(isinstance(edit.get(k), int) for k in ("after_start", "after_end", "before_start")):
        return None
    source = example.answer[:edit["after_start"]] + str(edit.get("before", "")) + example.answer[edit["after_end"]:]
    for start, end in sentence_spans(source):
        if start <= edit["before_start"] < end:
            return source[start:end].strip()
    return source.strip()


def typed_pairs(rows: Iterable[Example], types: Sequence[str], k: int = EVIDENCE_K) -> list[TypedPair]:
    """One pair per ungrounded row with exactly one error type of ``types``; other rows are left out."""
    out = []
    for row in rows:
        if row.label != "ungrounded" or len(row.error_types) != 1 or row.error_types[0] not in types:
            continue
        meta = row.meta or {}
        altered = meta.get("altered_sentence")
        claim = altered if isinstance(altered, str) and altered else edited_sentence(row)
        out.append(TypedPair(claim=claim, evidence=select_evidence(claim, row.context, k), label=row.error_types[0],
                             source_id=row.id, group=str(meta.get("group") or row.id)))
    return out
