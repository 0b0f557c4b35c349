"""Direct judge: one call reads question, documents and answer and says grounded or not.

The direct-prompting baseline of the legal groundedness benchmark. ``template=direct``
asks for a verdict, a reason and a probability; ``template=lynx`` is the
Lynx-style PASS/FAIL prompt. Any prompt folder may override either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from groundjudge.judges import register
from groundjudge.judges.llm_judge import LLMJudgeSettings, abstain, provider_abstention
from groundjudge.llm import ProviderError
from groundjudge.types import Example, JudgeResult, LLMCall, Verdict


class DirectOutput(BaseModel):
    """Reply of the ``direct`` prompt."""

    reasoning: str
    verdict: Literal["grounded", "ungrounded"]
    score: float = Field(ge=0.0, le=1.0, description="Probability that the answer is grounded.")


class LynxOutput(BaseModel):
    """Reply of the ``lynx`` prompt."""

    REASONING: list[str] | str
    SCORE: Literal["PASS", "FAIL"]


@register
@dataclass(frozen=True)
class DirectJudge(LLMJudgeSettings):
    """One LLM call: grounded or ungrounded, with reasoning (templates: direct, lynx)."""

    name: ClassVar[str] = "direct"
    TEMPLATES: ClassVar[tuple[str, ...]] = ("direct", "lynx")
    template: str = "direct"
    output: Literal["verdict", "passfail"] = "verdict"

    def template_names(self) -> tuple[str, ...]:
        """The one prompt this judge renders (``template``)."""
        return (self.template,)

    def expected_calls(self, example: Example) -> list[tuple[str, dict, int]]:
        """(prompt, variables, expected output tokens) of the calls one example needs (for --dry-run)."""
        variables = {"question": example.question, "context": list(example.context), "answer": example.answer}
        return [(self.template, variables, 120)]

    async def judge(self, example: Example) -> JudgeResult:
        """Ask once; the model's verdict is the label, its probability the score."""
        calls: list[LLMCall] = []
        passfail = self.output == "passfail" or self.template == "lynx"
        variables = {"question": example.question, "context": list(example.context), "answer": example.answer}
        try:
            parsed = await self.ask(self.template, variables,
                                             LynxOutput if passfail else DirectOutput, calls)
        except ProviderError as err:
            return provider_abstention(example, err, calls, self.path)
        if parsed is None:
            return abstain(example, "parse_failure", calls, self.path)
        if passfail:
            label = "grounded" if parsed.SCORE == "PASS" else "ungrounded"
            score = 1.0 if label == "grounded" else 0.0
        else:
            label, score = parsed.verdict, parsed.score
        return JudgeResult(verdict=Verdict(example_id=example.id, label=label, score=score, path=self.path),
                           calls=tuple(calls))
