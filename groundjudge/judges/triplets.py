"""Triplets judge: RefChecker-style (subject, predicate, object) extraction, each triplet checked.

Aggregation over the triplets' verdicts: ``strict`` — grounded only when every
triplet is entailed; ``soft`` — the share of entailed triplets against the
threshold; ``majority`` — grounded when entailed triplets outnumber the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import BaseModel, Field, create_model

from groundjudge.judges import register
from groundjudge.judges.claims import is_placeholder, locate_evidence
from groundjudge.judges.llm_judge import LLMJudgeSettings, abstain, provider_abstention
from groundjudge.llm import ProviderError
from groundjudge.text import sentences
from groundjudge.types import Claim, ClaimVerdict, Example, JudgeResult, LLMCall, Verdict


class TripletList(BaseModel):
    """Reply of ``triplets_extract``."""

    triplets: list[list[str]]


EVIDENCE_MAX_CHARS = 300
"""Schema bound on a check's quoted evidence. A grammar-constrained decoder (llama.cpp's) stops the quote there; without
it a small model copies whole sections and runs out of output tokens before closing the JSON. Not validated, so an
API model's longer quote is kept."""


class TripletCheck(BaseModel):
    """One entry of the ``triplets_check`` reply."""

    triplet: int = Field(ge=1)
    verdict: Literal["entailment", "contradiction", "neutral"]
    evidence: str = Field("", json_schema_extra={"maxLength": EVIDENCE_MAX_CHARS})


LABELS = {"entailment": "supported", "contradiction": "contradicted", "neutral": "unverifiable"}


def checkable(triplet: list[str]) -> list[str] | None:
    """The extracted triplet as it is checked: (subject, predicate, object), or (subject, predicate) for a statement
    without an object ("man | is outside"); None when it asserts nothing: an empty or placeholder subject or
    predicate, or a placeholder object (``["<subject>", "<predicate>", "<object>"]`` is the reply example a small
    model copies; checked, it comes back "neutral" and fails a grounded answer under the strict rule)."""
    if len(triplet) < 2 or is_placeholder(triplet[0]) or is_placeholder(triplet[1]):
        return None
    if len(triplet) == 2 or not triplet[2].strip():
        return triplet[:2]
    return None if is_placeholder(triplet[2]) else triplet[:3]


@register
@dataclass(frozen=True)
class TripletsJudge(LLMJudgeSettings):
    """RefChecker-style: extract (subject, predicate, object) triplets, check each; strict/soft/majority."""

    name: ClassVar[str] = "triplets"
    TEMPLATES: ClassVar[tuple[str, ...]] = ("triplets_extract", "triplets_check")
    aggregation: Literal["strict", "soft", "majority"] = "strict"
    threshold: float = 0.5

    @property
    def uses_threshold(self) -> bool:
        """Only the soft rule compares with the threshold; strict and majority need no calibration."""
        return self.aggregation == "soft"

    async def _chain(self, example: Example, calls: list[LLMCall]) -> tuple[ClaimVerdict, ...] | str:
        extracted = await self.ask("triplets_extract",
                                            {"question": example.question, "answer": example.answer},
                                            TripletList, calls)
        if extracted is None:
            return "parse_failure"
        triplets = [t for t in map(checkable, extracted.triplets) if t]
        if not triplets:
            return "no_claims"
        reply_model = create_model(f"TripletChecks{len(triplets)}",
                                   checks=(list[TripletCheck], Field(min_length=len(triplets),
                                                                     max_length=len(triplets))))
        checked = await self.ask("triplets_check",
                                          {"context": list(example.context), "triplets": triplets}, reply_model, calls)
        if checked is None:
            return "parse_failure"
        by_number = {c.triplet: c for c in checked.checks}
        if set(by_number) != set(range(1, len(triplets) + 1)):
            return "parse_failure"
        verdicts = []
        for index, triplet in enumerate(triplets, start=1):
            check = by_number[index]
            label = LABELS[check.verdict]
            verdicts.append(ClaimVerdict(claim=Claim(text=" | ".join(triplet)), label=label,
                                         score=1.0 if label == "supported" else 0.0,
                                         evidence=locate_evidence(check.evidence, example.context)))
        return tuple(verdicts)

    def decide(self, verdicts: tuple[ClaimVerdict, ...]) -> tuple[str, float]:
        """The answer's label and score under the chosen aggregation."""
        supported = sum(v.label == "supported" for v in verdicts)
        share = supported / len(verdicts)
        if self.aggregation == "strict":
            return ("grounded" if supported == len(verdicts) else "ungrounded"), share
        if self.aggregation == "majority":
            return ("grounded" if supported > len(verdicts) - supported else "ungrounded"), share
        return ("grounded" if share >= self.threshold else "ungrounded"), share

    def expected_calls(self, example: Example) -> list[tuple[str, dict, int]]:
        """(prompt, variables, expected output tokens) of one example's calls (two triplets per sentence assumed)."""
        n = 2 * max(len(sentences(example.answer)), 1)
        triplets = [["subject", "predicate", "object"]] * n
        return [("triplets_extract", {"question": example.question, "answer": example.answer}, 20 * n),
                ("triplets_check", {"context": list(example.context), "triplets": triplets}, 30 * n)]

    async def judge(self, example: Example) -> JudgeResult:
        """Extract and check the triplets, then aggregate."""
        calls: list[LLMCall] = []
        try:
            outcome = await self._chain(example, calls)
        except ProviderError as err:
            return provider_abstention(example, err, calls, self.path)
        if isinstance(outcome, str):
            return abstain(example, outcome, calls, self.path)
        label, score = self.decide(outcome)
        threshold = self.threshold if self.aggregation == "soft" else None
        return JudgeResult(verdict=Verdict(example_id=example.id, label=label, score=score, threshold=threshold,
                                           claims=outcome, path=self.path), calls=tuple(calls))
