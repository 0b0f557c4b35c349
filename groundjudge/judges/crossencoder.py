"""Cross-encoder judge: a model fine-tuned with ``groundjudge train`` used as an NLI judge.

``crossencoder:model=DIR`` (required) reads the model's ``groundjudge_card.json``
for its maximum length and tau (a setting given in the spec wins). When the
card says which input the model was trained on (``input``: the top-k context
sentences by TF-IDF against '<question> <answer>' for short answers), the judge
builds exactly that; otherwise it judges like ``nli``: claims, evidence windows,
supported share. Either way ``score`` is ``score_batch`` of one answer, so a run that hands the judge answers
in chunks decides each as it would alone.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from groundjudge.judges import SpecError, register
from groundjudge.judges.nli import NLIJudge, claim_label, score_answer
from groundjudge.judges.pair_batch import PairBatch, scored_answers
from groundjudge.judges.scoring import Scored
from groundjudge.local_nli.nli_model import CONTRADICTION, ENTAILMENT, NEUTRAL
from groundjudge.types import Claim, ClaimLabel, ClaimVerdict, Evidence, Example

CARD_FILE = "groundjudge_card.json"
"""The training card written beside a fine-tuned model."""


@lru_cache(maxsize=16)
def read_card(model: str) -> dict[str, Any]:
    """The training card of a fine-tuned model directory ({} when there is none)."""
    try:
        return json.loads((Path(model).expanduser() / CARD_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def locate_evidence(premise: str, context: tuple[str, ...]) -> Evidence:
    """The premise as Evidence, with its document and offsets when it occurs verbatim."""
    for doc_index, doc in enumerate(context):
        start = doc.find(premise)
        if start >= 0:
            return Evidence(text=premise, doc_index=doc_index, start=start, end=start + len(premise))
    return Evidence(text=premise)


@register
@dataclass(frozen=True)
class CrossEncoderJudge(NLIJudge):
    """A cross-encoder fine-tuned on your data (``groundjudge train``), judging claim by claim."""

    name: ClassVar[str] = "crossencoder"
    model: str = ""
    tau: float | None = None
    """None: the card's tau (fitted on dev when it was trained), else 0.5."""
    _card: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.model:
            raise SpecError("crossencoder needs model=DIR (a model trained with `groundjudge train`)")
        card = read_card(self.model)
        object.__setattr__(self, "_card", card)
        if self.max_length is None and card.get("max_length"):
            object.__setattr__(self, "max_length", int(card["max_length"]))
        if self.tau is None:
            object.__setattr__(self, "tau", float(card["tau"]) if card.get("tau") is not None else 0.5)

    def rule(self, entail: float, contradict: float) -> ClaimLabel:
        """The seed rule; with a two-way head (no neutral) support is P(supported) >= tau, as fitted on dev."""
        if NEUTRAL not in self.engine().columns.values() and entail >= self.tau:
            return "supported"
        return claim_label(entail, contradict, self.tau)

    def score_batch(self, examples: Sequence[Example]) -> list[Scored]:
        """:meth:`score` of every example in one model call: with the input the model was trained on when its card
        says how (each claim against its top-k context sentences, an index built once per document), else as
        ``nli`` (claims against evidence windows)."""
        if not self._card.get("input"):
            return super().score_batch(examples)
        from groundjudge.local_nli.evidence_index import EvidenceIndex, evidence_for
        from groundjudge.local_nli.pairs import claims_of, context_sentences

        k = int(self._card.get("evidence_k") or (1 if self._card.get("recipe") == "diff" else 2))
        indexes: dict[tuple[str, ...], EvidenceIndex] = {}
        claims_per = [claims_of(example) for example in examples]
        for example, claims in zip(examples, claims_per):
            if claims and example.context not in indexes:
                indexes[example.context] = EvidenceIndex(context_sentences(example) or [example.context_text],
                                                         self._card.get("evidence", "tfidf"))
        found = iter(evidence_for([(indexes[ex.context], claims) for ex, claims in zip(examples, claims_per)
                                   if claims], k))
        batch = PairBatch()
        for claims in claims_per:
            if not claims:
                batch.skip()
                continue
            mine = next(found)
            batch.add((claims, mine), mine, claims)
        return scored_answers(self.engine(), examples, batch, self._card_scored)

    def _card_scored(self, example: Example, plan: Any, probs: Any, shared: dict[str, float]) -> Scored:
        """One answer's claim verdicts and score from its claims' probabilities (rows of the chunk's call)."""
        claims, premises = plan
        verdicts = [self._card_verdict(example, claim, premise, row)
                    for claim, premise, row in zip(claims, premises, probs)]
        return Scored(score=score_answer(verdicts, self.answer_score), claims=verdicts,
                      timings={**shared, "answer_pairs": float(len(claims))})

    def _card_verdict(self, example: Example, claim: str, premise: str, row) -> ClaimVerdict:
        """One claim's verdict from its pair's probabilities, its premise located in the context as evidence."""
        start = example.answer.find(claim)
        span = (start, start + len(claim)) if start >= 0 else (None, None)
        return ClaimVerdict(claim=Claim(text=claim, start=span[0], end=span[1]),
                            label=self.rule(float(row[ENTAILMENT]), float(row[CONTRADICTION])),
                            score=float(row[ENTAILMENT]), evidence=locate_evidence(premise, example.context))

    def path(self) -> str:
        """What produced the verdicts."""
        return f"local:crossencoder({Path(self.model).name})"
