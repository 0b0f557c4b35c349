"""SelfCheck judge: SelfCheckGPT-style consistency of the answer with freshly sampled answers.

The judge model answers the question ``samples`` times from the documents at
a raised temperature; each sentence of the answer is then checked against
every sample. A sentence's inconsistency is the share of samples that do not
support it; the answer's score is one minus the worst sentence's
inconsistency. Needs a question: without one it abstains with ``no_question``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import ClassVar

from pydantic import BaseModel, Field, create_model

from groundjudge.judges import register
from groundjudge.judges.llm_judge import LLMJudgeSettings, abstain, provider_abstention
from groundjudge.llm import ProviderError
from groundjudge.text import sentence_spans
from groundjudge.types import Claim, ClaimVerdict, Example, JudgeResult, LLMCall, Verdict


ANSWER_MAX_CHARS = 1000
"""Longest sampled answer ("a few sentences" are asked for; a grammar-constrained decoder stops a rambling one). At
1,500 llama.cpp refuses the grammar the bound becomes ("number of rules ... exceeds sane defaults") and
llama-cpp-python's server dies with it; 1,000 parses."""


class SampledAnswer(BaseModel):
    """Reply of ``selfcheck_sample``."""

    answer: str = Field(max_length=ANSWER_MAX_CHARS)


class SentenceCheck(BaseModel):
    """One entry of the ``selfcheck_compare`` reply."""

    sentence: int = Field(ge=1)
    consistent: bool


@register
@dataclass(frozen=True)
class SelfCheckJudge(LLMJudgeSettings):
    """SelfCheckGPT-style: N sampled answers, each answer sentence checked against them (needs a question)."""

    name: ClassVar[str] = "selfcheck"
    TEMPLATES: ClassVar[tuple[str, ...]] = ("selfcheck_sample", "selfcheck_compare")
    samples: int = 3
    sample_temperature: float = 1.0
    threshold: float = 0.5

    async def _sample(self, example: Example, index: int, calls: list[LLMCall]) -> str | None:
        settings = self.llm_settings(temperature=self.sample_temperature)
        parsed = await self.ask("selfcheck_sample",
                                         {"context": list(example.context), "question": example.question},
                                         SampledAnswer, calls, settings=settings, sample_index=index)
        return None if parsed is None else parsed.answer

    async def _compare(self, sample: str, sentences: list[str], calls: list[LLMCall]) -> dict[int, bool] | None:
        reply_model = create_model(f"SentenceChecks{len(sentences)}",
                                   results=(list[SentenceCheck], Field(min_length=len(sentences),
                                                                       max_length=len(sentences))))
        parsed = await self.ask("selfcheck_compare",
                                         {"sample": sample, "sentences": sentences}, reply_model, calls)
        if parsed is None:
            return None
        result = {r.sentence: r.consistent for r in parsed.results}
        return result if set(result) == set(range(1, len(sentences) + 1)) else None

    def expected_calls(self, example: Example) -> list[tuple[str, dict, int]]:
        """(prompt, variables, expected output tokens) of one example's calls."""
        if not example.question:
            return []
        sentences = [example.answer[s:e] for s, e in sentence_spans(example.answer)] or [example.answer]
        sample = ("selfcheck_sample", {"context": list(example.context), "question": example.question},
                  max(len(example.answer) // 4, 40))
        compare = ("selfcheck_compare", {"sample": example.answer, "sentences": sentences}, 15 * len(sentences))
        return [sample, compare] * self.samples

    async def assess(self, example: Example) -> JudgeResult:
        """Sample, compare, and score by the least consistent sentence."""
        calls: list[LLMCall] = []
        if not example.question:
            return abstain(example, "no_question", calls, self.path)
        spans = list(sentence_spans(example.answer))
        if not spans:
            return abstain(example, "no_claims", calls, self.path)
        sentences = [example.answer[s:e] for s, e in spans]
        try:
            samples = await asyncio.gather(*(self._sample(example, i, calls) for i in range(self.samples)))
            samples = [s for s in samples if s]
            if not samples:
                return abstain(example, "parse_failure", calls, self.path)
            checks = await asyncio.gather(*(self._compare(s, sentences, calls) for s in samples))
        except ProviderError as err:
            return provider_abstention(example, err, calls, self.path)
        checks = [c for c in checks if c is not None]
        if not checks:
            return abstain(example, "parse_failure", calls, self.path)
        claims = []
        for index, (start, end) in enumerate(spans, start=1):
            inconsistency = sum(not c[index] for c in checks) / len(checks)
            claims.append(ClaimVerdict(claim=Claim(text=example.answer[start:end], start=start, end=end),
                                       label="supported" if inconsistency < 0.5 else "unverifiable",
                                       score=1.0 - inconsistency,
                                       reason=f"inconsistent with {inconsistency:.0%} of {len(checks)} samples"))
        score = min(c.score for c in claims)
        label = "grounded" if score >= self.threshold else "ungrounded"
        return JudgeResult(verdict=Verdict(example_id=example.id, label=label, score=score, threshold=self.threshold,
                                           claims=tuple(claims), path=self.path), calls=tuple(calls))
