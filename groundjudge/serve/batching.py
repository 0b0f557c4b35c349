"""Micro-batching: concurrent requests to one local judge gathered for a few milliseconds into one model call.

A :class:`MicroBatcher` owns one judge's batch path. Requests put their example on its queue and await a
future; one worker task takes the first waiting example, gathers more for up to ``max_wait_s`` (or until
``max_batch``), scores them all in one call of the batch path in a worker thread (never on the event loop), and
answers every future. One batch runs at a time per judge: the model already uses every core, so batches in
parallel would only fight over them, while requests that arrive meanwhile form the next batch.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from groundjudge.judges.scoring import Scored, decide
from groundjudge.serve.batch_paths import BatchPath
from groundjudge.types import Example, JudgeResult, Verdict


@dataclass(frozen=True)
class BatchSettings:
    """How long a batch waits for company, and how large it may grow."""

    max_wait_s: float = 0.002
    max_batch: int = 32


@dataclass
class _Pending:
    example: Example
    future: asyncio.Future
    queued_at: float = field(default_factory=time.perf_counter)


def error_result(example: Example, err: BaseException, judge_name: str) -> JudgeResult:
    """An abstention saying which error the judge raised (never a lost request)."""
    message = f"{type(err).__name__}: {err}".splitlines()[0][:300]
    verdict = Verdict(example_id=example.id, label="abstain", abstain_reason=f"judge_error: {message}",
                      path=f"error:{judge_name}")
    return JudgeResult(verdict=verdict)


class MicroBatcher:
    """Gathers one local judge's concurrent requests into batches of its batch path."""

    def __init__(self, judge: Any, path: BatchPath, verdict_path: str, settings: BatchSettings = BatchSettings()):
        self.judge = judge
        self.path = path
        self.verdict_path = verdict_path
        self.settings = settings
        self.batches = 0
        """Batches scored so far."""
        self.batch_sizes: list[int] = []
        """The size of the last batches (at most 1,000 kept), for metrics and tests."""
        self._queue: asyncio.Queue[_Pending] | None = None
        self._worker: asyncio.Task | None = None

    def start(self) -> None:
        """Start the worker on the running loop."""
        self._queue = asyncio.Queue()
        self._worker = asyncio.get_running_loop().create_task(self._run(), name=f"batcher-{self.judge.name}")

    async def stop(self) -> None:
        """Stop the worker once the requests queued are answered."""
        if self._worker is None:
            return
        while self._queue.qsize():   # bounded by the requests already queued: none are added at shutdown
            await asyncio.sleep(0.01)
        self._worker.cancel()
        try:
            await self._worker
        except asyncio.CancelledError:
            pass
        self._worker = None

    async def submit(self, example: Example) -> JudgeResult:
        """Judge one example in the next batch."""
        if self._worker is None:
            raise RuntimeError("the batcher is not started")
        pending = _Pending(example, asyncio.get_running_loop().create_future())
        await self._queue.put(pending)
        return await pending.future

    async def _gather(self) -> list[_Pending]:
        """The next batch: the first waiting request and those arriving within ``max_wait_s``."""
        batch = [await self._queue.get()]
        deadline = time.perf_counter() + self.settings.max_wait_s
        while len(batch) < self.settings.max_batch:
            try:
                batch.append(self._queue.get_nowait())
                continue
            except asyncio.QueueEmpty:
                pass
            left = deadline - time.perf_counter()
            if left <= 0:
                break
            try:
                batch.append(await asyncio.wait_for(self._queue.get(), left))
            except asyncio.TimeoutError:
                break
        return [p for p in batch if not p.future.cancelled()]

    async def _run(self) -> None:
        while True:
            batch = await self._gather()
            if batch:
                await self._score(batch)

    async def _score(self, batch: Sequence[_Pending]) -> None:
        """Score a batch in a worker thread and answer its futures (an error answers each with an abstention)."""
        examples = [p.example for p in batch]
        started_at, start = time.time(), time.perf_counter()
        try:
            scored: list[Scored] | BaseException = await asyncio.to_thread(self.path, examples)
        except Exception as err:  # noqa: BLE001 - every request gets an answer
            scored = err
        elapsed = time.perf_counter() - start
        self.batches += 1
        self.batch_sizes = (self.batch_sizes + [len(batch)])[-1000:]
        for i, pending in enumerate(batch):
            if pending.future.done():
                continue
            if isinstance(scored, BaseException):
                pending.future.set_result(error_result(pending.example, scored, self.judge.name))
                continue
            verdict = decide(pending.example, scored[i], self.judge.threshold, self.verdict_path)
            timings = {"score_s": elapsed, "batch_size": float(len(batch)),
                       "batch_wait_s": start - pending.queued_at, **scored[i].timings}
            pending.future.set_result(JudgeResult(verdict=verdict, latency_s=elapsed, started_at=started_at,
                                                  finished_at=started_at + elapsed, timings=timings))
