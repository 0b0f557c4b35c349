"""Training pairs for the cross-encoder: (evidence, claim) → label, from labelled examples and beyond.

Three sources, each a list of :class:`Pair`:

* **labelled examples** (:func:`build_pairs`), with one of two recipes:

  - ``pairs``: every sentence of a grounded answer is a positive. For an ungrounded answer we do not
    know which sentence is wrong, so: if the same group holds a grounded sibling, the sentences that
    differ from the most similar sibling (difflib over normalised sentences) are the negatives; with
    no sibling, the one sentence least supported by its evidence (TF-IDF cosine) is the negative.
    The other sentences of an ungrounded answer are left out (their label is unknown). Evidence is a
    window of the ``evidence_k`` best-matching context sentences, in document order.
  - ``diff`` (the legal-QA paper's fine-tuning recipe): only contrasts are used. Each ungrounded answer
    is paired with the most similar grounded answer of its group; the sentences that differ are
    negatives, each with the context sentence(s) that best match its grounded counterpart (so the
    evidence is about the very fact that was changed), and the grounded answer's sentences are
    positives with their own best-matching context sentence(s). Ungrounded answers without a sibling
    are skipped.

* **synthetic hard negatives** (:func:`synthetic_pairs`): controlled edits of grounded text —
  number/date swap, negation inserted or removed, entity swap, antonym swap, modal flip — labelled by
  construction, each with the untouched sentence as its positive.
* **NLI rows** (:func:`read_nli_tsv`): ``label<TAB>premise<TAB>hypothesis`` files, PTB-detokenised.

Claims: a short answer to a question (at most :data:`SHORT_ANSWER_WORDS` words) is one claim,
``"<question> <answer>"``, since "Delhi" alone states nothing; any other answer gives one claim per
sentence. Evidence is the ``evidence_k`` context sentences that best match a claim, ranked by
sentence-embedding cosine (``evidence="embedding"``) or TF-IDF (``"tfidf"``); the card of a trained model
records which, so that the crossencoder judge builds the same input.

* **gold evidence** (:func:`gold_evidence_pairs`): examples that name their evidence spans
  (``meta["evidence"]``: ``[start, end]`` offsets into the first document, as ContractNLI does) teach the
  model which sentence is *the* evidence: the gold sentences are the premise of the example's label, and
  the best-ranked sentences that are not evidence are 'unsupported' premises for the same claim — the
  near misses a retriever returns.
"""

from __future__ import annotations

import difflib
import json
import random
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from groundjudge.formats.nli_tsv import detokenize
from groundjudge.formats.load import DataError
from groundjudge.formats import RowError
from groundjudge.formats._common import short_hash
from groundjudge.text import normalize, sentences
from groundjudge.types import Example

SHORT_ANSWER_WORDS = 25
"""Answers to a question with at most this many words are one claim: question + answer."""

PAIR_LABELS = ("supported", "unsupported", "entailment", "neutral", "contradiction")
"""Labels a pair may carry: grounding labels, NLI labels, and 'contradiction' for synthetic edits."""

_GLUED = re.compile(r"(?<=[a-z0-9\)\]%][.!?])(?=[A-Z][a-z])")


@dataclass(frozen=True)
class Pair:
    """One training pair: premise (evidence) and hypothesis (claim) with its label and provenance."""

    premise: str
    hypothesis: str
    label: str
    source: str
    group: str
    example_id: str | None = None

    def to_json(self) -> str:
        """One JSON line."""
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str) -> Pair:
        """Read back a line written by :meth:`to_json`."""
        return cls(**json.loads(line))


# ---------------------------------------------------------------- groups, sentences, claims and evidence


def source_group(example: Example) -> str:
    """The group that keeps training data apart: ``meta.group`` when given, else the context itself.

    Falling back to the context (not to the example id, as :attr:`Example.group` does) keeps answers
    about the same document together even when the data names no group.
    """
    if "group" in example.meta:
        return str(example.meta["group"])
    return "context:" + short_hash(*example.context)



@lru_cache(maxsize=2048)
def document_sentences(text: str) -> tuple[str, ...]:
    """Sentences of one document; also splits sentences glued without a space ("century.First")."""
    out: list[str] = []
    for sentence in sentences(text):
        out.extend(part.strip() for part in _GLUED.split(sentence) if part.strip())
    return tuple(out)


