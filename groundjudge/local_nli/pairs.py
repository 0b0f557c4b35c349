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

Synthetic edits live in :mod:`~groundjudge.local_nli.synthetic`, NLI rows in :mod:`~groundjudge.local_nli.nli_rows`.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from groundjudge.formats._common import short_hash
from groundjudge.local_nli.evidence_index import EvidenceIndex
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
    support: float | None = None
    """A soft label: the probability that the premise supports the claim (a teacher's score); None: the label's
    own hard target."""
    origin: str | None = None
    """The training source the pair came from in a mixed run (gold, synthetic, documents, teacher, nli); None
    outside one."""
    weight: float = 1.0
    """The pair's weight in the loss: its source's ``--weight`` (1.0 unless given)."""

    def to_json(self) -> str:
        """One JSON line (``origin`` and ``weight`` only when set: a pair of an unmixed run reads as before)."""
        fields = asdict(self)
        if self.origin is None and self.weight == 1.0:
            del fields["origin"], fields["weight"]
        return json.dumps(fields, ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str) -> Pair:
        """Read back a line written by :meth:`to_json`."""
        return cls(**json.loads(line))


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


class EvidenceIndexes:
    """EvidenceIndex per distinct context, built on first use (answers often share a document)."""

    def __init__(self, method: str = "tfidf", model: Any = None) -> None:
        """Rank context sentences by ``method`` ('tfidf' or 'embedding', by the embedder ``model``: None for the
        packaged all-MiniLM-L6-v2)."""
        self.method = method
        self.model = model
        self._items: dict[tuple[str, ...], EvidenceIndex] = {}

    def of(self, example: Example) -> EvidenceIndex:
        """The index of the example's context."""
        if example.context not in self._items:
            self._items[example.context] = EvidenceIndex(context_sentences(example) or [example.context_text],
                                                         self.method, self.model)
        return self._items[example.context]


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
    indexes, siblings = EvidenceIndexes(evidence), _grounded_by_group(examples)
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
    indexes, siblings = EvidenceIndexes(evidence), _grounded_by_group(examples)
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
    indexes = EvidenceIndexes(evidence)
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


_MOVED = {
    "synthetic": ("SYNTHETIC_CONTRADICTIONS", "EDITS", "edit_number", "edit_negation", "edit_entity", "edit_antonym",
                  "edit_modal", "edit_sentence", "synthetic_pairs"),
    "nli_rows": ("NLI_LABELS", "detokenize_ptb", "read_nli_tsv"),
}


def __getattr__(name: str):
    """Names that moved to :mod:`~groundjudge.local_nli.synthetic` and :mod:`~groundjudge.local_nli.nli_rows`,
    still importable from here (looked up on first use: those modules import this one)."""
    from importlib import import_module

    for module, names in _MOVED.items():
        if name in names:
            return getattr(import_module(f"groundjudge.local_nli.{module}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
