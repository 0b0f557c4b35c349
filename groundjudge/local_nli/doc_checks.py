"""The checks every pair made from documents passes before it is written; the name of the first one that fails is
what the data card counts as dropped.

* ``differs``: an edit changes what the claim says (not only case, spacing or punctuation);
* ``fluency``: the edit reads as fluently as the original (perturb's cheap checks around the edit);
* ``not_in_document``: the edited wording (with three words either side) is not in the document word for word;
* ``new_detail``: an inserted detail brings a content word the document never uses;
* ``keeps_meaning``: a paraphrase keeps the claim's numbers and negations (and, for an LLM's, most of its words);
* ``support_removed``: with one supporting sentence taken out of the evidence, part of the claim is no longer
  there (at least two of that sentence's content words are missing from what is left);
* ``duplicate``: the claim was already made from this document;
* ``llm``: a judge (``--check SPEC``) agrees with the label (grounded for a positive, ungrounded for a negative).
"""

from __future__ import annotations

import re

from groundjudge.local_nli.doc_claims import content_words
from groundjudge.perturb.checks import differs, fluency_problem, wording_in_context
from groundjudge.perturb.lexicon import NUMBER_WORDS
from groundjudge.perturb.types import Candidate

CHECKS = ("differs", "fluency", "not_in_document", "new_detail", "keeps_meaning", "support_removed", "duplicate",
          "llm")
"""Every check, in the order the card lists them."""

MIN_MISSING_WORDS = 2
"""Content words of a removed sentence that must be missing from the rest of the evidence."""

MIN_LLM_OVERLAP = 0.5
"""Share of the claim's content words an LLM paraphrase must keep."""

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NUMBER_WORD = re.compile(r"\b(" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|without|cannot|none|nothing)\b|n't\b", re.IGNORECASE)


def edit_problem(original: str, candidate: Candidate, context: tuple[str, ...]) -> str | None:
    """The first check an ungrounded edit of ``original`` fails (differs, fluency, not_in_document), or None."""
    if not differs(original, candidate.text):
        return "differs"
    if fluency_problem(original, candidate.text) is not None:
        return "fluency"
    if wording_in_context(context, candidate)[0]:
        return "not_in_document"
    return None


def detail_problem(original: str, candidate: Candidate, context: tuple[str, ...], detail: str) -> str | None:
    """The first check an inserted ``detail`` fails: those of :func:`edit_problem`, then ``new_detail``."""
    problem = edit_problem(original, candidate, context)
    if problem is not None:
        return problem
    known = content_words(" ".join(context))
    return None if content_words(detail) - known else "new_detail"


def numbers(text: str) -> list[str]:
    """The numbers a text states, digits and number words alike, as sorted digit strings."""
    found = [m.group().replace(",", "") for m in _NUMBER.finditer(text)]
    found += [str(NUMBER_WORDS[m.group().lower()]) for m in _NUMBER_WORD.finditer(text)]
    return sorted(found)


def negations(text: str) -> int:
    """How many negation words a text has."""
    return len(_NEGATION.findall(text))


def paraphrase_problem(original: str, text: str, by_llm: bool = False) -> str | None:
    """The first check a paraphrase fails (differs, keeps_meaning), or None. An LLM's paraphrase must also keep
    at least :data:`MIN_LLM_OVERLAP` of the claim's content words."""
    if not differs(original, text):
        return "differs"
    if numbers(original) != numbers(text) or negations(original) != negations(text):
        return "keeps_meaning"
    if by_llm:
        words = content_words(original)
        if words and len(words & content_words(text)) < MIN_LLM_OVERLAP * len(words):
            return "keeps_meaning"
    return None


def support_removed(part: str, rest: str) -> bool:
    """Whether the removed sentence ``part`` says something the remaining evidence ``rest`` does not: at least
    :data:`MIN_MISSING_WORDS` of its content words are missing from it."""
    return len(content_words(part) - content_words(rest)) >= MIN_MISSING_WORDS
