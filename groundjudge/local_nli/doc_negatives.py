"""Ungrounded claims made from grounded ones by rule: perturb's typed edits (one error of a legal type each), an
unsupported detail inserted (a qualifier before a noun, or a phrase that the document never states put before the
claim's final stop), and a scope narrowed to one item of a list ("includes A, B and C" -> "includes only C"), with
its grounded contrast where the list is open (an "includes"-type list cut to its last item, no "only"). The fused
claim whose evidence lost one supporting sentence changes the premise, not the claim:
:mod:`~groundjudge.local_nli.doc_pairs` makes it."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Sequence

from groundjudge.perturb.engine import RULES
from groundjudge.perturb.spans import replace
from groundjudge.perturb.types import SLUGS, Candidate

DETAIL_PHRASES = (
    "in 2019", "last year", "in the second quarter", "for the first time", "by a wide margin", "in writing",
    "without prior notice", "on a monthly basis", "at its own expense", "in New York", "according to the auditors",
    "under the supervision of the board", "within ten business days", "after a public consultation",
    "with the approval of the shareholders", "in the European Union", "during the pandemic", "for a fee of $500",
    "on behalf of its subsidiaries", "by registered mail", "at the request of the regulator", "in early March",
)
"""Details a claim can gain that a document rarely states (each is kept only where the document never uses its
content words)."""

QUALIFIERS = ("exclusive", "annual", "written", "additional", "former", "international", "temporary", "senior",
              "mandatory", "confidential", "local", "revised", "preliminary", "independent", "quarterly")
"""Adjectives put before a noun: an unsupported detail unless the document says it."""

_FINAL = re.compile(r"[.!?;:]?[\"')\]]*\s*$")
_THE_NOUN = re.compile(r"\b[Tt]he ([a-z]{4,})\b")
_TRAILING_PHRASE = re.compile(r"\s((?:in|on|at|for|during|by|under|with|after|before|from|across|through)"
                              r"\s+[\w$%,'-]+(?:\s+[\w$%,'-]+){0,4})[.!?]$")
_FUNCTION = (r"and|or|only|not|no|nor|is|are|was|were|be|been|being|has|have|had|to|of|in|on|at|by|for|with|from|"
             r"into|as|if|than|that|which|who|whom|whose|such|shall|will|would|may|might|must|can|could|should|this|"
             r"these|those|it|he|she|they|we|you|i|his|her|its|their|our|your|the|a|an|any|all|each|other")
_DETERMINER = r"the|its|their|his|her|our|your|a|an|any|all|each"
_WORD = rf"(?!(?:{_FUNCTION})\b)[A-Za-z][\w'’-]+"
_ITEM = rf"(?:(?:{_DETERMINER}) )?{_WORD}(?: {_WORD})?"
"""A list item: an optional determiner and one or two words that are not function words (a clause is no item)."""
_OPEN = r"includes?|included|including|such\s+as|covers?|covering"
"""Words that open a list of examples: dropping items keeps the claim true, "only" makes it false."""
_CLOSED = r"means?|comprises?|comprising|consists?\s+of|namely"
"""Words that open a list that is the whole of something: "only" still narrows it. (After a preposition a list is
as often a run of verbs or clauses, "to review, copy and return", as of items: not used.)"""
_LIST = re.compile(
    rf"\b(?P<opener>{_OPEN}|{_CLOSED})\s+(?P<first>{_ITEM})(?P<middle>(?:, (?!(?:and|or)\b){_ITEM})*)"
    rf"(?P<comma>,?) (?P<conj>and|or) (?P<last>{_WORD})(?![\w)])", re.IGNORECASE)
_UNLIMITED = re.compile(r"(?:limit\w*|limitation|exclusive\w*|only|solely|exclusively)\W*$", re.IGNORECASE)
_NOT_NOUNS = frozenset("""same other following above such said most first last next only whole entire event
extent case purpose time term date parties""".split())


def typed_edits(text: str, context: tuple[str, ...], rng: random.Random,
                types: Sequence[str] = SLUGS) -> Iterator[tuple[str, Candidate]]:
    """(type slug, candidate) of perturb's rules for the claim: the types in a seeded order, each type's
    candidates shuffled; a type's rule runs only when the one before gave nothing that was kept."""
    order = list(types)
    rng.shuffle(order)
    for slug in order:
        found = RULES[slug](text, context, rng)
        rng.shuffle(found)
        for candidate in found:
            yield slug, candidate


def borrowed_phrases(sentences: Sequence[str]) -> list[str]:
    """Closing prepositional phrases of sentences ('... in the third quarter.'), to lend to claims of other
    documents as details."""
    found = []
    for sentence in sentences:
        match = _TRAILING_PHRASE.search(sentence)
        if match and not match.group(1).rstrip(",").endswith(("the", "a", "an")):
            found.append(match.group(1).rstrip(","))
    return found


def _insert_before_stop(text: str, phrase: str, rule: str) -> Candidate | None:
    end = _FINAL.search(text).start()
    if end == 0:
        return None
    return replace(text, end, end, f" {phrase}", rule)


def _qualified(text: str, rng: random.Random) -> tuple[str, Candidate] | None:
    matches = [m for m in _THE_NOUN.finditer(text) if m.group(1) not in _NOT_NOUNS]
    if not matches:
        return None
    match = rng.choice(matches)
    word = rng.choice(QUALIFIERS)
    return word, replace(text, match.start(1), match.start(1), f"{word} ", "detail.qualifier")


def detail_candidates(text: str, pool: Sequence[str], rng: random.Random) -> list[tuple[str, Candidate]]:
    """(detail, candidate) insertions in a seeded order: a qualifier before a noun, a phrase lent by another
    document (``pool``), a built-in phrase."""
    out: list[tuple[str, Candidate] | None] = [_qualified(text, rng)]
    for phrases, rule in ((pool, "detail.borrowed"), (DETAIL_PHRASES, "detail.phrase")):
        if phrases:
            phrase = rng.choice(list(phrases))
            candidate = _insert_before_stop(text, phrase, rule)
            out.append((phrase, candidate) if candidate is not None else None)
    kept = [item for item in out if item is not None and item[1] is not None]
    rng.shuffle(kept)
    return kept


def narrowed_lists(text: str) -> list[tuple[Candidate, Candidate | None]]:
    """(ungrounded, grounded or None) per list of the claim that a list word opens ("includes", "such as",
    "covers", "means", "comprises", ...): the list replaced by "only" and its last item (``scope.only``), and, for
    a list of examples joined by "and" ("includes", "such as", "covers"), the last item alone (``scope.subset``:
    still true). A list already limited ("not limited to", "only", "exclusively" just before it) is left alone."""
    if re.search(r"\bonly\b", text, re.IGNORECASE):
        return []   # the claim limits something already
    out = []
    for match in _LIST.finditer(text):
        opener = match.group("opener").lower()
        if _UNLIMITED.search(text[max(0, match.start() - 40):match.start()]):
            continue
        start, last = match.start("first"), match.start("last")
        narrowed = replace(text, start, last, "only ", "scope.only")
        if narrowed is None:
            continue
        subset = None
        if re.fullmatch(_OPEN, opener, re.IGNORECASE) and match.group("conj").lower() == "and":
            subset = replace(text, start, last, "", "scope.subset")
        out.append((narrowed, subset))
    return out


__all__ = ["DETAIL_PHRASES", "QUALIFIERS", "borrowed_phrases", "detail_candidates", "narrowed_lists", "typed_edits"]
