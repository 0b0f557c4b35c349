"""A served request turned into a verdict: the example built, judged (batched or on its own), timed out past
the limit, recorded, and shaped as the response."""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from groundjudge.runs.live_records import LiveRecords
from groundjudge.serve.loading import JudgeSet, ServedJudge
from groundjudge.serve.metrics import ServiceMetrics
from groundjudge.serve.schemas import ClaimOut, JudgeRequest, SpanOut, VerdictResponse
from groundjudge.types import Example, JudgeResult


class JudgeTimeout(Exception):
    """Judging took longer than the per-request limit: answered 504."""


TRACEPARENT = re.compile(r"^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$")
"""A W3C ``traceparent`` header: version, trace id, parent span id, flags."""


def trace_meta(traceparent: str | None) -> dict[str, str]:
    """``{"trace_id", "span_id"}`` from a request's W3C ``traceparent`` header (empty when absent or malformed):
    an exported verdict event is parented to the caller's span."""
    match = TRACEPARENT.match((traceparent or "").strip().lower())
    if match is None or set(match.group(1)) == {"0"} or set(match.group(2)) == {"0"}:
        return {}
    return {"trace_id": match.group(1), "span_id": match.group(2)}


def new_example(request: JudgeRequest, meta: dict[str, str] | None = None) -> Example:
    """The example a request asks to judge, under a fresh id (``meta``: the caller's trace context, if sent)."""
    return Example(id=f"served-{uuid.uuid4().hex[:16]}", question=request.question, context=request.documents(),
                   answer=request.answer, meta=dict(meta or {}))


def to_response(judge: str, result: JudgeResult, latency_s: float) -> VerdictResponse:
    """The response of one verdict: label, score, claims, unsupported spans, cost."""
    verdict = result.verdict
    claims = [ClaimOut(text=c.claim.text, start=c.claim.start, end=c.claim.end, label=c.label, score=c.score,
                       evidence=c.evidence, reason=c.reason, error_type=c.error_type) for c in verdict.claims]
    spans = [SpanOut(start=c.start, end=c.end, text=c.text, label=c.label) for c in claims
             if c.label != "supported" and c.start is not None and c.end is not None]
    return VerdictResponse(judge=judge, label=verdict.label, score=verdict.score, threshold=verdict.threshold,
                           claims=claims, spans=spans, path=verdict.path,
                           suspected_injection=list(verdict.suspected_injection),
                           abstain_reason=verdict.abstain_reason, latency_s=max(latency_s, 0.0),
                           cost_usd=max(sum(call.cost_usd for call in result.calls), 0.0))


@dataclass
class Judging:
    """Judges requests with the loaded judges, within the time limit, and records every verdict answered."""

    judges: JudgeSet
    metrics: ServiceMetrics
    timeout_s: float
    records: LiveRecords | None = None
    on_verdict: Callable[[str, Example, JudgeResult], None] | None = None
    """Called with (judge name, example, result) for every verdict answered (``--otel`` exports it)."""

    async def judge_example(self, served: ServedJudge, example: Example) -> JudgeResult:
        """One example by its judge: through its batcher (latency its share of the batch, its wait for the batch in
        ``timings["queue_s"]``), or on its own (``judge_one``: errors abstain)."""
        from groundjudge.runs.runner import judge_one

        if served.batcher is None:
            return await judge_one(served.judge, example)
        result = await served.batcher.submit(example)
        self.metrics.batch_size.labels(served.name).observe(float(result.batch_size or 1))
        return result

    async def _record(self, served: Sequence[ServedJudge], examples: Sequence[Example],
                      results: Sequence[JudgeResult]) -> None:
        """Append the verdicts to the records folder (in a worker thread: each line is synced to disk)."""
        for judge, result in zip(served, results):
            if (result.verdict.abstain_reason or "").startswith("judge_error"):
                self.metrics.judge_errors.labels(judge.name).inc()
        if self.on_verdict is not None:
            for judge, example, result in zip(served, examples, results):
                self.on_verdict(judge.name, example, result)
        if self.records is None:
            return

        def write() -> None:
            for judge, example, result in zip(served, examples, results):
                self.records.write(judge.name, example, result)

        await asyncio.to_thread(write)

    async def judge_many(self, requests: Sequence[JudgeRequest],
                         meta: dict[str, str] | None = None) -> list[VerdictResponse]:
        """Judge requests together (concurrently, so local judges batch them), all within the time limit;
        JudgeTimeout past it. Each verdict is recorded before it is returned (``meta``: on every example)."""
        start = time.perf_counter()
        served = [self.judges.pick(request.judge) for request in requests]
        examples = [new_example(request, meta) for request in requests]
        work = asyncio.gather(*(self.judge_example(judge, example) for judge, example in zip(served, examples)))
        try:
            results = await asyncio.wait_for(work, self.timeout_s)
        except asyncio.TimeoutError:
            raise JudgeTimeout(f"judging took longer than {self.timeout_s:g} s") from None
        await asyncio.shield(self._record(served, examples, results))
        latency = time.perf_counter() - start
        return [to_response(judge.name, result, latency) for judge, result in zip(served, results)]