def context_sentences(example: Example) -> list[str]:
    """All sentences of all the example's documents, in order."""
    return [s for doc in example.context for s in document_sentences(doc)]


def claims_of(example: Example) -> list[str]:
    """The claims of an answer: question + answer for a short answer to a question, else its sentences."""
    answer = example.answer.strip()
    if not answer:
        return []
    if example.question and len(answer.split()) <= SHORT_ANSWER_WORDS:
        return [f"{example.question.strip()} {answer}"]
    return list(document_sentences(answer)) or [answer]


class EvidenceIndex:
    """One context's sentences, ranked against a claim by embedding or TF-IDF cosine."""

    def __init__(self, sentences_: Sequence[str], method: str = "tfidf"):
        """Index the given context sentences (at least one) for ``method`` ('embedding' or 'tfidf')."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.sentences = list(sentences_)
        self.method = method
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

    def scores(self, claim: str) -> np.ndarray:
        """Cosine similarity of the claim to every context sentence."""
        if self.method == "embedding":
            from groundjudge.local_nli.evidence import embed_claims, embed_context

            return embed_context(self.sentences) @ embed_claims([claim])[0]
        if self._matrix is None:
            return np.zeros(len(self.sentences))
        return (self._matrix @ self._vectorizer.transform([claim]).T).toarray().ravel()

    def ranked(self, claim: str) -> list[int]:
        """All sentence indices, best match first (ties: earlier first)."""
        return [int(i) for i in np.argsort(-self.scores(claim), kind="stable")]

    def top(self, claim: str, k: int) -> list[int]:
        """Indices of the k best-matching sentences, in document order (ties: earlier first)."""
        order = np.argsort(-self.scores(claim), kind="stable")[:max(k, 1)]
        return sorted(int(i) for i in order)

    def evidence(self, claim: str, k: int) -> str:
        """The k best-matching sentences joined in document order."""
        return " ".join(self.sentences[i] for i in self.top(claim, k))

    def support(self, claim: str) -> float:
        """Best cosine of the claim to any context sentence: a lexical support score."""
        scores = self.scores(claim)
        return float(scores.max()) if len(scores) else 0.0


class _Indexes:
    """EvidenceIndex per distinct context, built on first use (answers often share a document)."""

    def __init__(self, method: str = "tfidf") -> None:
        self.method = method
        self._items: dict[tuple[str, ...], EvidenceIndex] = {}

    def of(self, example: Example) -> EvidenceIndex:
        """The index of the example's context."""
        if example.context not in self._items:
            self._items[example.context] = EvidenceIndex(context_sentences(example) or [example.context_text],
                                                         self.method)
        return self._items[example.context]


# ---------------------------------------------------------------- diffs between siblings


