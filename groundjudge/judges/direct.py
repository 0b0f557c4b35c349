"""Direct judge: one call reads question, documents and answer and says grounded or not.

The direct-prompting baseline of the legal groundedness benchmark. ``template=direct``
asks for a verdict, a reason and a probability; ``template=lynx`` is the
Lynx-style PASS/FAIL prompt. With ``score=logprobs`` (or ``auto``) the judge asks
the yes/no prompt ``direct_yesno`` and scores P(yes) from the first token's
log-probabilities: a graded score whose threshold is calibrated on dev.
``evidence=chunks`` shows the model only the top-k document windows of the
answer's sentences. ``demos=FILE`` shows k labelled examples before the answer, in every
template (see ``groundjudge.judges.demonstrations``). Any prompt folder may override any of these prompts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, Field

from groundjudge.judges import register
from groundjudge.judges.demonstrations.settings import DemonstrationSettings
from groundjudge.judges.evidence_chunks import EvidenceMode, top_chunks, union_chunks
from groundjudge.judges.llm_judge import LLMJudgeSettings, abstain, provider_abstention
from groundjudge.judges.llm_scoring import NO_LOGPROBS, ScoreMode, asks_logprobs
from groundjudge.llm import ProviderError
from groundjudge.local_nli.evidence import EvidenceMethod
from groundjudge.text import sentences
from groundjudge.types import Evidence, Example, JudgeResult, LLMCall, Verdict

REASON_MAX_CHARS = 400
"""Schema bound on a free-text reason: a grammar-constrained decoder (llama.cpp's) stops there instead of running
to the token limit. Only in the schema, not validated: an API model's longer reason is kept."""


def bounded_text(max_chars: int = REASON_MAX_CHARS, default: str | None = None):
    """A free-text field whose JSON schema carries ``maxLength`` (what a grammar-constrained decoder obeys)."""
    extra = {"json_schema_extra": {"maxLength": max_chars}}
    return Field(**extra) if default is None else Field(default, **extra)


class DirectOutput(BaseModel):
    """Reply of the ``direct`` prompt."""

    reasoning: str = bounded_text()
    verdict: Literal["grounded", "ungrounded"]
    score: float = Field(ge=0.0, le=1.0, description="Probability that the answer is grounded.")


class LynxOutput(BaseModel):
    """Reply of the ``lynx`` prompt."""

    REASONING: list[Annotated[str, bounded_text()]] | Annotated[str, bounded_text()]
    SCORE: Literal["PASS", "FAIL"]


@register
@dataclass(frozen=True)
class DirectJudge(DemonstrationSettings, LLMJudgeSettings):
    """One LLM call: grounded or ungrounded (templates: direct, lynx; direct_yesno for token probabilities)."""

    name: ClassVar[str] = "direct"
    TEMPLATES: ClassVar[tuple[str, ...]] = ("direct", "lynx", "direct_yesno")
    template: str | None = None
    """The prompt: ``direct`` (or ``lynx``) for verbalised scores, ``direct_yesno`` for token probabilities."""
    output: Literal["verdict", "passfail"] = "verdict"
    score: ScoreMode = "verbalised"
    """``verbalised``: the model's stated verdict and probability; ``logprobs``: P(yes) of a yes/no reply's first
    token (abstains where the provider returns no log-probabilities); ``auto``: log-probabilities where the
    provider returns them, the one-word verdict otherwise."""
    threshold: float | None = None
    """Score at or above which the answer is grounded (probability modes; fitted on dev when not given)."""
    evidence: EvidenceMode = "full"
    """``full``: the whole documents; ``chunks``: only the top_k windows of each answer sentence."""
    top_k: Annotated[int, Field(ge=1)] = 3
    chunk_words: Annotated[int, Field(ge=8)] = 200
    ranker: EvidenceMethod = "embedding"
    """How chunks are ranked against the answer's sentences (as the nli judge ranks windows)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.template is None:
            object.__setattr__(self, "template", "direct" if self.score == "verbalised" else "direct_yesno")
        if self.threshold is None and self.score != "verbalised":
            object.__setattr__(self, "threshold", 0.5)

    @property
    def uses_threshold(self) -> bool:
        """Only probability scores are thresholded; a verbalised verdict is the label."""
        return self.score != "verbalised"

    def template_names(self) -> tuple[str, ...]:
        """The one prompt this judge renders (``template``)."""
        return (self.template,)

    def evidence_for(self, example: Example) -> tuple[list[str], tuple[Evidence, ...]]:
        """The documents the model reads: all of them, or the chunks picked for the answer's sentences."""
        if self.evidence == "full":
            return list(example.context), ()
        queries = sentences(example.answer) or [example.answer]
        chunks = union_chunks(top_chunks(queries, example.context, self.top_k, self.chunk_words, self.ranker))
        return [c.text for c in chunks], tuple(chunks)

    def expected_calls(self, example: Example) -> list[tuple[str, dict, int]]:
        """(prompt, variables, expected output tokens) of the calls one example needs (for --dry-run)."""
        context, _ = self.evidence_for(example)
        variables = {"question": example.question, "context": context, "answer": example.answer,
                     "demos": self.demo_variables(example, self.template)}
        return [(self.template, variables, 1 if self.score != "verbalised" else 120)]

    async def assess(self, example: Example) -> JudgeResult:
        """Ask once; the model's verdict (or P(yes) against the threshold) is the label."""
        calls: list[LLMCall] = []
        context, chunks = self.evidence_for(example)
        variables = {"question": example.question, "context": context, "answer": example.answer,
                     "demos": await self.demo_variables_async(example, self.template)}
        try:
            if self.score != "verbalised":
                logprobs = asks_logprobs(self.score, self.model, self.llm.cache)
                scored = await self.ask_yes_no(self.template, variables, calls, logprobs)
                return self._probability_verdict(example, scored, calls, chunks)
            passfail = self.output == "passfail" or self.template == "lynx"
            parsed = await self.ask(self.template, variables, LynxOutput if passfail else DirectOutput, calls)
        except ProviderError as err:
            return provider_abstention(example, err, calls, self.path)
        if parsed is None:
            return abstain(example, "parse_failure", calls, self.path)
        if passfail:
            label = "grounded" if parsed.SCORE == "PASS" else "ungrounded"
            score = 1.0 if label == "grounded" else 0.0
        else:
            label, score = parsed.verdict, parsed.score
        return JudgeResult(verdict=Verdict(example_id=example.id, label=label, score=score, path=self.path,
                                           score_source="verbalised", chunks=chunks), calls=tuple(calls))

    def _probability_verdict(self, example: Example, scored, calls: list[LLMCall],
                             chunks: tuple[Evidence, ...]) -> JudgeResult:
        if scored is None:
            return abstain(example, "parse_failure", calls, self.path)
        if self.score == "logprobs" and scored.source != "logprobs":
            return abstain(example, f"{NO_LOGPROBS}: the provider returned no log-probabilities for yes/no "
                                    f"(use score=auto to take the one-word verdict instead)", calls, self.path)
        label = "grounded" if scored.p_yes >= self.threshold else "ungrounded"
        verdict = Verdict(example_id=example.id, label=label, score=scored.p_yes, threshold=self.threshold,
                          path=self.path, score_source=scored.source, chunks=chunks)
        return JudgeResult(verdict=verdict, calls=tuple(calls))
