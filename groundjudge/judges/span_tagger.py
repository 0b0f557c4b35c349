"""Spans judge: a LettuceDetect-style token tagger marks the hallucinated character spans of the answer.

Every answer token gets P(hallucinated) given the context and question (windows of the context when it is
too long, aggregated per token); tokens whose support, ``1 - P(hallucinated)``, is below ``threshold`` are
merged into spans. The answer's score is its lowest token support, ``1 - max P(hallucinated)``, so with the one
``threshold`` an answer is ungrounded exactly when it has a span, before and after calibration.

Each span is recorded as an unsupported claim with its offsets into the answer (the report highlights it).
Its label is ``unverifiable``, not ``contradicted``: the tagger (trained on RAGTruth, whose hallucinations
are both conflicts with the context and baseless additions) says a span is not supported, never that the
context states the opposite, and "contradicted" would claim more than the model said.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from groundjudge.judges import register
from groundjudge.judges.local_settings import LocalModelSettings
from groundjudge.judges.scoring import Scored, judge_locally
from groundjudge.local_nli.batches import ScoreStats
from groundjudge.local_nli.token_tagger import (DEFAULT_TAGGER, Span, TokenTagger, load_tagger, merge_spans,
                                               support_of)
from groundjudge.types import Claim, ClaimVerdict, Example, JudgeResult

SPAN_REASON = "token tagger"
"""How a span verdict's reason begins."""


def span_verdict(span: Span) -> ClaimVerdict:
    """A hallucinated span as an unverifiable claim with its offsets into the answer."""
    return ClaimVerdict(claim=Claim(text=span.text, start=span.start, end=span.end), label="unverifiable",
                        score=support_of(span.prob),
                        reason=f"{SPAN_REASON}: P(hallucinated) up to {span.prob:.3f} over {span.tokens} token(s)")


@register
@dataclass(frozen=True)
class SpanTaggerJudge(LocalModelSettings):
    """LettuceDetect-style token tagger: hallucinated spans of the answer; score = 1 - max P(hallucinated)."""

    name: ClassVar[str] = "spans"
    max_concurrency: ClassVar[int | None] = 1
    model: str = DEFAULT_TAGGER
    max_length: int = 4096
    """Longest input in tokens (LettuceDetect's default; capped by the model's own limit)."""
    across_windows: Literal["max", "min"] = "max"
    """A long context is read in windows: a token's P(hallucinated) is its ``max`` over them (LettuceDetect:
    supported only if every window supports it) or ``min`` (supported if any window does)."""
    batch_size: int = 4
    """Windows per forward pass (halved and retried when the device runs out of memory). Without ``labels``,
    label 0 is supported and 1 hallucinated."""
    threshold: float = 0.5
    """Grounded when 1 - max P(hallucinated) >= threshold; the tokens with 1 - P(hallucinated) below it are spans."""

    def engine(self) -> TokenTagger:
        """The loaded tagger (shared per process)."""
        return load_tagger(self.model, self.model_settings(), max_length=self.max_length,
                           across_windows=self.across_windows)

    def score_batch(self, examples: Sequence[Example]) -> list[Scored]:
        """:meth:`score` of every example, the context windows of all of them through the tagger in one call. Each
        answer's timings hold the call's counts (and ``batch_examples`` when it tagged more than one answer)."""
        present = [i for i, example in enumerate(examples) if example.answer.strip()]
        stats = ScoreStats()
        items = [(examples[i].context, examples[i].question, examples[i].answer) for i in present]
        tagged = dict(zip(present, self.engine().answers_scores(items, stats))) if present else {}
        shared = {**stats.as_timings(), **({"batch_examples": float(len(examples))} if len(examples) > 1 else {})}
        results = []
        for i, example in enumerate(examples):
            scores = tagged.get(i)
            if scores is None or not len(scores.probs):
                results.append(Scored(score=None, abstain_reason="no_claims"))
                continue
            spans = merge_spans(example.answer, scores, self.threshold)
            timings = {**shared, "windows": float(scores.windows), "answer_tokens": float(len(scores.probs)),
                       "answer_tokens_cut": float(scores.answer_tokens_cut), "spans": float(len(spans))}
            results.append(Scored(score=support_of(scores.probs.max()), claims=[span_verdict(s) for s in spans],
                                  timings=timings))
        return results

    def score(self, example: Example) -> Scored:
        """The answer's hallucinated spans and 1 - max P(hallucinated) (sync: runs in a worker thread)."""
        return self.score_batch([example])[0]

    def path(self) -> str:
        """What produced the verdicts."""
        return f"local:spans({self.model})"

    async def judge(self, example: Example) -> JudgeResult:
        """Score in a worker thread and decide with the (calibrated) threshold."""
        return await judge_locally(self.score, example, self.threshold, self.path())
