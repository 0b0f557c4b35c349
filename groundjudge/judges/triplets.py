"""Triplets judge: RefChecker-style (subject, predicate, object) extraction, each triplet checked.

Aggregation over the triplets' verdicts: ``strict`` — grounded only when every
triplet is supported; ``soft`` — the share of supported triplets against the
threshold; ``majority`` — grounded when supported triplets outnumber the others.

As in the claims chain, triplets are extracted from the answer's content only (spans that address the judge are
cut first), and with ``quote_check`` a "supported" triplet stands only when its quote is found in the documents.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, Field, create_model

from groundjudge.judges import register
from groundjudge.judges import injection_guard as guard
from groundjudge.judges.claims import QUOTE_NOT_FOUND, locate_evidence, quote_found
from groundjudge.judges.llm_judge import LLMJudgeSettings, abstain, provider_abstention
from groundjudge.llm import ProviderError
from groundjudge.text import sentences
from groundjudge.types import Claim, ClaimVerdict, Example, JudgeResult, LLMCall, Verdict


MAX_TRIPLETS = 24
"""Most triplets one extraction may return (the legal answers averaged five; a grammar-constrained decoder stops
a looping list here)."""
PART_MAX_CHARS = 200
"""Longest subject, predicate or object."""
EVIDENCE_MAX_CHARS = 300
"""Longest quoted evidence of a check. A grammar-constrained decoder (llama.cpp's) stops the quote there; without
it a small model copies whole sections and runs out of output tokens before closing the JSON."""

Part = Annotated[str, Field(max_length=PART_MAX_CHARS)]


class TripletList(BaseModel):
    """Reply of ``triplets_extract``: each triplet is [subject, predicate, object] or [subject, predicate]."""

    triplets: list[Annotated[list[Part], Field(min_length=2, max_length=3)]] = Field(max_length=MAX_TRIPLETS)


class TripletCheck(BaseModel):
    """One entry of the ``triplets_check`` reply: the statement's number, its label, the deciding quote."""

    statement: int = Field(ge=1)
    verdict: Literal["supported", "contradicted", "not_mentioned"]
    evidence: str = Field("", max_length=EVIDENCE_MAX_CHARS)


LABELS = {"supported": "supported", "contradicted": "contradicted", "not_mentioned": "unverifiable"}
"""The check's labels as claim labels. They are plain words the prompt defines, not NLI's "entailment" /
"contradiction" / "neutral": with those the 1.5B model gave "entailment" to 17 of 2,625 statements on six sets
and "contradiction" to 58% of the statements of grounded answers, often quoting a sentence that supports them
(results/llm/triplets_fix/README.md)."""


def checkable(triplet: list[str]) -> list[str] | None:
    """The extracted triplet as it is checked: (subject, predicate, object), or (subject, predicate) for a statement
    without an object ("man | is outside"); None when it asserts nothing (an empty subject or predicate)."""
    parts = [part.strip() for part in triplet]
    if len(parts) < 2 or not parts[0] or not parts[1]:
        return None
    return parts[:2] if len(parts) == 2 or not parts[2] else parts[:3]


@register
@dataclass(frozen=True)
class TripletsJudge(LLMJudgeSettings):
    """RefChecker-style: extract (subject, predicate, object) triplets, check each; strict/soft/majority."""

    name: ClassVar[str] = "triplets"
    TEMPLATES: ClassVar[tuple[str, ...]] = ("triplets_extract", "triplets_check")
    aggregation: Literal["strict", "soft", "majority"] = "strict"
    threshold: float = 0.5
    quote_check: bool = True

    @property
    def uses_threshold(self) -> bool:
        """Only the soft rule compares with the threshold; strict and majority need no calibration."""
        return self.aggregation == "soft"

    async def _chain(self, example: Example, calls: list[LLMCall]) -> tuple[ClaimVerdict, ...] | str:
        content = guard.answer_content(example, guard.screen(example, self.injection_detectors))
        if not content.strip():
            return "no_claims"
        extracted = await self.ask("triplets_extract", {"question": example.question, "answer": content},
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
        by_number = {c.statement: c for c in checked.checks}
        if set(by_number) != set(range(1, len(triplets) + 1)):
            return "parse_failure"
        verdicts = []
        for index, triplet in enumerate(triplets, start=1):
            check = by_number[index]
            label, reason = self.checked_label(check, example.context)
            verdicts.append(ClaimVerdict(claim=Claim(text=" | ".join(triplet)), label=label, reason=reason,
                                         score=1.0 if label == "supported" else 0.0,
                                         evidence=locate_evidence(check.evidence, example.context)))
        return tuple(verdicts)

    def checked_label(self, check: TripletCheck, context: tuple[str, ...]) -> tuple[str, str | None]:
        """The triplet's label after the quote check: "supported" stands only with a quote found in the documents;
        otherwise it is unverifiable (an answer cannot supply its own proof)."""
        label = LABELS[check.verdict]
        if label != "supported" or not self.quote_check or quote_found(check.evidence, list(context)):
            return label, None
        said = f"quote {check.evidence[:120]!r} is not in the documents" if check.evidence.strip() else "no quote given"
        return "unverifiable", f"{QUOTE_NOT_FOUND}: {said} (the model said supported)"

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

    async def assess(self, example: Example) -> JudgeResult:
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
