"""Synthetic hard negatives: controlled edits (number, negation, entity, antonym, modal) that make a
supported sentence unsupported, paired with the evidence of the untouched sentence."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from groundjudge.local_nli.pairs import (
    EvidenceIndex,
    EvidenceIndexes,
    Pair,
    _pair,
    claims_of,
)
from groundjudge.text import normalize
from groundjudge.types import Example

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


_ANTONYMS = (
    ("increase", "decrease"), ("increased", "decreased"), ("increases", "decreases"), ("higher", "lower"),
    ("more", "less"), ("before", "after"), ("first", "last"), ("earlier", "later"), ("maximum", "minimum"),
    ("include", "exclude"), ("includes", "excludes"), ("included", "excluded"), ("accept", "reject"),
    ("accepted", "rejected"), ("allow", "prohibit"), ("allowed", "prohibited"), ("allows", "prohibits"),
    ("permitted", "forbidden"), ("won", "lost"), ("win", "lose"), ("rose", "fell"), ("gain", "loss"),
    ("above", "below"), ("always", "never"), ("true", "false"), ("positive", "negative"),
    ("majority", "minority"), ("buy", "sell"), ("bought", "sold"), ("start", "end"), ("open", "closed"),
    ("largest", "smallest"), ("oldest", "youngest"), ("north", "south"), ("east", "west"),
    ("success", "failure"), ("successful", "unsuccessful"), ("strong", "weak"), ("early", "late"),
    ("agree", "disagree"), ("agreed", "disagreed"), ("support", "oppose"), ("supported", "opposed"),
    ("landlord", "tenant"), ("buyer", "seller"), ("plaintiff", "defendant"), ("employer", "employee"),
    ("lessor", "lessee"), ("licensor", "licensee"), ("disclosing", "receiving"), ("guilty", "innocent"),
    ("legal", "illegal"), ("valid", "invalid"), ("enforceable", "unenforceable"), ("upheld", "overturned"),
    ("granted", "denied"), ("liable", "not liable"), ("mandatory", "optional"), ("public", "private"),
)


_ANTONYM = {a: b for pair in _ANTONYMS for a, b in (pair, pair[::-1])}


_ANTONYM_RE = re.compile(r"\b(" + "|".join(sorted(map(re.escape, _ANTONYM), key=len, reverse=True)) + r")\b",
                         re.IGNORECASE)


_NEGATE = re.compile(r"\b(is|are|was|were|can|will|shall|must|should|would|could|does|did|has been|have been|"
                     r"had been)\b(?! not\b)")


_UNNEGATE = (
    (re.compile(r"\bcannot\b"), "can"), (re.compile(r"\bcan't\b"), "can"), (re.compile(r"\bwon't\b"), "will"),
    (re.compile(r"\b(is|are|was|were|does|did|do|has|have|had|should|would|could|must)n't\b"), r"\1"),
    (re.compile(r"\b(\w+) not\b"), r"\1"), (re.compile(r"\bnever\b"), "always"),
)


_MODALS = ((re.compile(r"\bshall not\b"), "may"), (re.compile(r"\bmust not\b"), "may"),
           (re.compile(r"\bis required to\b"), "may"), (re.compile(r"\bshall\b"), "may"),
           (re.compile(r"\bmust\b"), "may"), (re.compile(r"\bmay\b"), "must"))


_ENTITY = re.compile(r"\b[A-Z][a-zA-Z'&.-]+(?:\s+(?:of|the|de|van|von|and)?\s*[A-Z][a-zA-Z'&.-]+)*")


_NOT_ENTITIES = {"The", "A", "An", "In", "On", "At", "It", "He", "She", "They", "We", "I", "This", "That", "These",
                 "Those", "His", "Her", "Their", "Its", "Our", "If", "But", "And", "Or", "As", "For", "By", "To",
                 "When", "While", "After", "Before", "There", "Section", "Article", "Clause"}


SYNTHETIC_CONTRADICTIONS = ("number", "negation", "entity", "antonym")
"""Edit kinds labelled 'contradiction' (the premise states the opposite); a modal flip is 'unsupported'."""


def _keep_case(original: str, new: str) -> str:
    return new[:1].upper() + new[1:] if original[:1].isupper() else new


def _other_number(value: str, pool: Sequence[str], rng: random.Random) -> str:
    others = sorted({n for n in pool if n != value})
    if others and rng.random() < 0.6:
        return rng.choice(others)
    digits = value.replace(",", "")
    if re.fullmatch(r"\d+", digits):
        number = int(digits)
        if 1800 <= number <= 2100:
            return str(number + rng.choice((-3, -2, -1, 1, 2, 5)))
        return str(max(number + rng.choice((1, 2, 3, 10)), 0) if number < 10 else number * rng.choice((2, 3)))
    return digits + "5"


def edit_number(sentence: str, context: Sequence[str], rng: random.Random) -> str | None:
    """Swap one number (or month / weekday) for another one of the context, or a nearby value."""
    numbers = list(_NUMBER.finditer(sentence))
    if numbers:
        match = rng.choice(numbers)
        pool = [m.group() for s in context for m in _NUMBER.finditer(s)]
        return sentence[:match.start()] + _other_number(match.group(), pool, rng) + sentence[match.end():]
    for names in (_MONTHS, _WEEKDAYS):
        found = [w for w in names if re.search(rf"\b{w}\b", sentence)]
        if found:
            old = rng.choice(found)
            return re.sub(rf"\b{old}\b", rng.choice([w for w in names if w != old]), sentence, count=1)
    return None


def edit_negation(sentence: str, context: Sequence[str], rng: random.Random) -> str | None:
    """Remove a negation if there is one, else insert 'not' after an auxiliary verb."""
    for pattern, replacement in _UNNEGATE:
        if pattern.search(sentence):
            return pattern.sub(replacement, sentence, count=1)
    matches = list(_NEGATE.finditer(sentence))
    if not matches:
        return None
    match = rng.choice(matches)
    word = match.group()
    negated = "cannot" if word == "can" else f"{word.split()[0]} not {' '.join(word.split()[1:])}".strip()
    return sentence[:match.start()] + negated + sentence[match.end():]


def _entities(text: str) -> list[str]:
    found = []
    for match in _ENTITY.finditer(text):
        span = match.group().rstrip(".")
        if span not in _NOT_ENTITIES and span not in _MONTHS and span not in _WEEKDAYS and len(span) > 1:
            found.append(span)
    return found


def edit_entity(sentence: str, context: Sequence[str], rng: random.Random) -> str | None:
    """Replace one capitalised name of the sentence with another name found in the context."""
    short = len(sentence.split()) <= 4
    own = [e for e in _entities(sentence) if short or " " in e or sentence.find(e) > 0]
    pool = sorted({e for s in context for e in _entities(s)})
    if not own:
        return None
    old = rng.choice(own)
    others = [e for e in pool if e not in old and old not in e]
    alike = [e for e in others if len(e.split()) == len(old.split())]
    if not others:
        return None
    return sentence.replace(old, rng.choice(alike or others), 1)


def edit_antonym(sentence: str, context: Sequence[str], rng: random.Random) -> str | None:
    """Replace one word with its antonym from a small built-in list."""
    matches = list(_ANTONYM_RE.finditer(sentence))
    if not matches:
        return None
    match = rng.choice(matches)
    new = _keep_case(match.group(), _ANTONYM[match.group().lower()])
    return sentence[:match.start()] + new + sentence[match.end():]


def edit_modal(sentence: str, context: Sequence[str], rng: random.Random) -> str | None:
    """Flip an obligation into a permission (shall / must → may) or back (may → must)."""
    for pattern, replacement in _MODALS:
        match = pattern.search(sentence)
        if match:
            return sentence[:match.start()] + _keep_case(match.group(), replacement) + sentence[match.end():]
    return None


EDITS: dict[str, Callable[[str, Sequence[str], random.Random], str | None]] = {
    "number": edit_number, "negation": edit_negation, "entity": edit_entity, "antonym": edit_antonym,
    "modal": edit_modal,
}
"""Synthetic edit functions by kind: (sentence, context sentences, rng) → edited sentence or None."""


def edit_sentence(sentence: str, context: Sequence[str], rng: random.Random,
                  kinds: Sequence[str] = tuple(EDITS)) -> tuple[str, str] | None:
    """Apply the first applicable edit among ``kinds`` (tried in random order): (edited, kind) or None."""
    order = list(kinds)
    rng.shuffle(order)
    for kind in order:
        edited = EDITS[kind](sentence, context, rng)
        if edited and normalize(edited) != normalize(sentence):
            return edited, kind
    return None


@dataclass(frozen=True)
class _EditSource:
    """Grounded text to edit: the claim is ``prefix + text``; only ``text`` is edited."""

    example: Example
    premise: str
    prefix: str
    text: str
    needs_positive: bool


def _answer_sources(example: Example, index: EvidenceIndex, k: int) -> list[_EditSource]:
    out = []
    for claim in claims_of(example):
        prefix = f"{example.question.strip()} " if example.question and claim != example.answer.strip() else ""
        if prefix and not claim.startswith(prefix):
            prefix = ""
        out.append(_EditSource(example, index.evidence(claim, k), prefix, claim[len(prefix):], False))
    return out


def _context_sources(example: Example, index: EvidenceIndex) -> list[_EditSource]:
    sents = index.sentences
    return [_EditSource(example, " ".join(sents[max(i - 1, 0):i + 2]), "", sentence, True)
            for i, sentence in enumerate(sents) if 4 <= len(sentence.split()) <= 60]


def _synthetic_sources(examples: Sequence[Example], indexes: EvidenceIndexes, k: int) -> list[_EditSource]:
    """Grounded answer claims (premise = their evidence) and context sentences (premise = their window)."""
    sources: list[_EditSource] = []
    seen: set[tuple[str, ...]] = set()
    for example in examples:
        if example.label == "grounded":
            sources.extend(_answer_sources(example, indexes.of(example), k))
        if example.context not in seen:
            seen.add(example.context)
            sources.extend(_context_sources(example, indexes.of(example)))
    return sources


def synthetic_pairs(examples: Sequence[Example], n: int, seed: int = 0, evidence_k: int = 2,
                    evidence: str = "tfidf") -> list[Pair]:
    """Up to ``n`` synthetic negatives from grounded text, each with its untouched positive when new.

    Sources, in a seeded random order: claims of grounded answers (premise = their evidence; their
    positive already comes from the recipe; of a question + answer claim only the answer is edited)
    and context sentences (premise = the sentence with its neighbours; the untouched sentence is
    added as the positive). Number, negation, entity and antonym edits are labelled
    'contradiction', a modal flip 'unsupported'.
    """
    rng = random.Random(seed)
    indexes = EvidenceIndexes(evidence)
    sources = _synthetic_sources(examples, indexes, evidence_k)
    rng.shuffle(sources)
    out: list[Pair] = []
    made = 0
    for source in sources:
        if made >= n:
            break
        edited = edit_sentence(source.text, indexes.of(source.example).sentences, rng)
        if edited is None:
            continue
        text, kind = edited
        label = "contradiction" if kind in SYNTHETIC_CONTRADICTIONS else "unsupported"
        out.append(_pair(source.example, source.premise, source.prefix + text, label, f"synthetic:{kind}"))
        made += 1
        if source.needs_positive:
            out.append(_pair(source.example, source.premise, source.text, "supported", "synthetic:original"))
    return out
