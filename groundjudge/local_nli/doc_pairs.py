"""The checked (evidence, claim) pairs of one document: the unit of work of ``groundjudge train --from-documents``.

Every premise is the evidence the trained judge will select for the pair's claim (the card's ``evidence`` method
and ``evidence_k``: :mod:`~groundjudge.local_nli.doc_evidence`). For every grounded claim (a sentence, a fusion of
two or three sentences) whose selected evidence holds all its supporting sentences (else the claim is dropped,
``evidence_missed_support``):

* the positive pair (``sentence``, ``fusion2``, ``fusion3``);
* a rule paraphrase when one passes ``keeps_meaning`` and its evidence holds the support (``paraphrase:rule``);
* one ungrounded claim against its own evidence: a typed edit (``edit:<type>``) or an inserted detail
  (``detail``), whichever comes first in a seeded order and passes its checks;
* where a list word opens a list in the claim, its scope narrowed: ``scope:only`` ("includes A, B and C" ->
  "includes only C", ungrounded, checked as an edit), and for an open list joined by "and" the grounded contrast
  ``scope:subset`` ("includes C": fewer items, no "only");
* for a fusion, the hard negative ``removed_support``: the same claim against its evidence with one supporting
  sentence taken out of the document (the next-best match in its place), when ``support_removed`` holds.

LLM paraphrases and the LLM check are added by :mod:`~groundjudge.local_nli.doc_llm`. Every random choice is drawn
from a generator seeded by the run's seed, the document's key and the claim's place, so a document's pairs do not
depend on which other documents are processed, or in which order.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from groundjudge.local_nli.doc_checks import (
    detail_problem,
    edit_problem,
    paraphrase_problem,
    support_removed,
)
from groundjudge.local_nli.doc_claims import (
    Claim,
    fusion_claims,
    reordered,
    rule_paraphrases,
    sentence_claims,
)
from groundjudge.local_nli.doc_evidence import MISSED, DocEvidence
from groundjudge.local_nli.doc_negatives import detail_candidates, narrowed_lists, typed_edits
from groundjudge.local_nli.doc_sources import Document
from groundjudge.perturb.engine import seeded
from groundjudge.text import normalize

MAX_EDIT_TRIES = 8
"""Edit candidates tried per claim before giving up on it."""

EDIT_FIRST = 0.67
"""Share of claims whose negative is a typed edit when both kinds apply (the rest: an inserted detail)."""


@dataclass(frozen=True)
class DocPair:
    """One written pair: the premise and claim, the label, what made it and the checks it passed."""

    premise: str
    hypothesis: str
    label: str
    """'supported' or 'unsupported'."""
    kind: str
    rule: str | None
    checks: tuple[str, ...]
    support: tuple[int, ...]
    """Indices of the document sentences that support the claim (of the original claim, for a negative)."""
    removed: int | None = None
    """For ``removed_support``: the supporting sentence taken out of the premise."""


@dataclass
class UnitPairs:
    """What one document gave: its pairs, and per check (and per kind) the candidates it dropped."""

    key: str
    group: str
    split: str
    file: str
    pairs: list[DocPair] = field(default_factory=list)
    dropped: dict[str, Counter] = field(default_factory=dict)

    def drop(self, kind: str, check: str) -> None:
        """Count one candidate of ``kind`` dropped by ``check``."""
        self.dropped.setdefault(check, Counter())[kind] += 1

    def to_json(self) -> str:
        """One JSON line (keys sorted, so the same pairs give the same bytes)."""
        body = {"key": self.key, "group": self.group, "split": self.split, "file": self.file,
                "pairs": [asdict(p) for p in self.pairs],
                "dropped": {check: dict(sorted(kinds.items())) for check, kinds in sorted(self.dropped.items())}}
        return json.dumps(body, ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, line: str) -> UnitPairs:
        """Read back a line written by :meth:`to_json`."""
        body = json.loads(line)
        pairs = [DocPair(**{**p, "checks": tuple(p["checks"]), "support": tuple(p["support"])})
                 for p in body["pairs"]]
        return cls(key=body["key"], group=body["group"], split=body["split"], file=body["file"], pairs=pairs,
                   dropped={check: Counter(kinds) for check, kinds in body["dropped"].items()})


class _Unit:
    """The work on one document: its evidence selection, the texts already used, the pairs and the drops."""

    def __init__(self, doc: Document, split: str, evidence: DocEvidence, seed: int):
        self.doc, self.evidence, self.seed = doc, evidence, seed
        self.seen: set[str] = set()
        self.out = UnitPairs(key=doc.key, group=doc.group, split=split, file=doc.file)

    def add(self, pair: DocPair) -> bool:
        """Keep a pair unless its claim was already used with that premise (``duplicate``)."""
        key = normalize(pair.premise) + "\x1f" + normalize(pair.hypothesis)
        if key in self.seen:
            self.out.drop(pair.kind, "duplicate")
            return False
        self.seen.add(key)
        self.out.pairs.append(pair)
        return True

    def positive(self, claim: Claim, premise: str, checks: tuple[str, ...] = ()) -> None:
        """The claim as a supported pair."""
        self.add(DocPair(premise, claim.text, "supported", claim.kind, claim.rule, checks, claim.support))

    def paraphrase(self, claim: Claim, place: str) -> None:
        """The first rule paraphrase of the claim that keeps its meaning and whose evidence holds the support."""
        candidates = [(c.text, c.rule) for c in rule_paraphrases(claim, seeded(self.seed, self.doc.key, place, "p"))]
        turned = reordered(claim)
        if turned is not None:
            candidates.append((turned.text, turned.rule))
        for text, rule in candidates:
            problem = paraphrase_problem(claim.text, text)
            premise = self.evidence.supported_premise(text, claim.support) if problem is None else None
            if problem is None and premise is None:
                problem = MISSED
            if problem is not None:
                self.out.drop("paraphrase:rule", problem)
                continue
            if self.add(DocPair(premise, text, "supported", "paraphrase:rule", rule, ("differs", "keeps_meaning"),
                                claim.support)):
                return

    def _edit(self, claim: Claim, place: str) -> bool:
        rng = seeded(self.seed, self.doc.key, place, "edit")
        tries = 0
        for slug, candidate in typed_edits(claim.text, self.doc.example.context, rng):
            if tries >= MAX_EDIT_TRIES:
                break
            tries += 1
            problem = edit_problem(claim.text, candidate, self.doc.example.context)
            if problem is not None:
                self.out.drop(f"edit:{slug}", problem)
                continue
            if self.add(DocPair(self.evidence.premise(candidate.text), candidate.text, "unsupported", f"edit:{slug}",
                                candidate.rule, ("differs", "fluency", "not_in_document"), claim.support)):
                return True
        return False

    def _detail(self, claim: Claim, place: str, pool: Sequence[str]) -> bool:
        rng = seeded(self.seed, self.doc.key, place, "detail")
        for detail, candidate in detail_candidates(claim.text, pool, rng):
            problem = detail_problem(claim.text, candidate, self.doc.example.context, detail)
            if problem is not None:
                self.out.drop("detail", problem)
                continue
            if self.add(DocPair(self.evidence.premise(candidate.text), candidate.text, "unsupported", "detail",
                                candidate.rule, ("differs", "fluency", "not_in_document", "new_detail"),
                                claim.support)):
                return True
        return False

    def negative(self, claim: Claim, place: str, pool: Sequence[str]) -> None:
        """One ungrounded variant of the claim, against its own evidence: a typed edit or an inserted detail, in a
        seeded order."""
        edit_first = seeded(self.seed, self.doc.key, place, "order").random() < EDIT_FIRST
        if edit_first:
            self._edit(claim, place) or self._detail(claim, place, pool)
        else:
            self._detail(claim, place, pool) or self._edit(claim, place)

    def scope(self, claim: Claim, place: str) -> None:
        """The claim's scope narrowed to one item of a list (``scope:only``), with its grounded contrast when the
        list is open (``scope:subset``); one list per claim, the first in a seeded order that passes its checks."""
        found = narrowed_lists(claim.text)
        seeded(self.seed, self.doc.key, place, "scope").shuffle(found)
        for narrowed, subset in found:
            problem = edit_problem(claim.text, narrowed, self.doc.example.context)
            if problem is not None:
                self.out.drop("scope:only", problem)
                continue
            if not self.add(DocPair(self.evidence.premise(narrowed.text), narrowed.text, "unsupported", "scope:only",
                                    narrowed.rule, ("differs", "fluency", "not_in_document"), claim.support)):
                continue
            if subset is not None:
                premise = self.evidence.supported_premise(subset.text, claim.support)
                if premise is None:
                    self.out.drop("scope:subset", MISSED)
                else:
                    self.add(DocPair(premise, subset.text, "supported", "scope:subset", subset.rule, ("differs",),
                                     claim.support))
            return

    def removal(self, claim: Claim, place: str) -> None:
        """The fused claim against its evidence selected from the document without one supporting sentence."""
        order = list(range(len(claim.support)))
        seeded(self.seed, self.doc.key, place, "removal").shuffle(order)
        for at in order:
            removed = claim.support[at]
            premise = self.evidence.premise(claim.text, removed)
            if not support_removed(claim.parts[at], premise):
                self.out.drop("removed_support", "support_removed")
                continue
            if self.add(DocPair(premise, claim.text, "unsupported", "removed_support", None, ("support_removed",),
                                claim.support, removed)):
                return


def unit_pairs(doc: Document, split: str, pool: Sequence[str], evidence: DocEvidence | None = None,
               seed: int = 0) -> UnitPairs:
    """Every checked pair of one document (``pool``: details lent by other documents; ``evidence``: the judge's
    evidence selection, by default TF-IDF with k = 2)."""
    unit = _Unit(doc, split, evidence or DocEvidence(doc, "tfidf", 2), seed)
    claims = sentence_claims(doc.sentences) + fusion_claims(doc.sentences, seeded(seed, doc.key, "fusions"))
    text = "\n".join(doc.example.context)
    lent = [phrase for phrase in pool if phrase not in text]
    for number, claim in enumerate(claims):
        place = f"{claim.kind}:{number}"
        premise = unit.evidence.supported_premise(claim.text, claim.support)
        if premise is None:
            unit.out.drop(claim.kind, MISSED)
            continue
        unit.positive(claim, premise)
        unit.paraphrase(claim, place)
        unit.negative(claim, place, lent)
        unit.scope(claim, place)
        if claim.parts:
            unit.removal(claim, place)
    return unit.out


def kinds_of(units: Sequence[UnitPairs]) -> dict[str, Any]:
    """Pairs per kind and label over the units."""
    return dict(sorted(Counter(p.kind for u in units for p in u.pairs).items()))