def changed_claims(grounded: Sequence[str], ungrounded: Sequence[str]) -> list[tuple[int, int | None]]:
    """Claims of the ungrounded answer that differ from the grounded one (difflib over normalised text).

    Returns (index in ``ungrounded``, index of its grounded counterpart or None for an inserted claim).
    Claims the grounded answer has and the ungrounded one dropped are not returned: an omission is not
    an unsupported statement.
    """
    matcher = difflib.SequenceMatcher(None, [normalize(s) for s in grounded], [normalize(s) for s in ungrounded],
                                      autojunk=False)
    changed: list[tuple[int, int | None]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace":
            changed.extend((j, min(i1 + (j - j1), i2 - 1)) for j in range(j1, j2))
        elif tag == "insert":
            changed.extend((j, None) for j in range(j1, j2))
    return changed


def closest_sibling(answer: str, candidates: Sequence[Example]) -> Example | None:
    """The candidate whose answer is most similar to ``answer`` (difflib ratio), or None."""
    if not candidates:
        return None
    return max(candidates, key=lambda ex: difflib.SequenceMatcher(None, answer, ex.answer, autojunk=False).ratio())


def least_supported(claims: Sequence[str], index: EvidenceIndex) -> int:
    """Index of the claim with the lowest lexical support in the context."""
    return int(np.argmin([index.support(c) for c in claims]))


def _grounded_by_group(examples: Iterable[Example]) -> dict[str, list[Example]]:
    grouped: dict[str, list[Example]] = defaultdict(list)
    for example in examples:
        if example.label == "grounded":
            grouped[source_group(example)].append(example)
    return grouped


def _pair(example: Example, premise: str, claim: str, label: str, source: str) -> Pair:
    return Pair(premise=premise, hypothesis=claim, label=label, source=source, group=source_group(example),
                example_id=example.id)


# ---------------------------------------------------------------- the two recipes


def _positives(example: Example, index: EvidenceIndex, k: int, source: str) -> list[Pair]:
    return [_pair(example, index.evidence(c, k), c, "supported", source) for c in claims_of(example)]


def _pairs_negatives(example: Example, sibling: Example | None, index: EvidenceIndex, k: int) -> list[Pair]:
    claims = claims_of(example)
    if not claims:
        return []
    if sibling is not None:
        changed = changed_claims(claims_of(sibling), claims)
        return [_pair(example, index.evidence(claims[j], k), claims[j], "unsupported", "diff") for j, _ in changed]
    j = least_supported(claims, index)
    return [_pair(example, index.evidence(claims[j], k), claims[j], "unsupported", "least-supported")]


def pairs_recipe(examples: Sequence[Example], evidence_k: int = 2, evidence: str = "tfidf") -> list[Pair]:
    """The ``pairs`` recipe: every labelled example contributes (see the module docstring)."""
    indexes, siblings = _Indexes(evidence), _grounded_by_group(examples)
    out: list[Pair] = []
    for example in examples:
        index = indexes.of(example)
        if example.label == "grounded":
            out.extend(_positives(example, index, evidence_k, "grounded"))
        elif example.label == "ungrounded":
            sibling = closest_sibling(example.answer, siblings.get(source_group(example), []))
            out.extend(_pairs_negatives(example, sibling, index, evidence_k))
    return out


def _diff_negatives(example: Example, sibling: Example, index: EvidenceIndex, k: int) -> list[Pair]:
    grounded, claims = claims_of(sibling), claims_of(example)
    out = []
    for j, i in changed_claims(grounded, claims):
        anchor = grounded[i] if i is not None else claims[j]
        out.append(_pair(example, index.evidence(anchor, k), claims[j], "unsupported", "diff"))
    return out


def diff_recipe(examples: Sequence[Example], evidence_k: int = 1, evidence: str = "tfidf") -> list[Pair]:
    """The ``diff`` recipe: contrasts between ungrounded answers and their closest grounded sibling."""
    indexes, siblings = _Indexes(evidence), _grounded_by_group(examples)
    out: list[Pair] = []
    used: set[str] = set()
    for example in examples:
        if example.label != "ungrounded":
            continue
        sibling = closest_sibling(example.answer, siblings.get(source_group(example), []))
        if sibling is None:
            continue
        index = indexes.of(example)
        negatives = _diff_negatives(example, sibling, index, evidence_k)
        if negatives and sibling.id not in used:
            used.add(sibling.id)
            out.extend(_positives(sibling, indexes.of(sibling), evidence_k, "diff-grounded"))
        out.extend(negatives)
    return out


RECIPES: dict[str, Callable[[Sequence[Example], int, str], list[Pair]]] = {"pairs": pairs_recipe,
                                                                          "diff": diff_recipe}
"""Recipes by name."""


def default_k(recipe: str) -> int:
    """Context sentences per premise when none is asked for: 1 for ``diff``, 2 otherwise."""
    return 1 if recipe == "diff" else 2


def build_pairs(examples: Sequence[Example], recipe: str, evidence_k: int | None = None,
                evidence: str = "tfidf") -> list[Pair]:
    """Pairs from labelled examples with the named recipe (unlabelled examples are ignored).

    ``evidence_k`` is how many context sentences form the evidence (default: :func:`default_k`);
    ``evidence`` how they are ranked. Examples with gold evidence spans (``meta["evidence"]``) are
    paired by :func:`gold_evidence_pairs` instead of the recipe.
    """
    if recipe not in RECIPES:
        raise ValueError(f"unknown recipe {recipe!r}; known: {', '.join(RECIPES)}")
    k = evidence_k if evidence_k is not None else default_k(recipe)
    gold = [ex for ex in examples if names_evidence(ex)]
    rest = [ex for ex in examples if not names_evidence(ex)]
    return RECIPES[recipe](rest, k, evidence) + gold_evidence_pairs(gold, k, evidence)


def names_evidence(example: Example) -> bool:
    """Whether the example says where its evidence is (``meta["evidence"]``, empty when there is none)."""
    return isinstance(example.meta.get("evidence"), list)


def gold_spans(example: Example) -> list[tuple[int, int]]:
    """The example's gold evidence spans (``meta["evidence"]``: [start, end] into the first document)."""
    spans = example.meta.get("evidence")
    if not isinstance(spans, list):
        return []
    return [(int(s[0]), int(s[1])) for s in spans
            if isinstance(s, list | tuple) and len(s) == 2 and all(isinstance(x, int) for x in s) and s[0] < s[1]]


def _sentence_offsets(doc: str, sents: Sequence[str]) -> list[tuple[int, int] | None]:
    """Where each sentence of ``doc`` lies in it (searched in order), None when not found verbatim."""
    out: list[tuple[int, int] | None] = []
    cursor = 0
    for sentence in sents:
        start = doc.find(sentence, cursor)
        if start < 0:
            out.append(None)
            continue
        out.append((start, start + len(sentence)))
        cursor = start + len(sentence)
    return out


def gold_evidence_pairs(examples: Sequence[Example], evidence_k: int = 2, evidence: str = "tfidf",
                        near_misses: int = 2) -> list[Pair]:
    """Pairs from examples that name their evidence: the gold sentences, and retrieved near misses.

    Grounded examples: (gold sentences, claim) is 'supported'. Ungrounded examples with gold spans
    (a contradicted hypothesis): (gold sentences, claim) is 'contradiction'. For every labelled example,
    the ``near_misses`` best-ranked premises of ``evidence_k`` sentences that contain no gold sentence
    are 'unsupported': a related clause is not evidence.
    """
    indexes = _Indexes(evidence)
    out: list[Pair] = []
    for example in examples:
        index = indexes.of(example)
        doc = example.context[0]
        offsets = _sentence_offsets(doc, document_sentences(doc))
        spans = gold_spans(example)
        gold = sorted(i for i, where in enumerate(offsets) if where and i < len(index.sentences)
                      and any(where[0] < end and start < where[1] for start, end in spans))
        for claim in claims_of(example)[:1]:
            if gold:
                premise = " ".join(index.sentences[i] for i in gold[:max(evidence_k, 2)])
                label = "supported" if example.label == "grounded" else "contradiction"
                out.append(_pair(example, premise, claim, label, "gold-evidence"))
            others = [i for i in index.ranked(claim) if i not in gold]
            for j in range(near_misses):
                chunk = sorted(others[j * evidence_k:(j + 1) * evidence_k])
                if chunk:
                    out.append(_pair(example, " ".join(index.sentences[i] for i in chunk), claim, "unsupported",
                                     "near-miss"))
    return out


# ---------------------------------------------------------------- synthetic hard negatives

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


def _synthetic_sources(examples: Sequence[Example], indexes: _Indexes, k: int) -> list[_EditSource]:
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
    indexes = _Indexes(evidence)
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


# ---------------------------------------------------------------- NLI rows

detokenize_ptb = detokenize
"""PTB detokenisation, shared with the NLI TSV data adapter."""
NLI_LABELS = ("entailment", "neutral", "contradiction")
"""The three NLI labels, in head order."""


def read_nli_tsv(path: str | Path) -> list[Pair]:
    """Rows of a ``label<TAB>premise<TAB>hypothesis`` file as NLI pairs; bad rows raise DataError."""
    path = Path(path)
    if not path.is_file():
        raise DataError([RowError(file=str(path), line=0, field="<file>", message="no such file")])
    pairs: list[Pair] = []
    errors: list[RowError] = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                errors.append(RowError(file=str(path), line=number, field="<row>",
                                       message=f"expected 3 tab-separated fields, got {len(parts)}"))
                continue
            label, premise, hypothesis = (p.strip() for p in parts)
            if number == 1 and label.lower() == "label":
                continue
            if label.lower() not in NLI_LABELS:
                errors.append(RowError(file=str(path), line=number, field="label",
                                       message=f"{label!r} is not one of {', '.join(NLI_LABELS)}"))
                continue
            pairs.append(Pair(premise=detokenize_ptb(premise), hypothesis=detokenize_ptb(hypothesis),
                              label=label.lower(), source=f"nli:{path.name}", group=f"nli:{path.name}:{number}"))
    if errors:
        raise DataError(errors)
    return pairs
