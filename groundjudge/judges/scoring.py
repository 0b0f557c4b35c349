"""Shared by score-based local judges: turn a score into a verdict and run sync work off the event loop."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from groundjudge.types import ClaimVerdict, Example, JudgeResult, Verdict


@dataclass(frozen=True)
class Scored:
    """What a local scoring function returns: a score, or an abstention reason, and claim verdicts."""

    score: float | None
    claims: Sequence[ClaimVerdict] = ()
    abstain_reason: str | None = None
    timings: dict[str, float] = field(default_factory=dict)
    """Counts and seconds worth recording (pairs scored, pairs cut to fit, ...)."""


def decide(example: Example, scored: Scored, threshold: float, path: str) -> Verdict:
    """grounded if score >= threshold, ungrounded below it, abstain when there is no score."""
    if scored.score is None:
        return Verdict(example_id=example.id, label="abstain", score=None, threshold=threshold,
                       claims=tuple(scored.claims), abstain_reason=scored.abstain_reason or "no_score", path=path)
    label = "grounded" if scored.score >= threshold else "ungrounded"
    return Verdict(example_id=example.id, label=label, score=scored.score, threshold=threshold,
                   claims=tuple(scored.claims), path=path)


async def judge_locally(score_fn: Callable[[Example], Scored], example: Example,
                        threshold: float, path: str) -> JudgeResult:
    """Run a blocking scoring function in a worker thread and wrap its result."""
    start = time.perf_counter()
    scored = await asyncio.to_thread(score_fn, example)
    elapsed = time.perf_counter() - start
    return JudgeResult(verdict=decide(example, scored, threshold, path), latency_s=elapsed,
                       timings={"score_s": elapsed, **scored.timings})
