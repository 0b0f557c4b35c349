"""Micro-batching: concurrent requests to one local judge gathered for a few milliseconds into one model call
(the service's requests, and the candidates ``groundjudge perturb --check`` judges for many answers at once).

A :class:`MicroBatcher` owns one judge's batch path (:func:`~groundjudge.runs.local_chunks.batch_scorer`: every
local judge whose ``score`` is its ``score_batch`` of one answer -- nli, crossencoder, cosine, views, hhem,
minicheck, spans). Requests put their example on its queue and await a future; one worker task takes the first
waiting example, gathers more for up to ``max_wait_s`` (or until ``max_batch``) and judges them as one chunk of a
run is judged (:func:`~groundjudge.runs.local_chunks.judge_chunk`, in a worker thread, never on the event loop):
each request's ``latency_s`` is its share of the batch's compute, ``batch_size`` says how many shared it, the
time it waited in the queue for its batch to start is ``timings["queue_s"]``, and a request whose example raises
abstains alone while the others keep their verdicts. One batch runs at a time per judge: the model already uses
every core, so batches in parallel would only fight over them, while requests that arrive meanwhile form the next
batch.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from groundjudge.runs.local_chunks import BatchScorer, judge_chunk
from groundjudge.runs.task import error_verdict
from groundjudge.types import Example, JudgeResult


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


class MicroBatcher:
    """Gathers one local judge's concurrent requests into batches of its batch path."""

    def __init__(self, judge: Any, scorer: BatchScorer, settings: BatchSettings = BatchSettings()):
        self.judge = judge
        self.scorer = scorer
        """The judge's batch path (its ``score_batch``, as :func:`~groundjudge.runs.local_chunks.batch_scorer`
        gives it)."""
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
        """Judge a batch as a run's chunk, in a worker thread, and answer its futures (each request's wait for the
        batch apart, in ``timings["queue_s"]``). An error that fails the whole batch (a model that cannot be
        loaded) answers each request with an abstention saying so: a request is never lost."""
        examples = [p.example for p in batch]
        start = time.perf_counter()
        try:
            results: list[JudgeResult] = await asyncio.to_thread(judge_chunk, self.judge, self.scorer, examples)
        except Exception as err:  # noqa: BLE001 - every request gets an answer
            results = [JudgeResult(verdict=error_verdict(self.judge, example, err), batch_size=len(examples))
                       for example in examples]
        self.batches += 1
        self.batch_sizes = (self.batch_sizes + [len(batch)])[-1000:]
        for pending, result in zip(batch, results):
            if not pending.future.done():
                queued = {"queue_s": max(0.0, start - pending.queued_at)}
                pending.future.set_result(result.model_copy(update={"timings": {**result.timings, **queued}}))
