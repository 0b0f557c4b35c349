"""The Ray actors that judge: each builds its judge once from the judge's config and judges batches of examples.

* :class:`LocalJudgeWorker` -- a local judge (quip, cosine, nli...): its model loads once per actor, batches run
  one at a time on the actor's CPUs (``GROUNDJUDGE_THREADS`` torch threads);
* :class:`LLMJudgeWorker` -- a judge that calls a language model: an async actor with many batches in flight,
  examples in flight bounded by the judge's own concurrency (as in process), calls paced by the cluster-wide
  limiter and budget (:mod:`groundjudge.llm.shared_limits`).

A local judge with a batch path (nli, crossencoder, cosine, views, hhem, minicheck, spans) judges its batch as an
in-process run judges its answers: grouped by document, in chunks of the run's ``local_chunk``, each chunk one
:func:`~groundjudge.runs.local_chunks.judge_chunk` call (latency each answer's share, ``batch_size`` recorded, an
answer that raises abstaining alone). Every other judge judges each example with
:func:`groundjudge.runs.runner.judge_one`. Either way timing, abstentions and fatal errors are those of an
in-process run, and there is one result per example. These classes are plain Python; the engine wraps them with
``ray.remote``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections import defaultdict, deque
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from groundjudge.judges.config import JudgeConfig
from groundjudge.runs.chunk_option import DEFAULT_LOCAL_CHUNK
from groundjudge.runs.local_chunks import BatchScorer, batch_scorer, chunks, judge_chunk
from groundjudge.types import Example, JudgeResult


class ServiceSpec(BaseModel):
    """How a worker builds its LLM service: the run's prompts and call cache, and the shared limit actors."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)
    prompts: str | None = Field(default=None, description="The run's template folder (a path the workers see).")
    cache_dir: str | None = Field(default=None, description="The call cache folder (None with the cache off).")
    cache_enabled: bool = True
    max_cost: float | None = None
    buckets: Any = Field(default=None, description="The RateBuckets actor handle.")
    ledger: Any = Field(default=None, description="The BudgetLedger actor handle.")

    def build(self):
        """The worker's LLMService: shared rate limits and budget, the run's prompts and cache."""
        from groundjudge.llm import CallCache, LLMService
        from groundjudge.llm.shared_limits import SharedBudget, limits_factory
        from groundjudge.llm.templates import prompt_library

        return LLMService(prompts=prompt_library(self.prompts), cache=CallCache(self.cache_dir,
                                                                                enabled=self.cache_enabled),
                          budget=SharedBudget(self.ledger, self.max_cost), limits_factory=limits_factory(self.buckets))


class WorkerSpec(BaseModel):
    """What an actor needs to build its judge as the driver did: the config, the (calibrated) threshold, the
    examples it may judge at once, and the LLM service's spec for a judge that calls models."""

    model_config = ConfigDict(frozen=True)
    spec: str = Field(description="The judge's name in the records.")
    config: JudgeConfig
    threshold: float | None = Field(default=None, description="The threshold the driver's judge has (calibrated).")
    concurrency: int = Field(ge=1, description="Examples judged at once in one actor.")
    local_chunk: int = Field(default=DEFAULT_LOCAL_CHUNK, ge=1, description=(
        "Answers of a batch handed at once to a local judge with a batch path (the run's --local-chunk)."))
    service: ServiceSpec | None = None

    def build(self) -> Any:
        """The judge: ``config.build`` (as in process) with the driver's threshold."""
        judge = self.config.build(service=self.service.build() if self.service is not None else None)
        if self.threshold is not None and getattr(judge, "threshold", self.threshold) != self.threshold:
            judge = dataclasses.replace(judge, threshold=self.threshold)
        return judge


async def judge_examples(judge: Any, examples: Sequence[Example], slots: asyncio.Semaphore) -> list[JudgeResult]:
    """Judge examples concurrently (at most ``slots`` at once) with ``judge_one``; results in input order."""
    from groundjudge.runs.runner import judge_one

    async def one(example: Example) -> JudgeResult:
        async with slots:
            return await judge_one(judge, example)

    return list(await asyncio.gather(*(one(example) for example in examples)))


def judge_in_chunks(judge: Any, scorer: BatchScorer, examples: Sequence[Example], size: int) -> list[JudgeResult]:
    """Judge a batch through a run's chunk path: grouped by document and cut into chunks of ``size``
    (:func:`~groundjudge.runs.local_chunks.chunks`), each chunk one ``judge_chunk`` call; results in the batch's
    order, one per example."""
    positions: dict[int, deque[int]] = defaultdict(deque)   # an example's places in the batch, by identity
    for position, example in enumerate(examples):
        positions[id(example)].append(position)
    results: list[JudgeResult | None] = [None] * len(examples)
    for chunk in chunks(examples, size):
        for example, result in zip(chunk, judge_chunk(judge, scorer, chunk)):
            results[positions[id(example)].popleft()] = result
    return results  # type: ignore[return-value] - every position is filled: chunks() yields each example once


def node_info() -> dict[str, Any]:
    """Where an actor runs: its node id, host and pid (returned by ``ready``)."""
    import socket

    import ray

    return {"node_id": ray.get_runtime_context().get_node_id(), "host": socket.gethostname(), "pid": os.getpid()}


class LocalJudgeWorker:
    """An actor judging with a local judge: built once, one batch at a time; in chunks of ``local_chunk`` when the
    judge has a batch path, else example by example on its own event loop."""

    def __init__(self, worker: WorkerSpec):
        self.judge = worker.build()
        self.scorer = batch_scorer(self.judge)
        self.local_chunk = worker.local_chunk
        self.loop = asyncio.new_event_loop()
        self.slots = asyncio.Semaphore(worker.concurrency)

    def ready(self) -> dict[str, Any]:
        """Answers once the judge is built (the driver sends batches only to ready actors)."""
        return node_info()

    def judge_batch(self, examples: list[Example]) -> list[JudgeResult]:
        """Judge a batch of examples; results in the batch's order."""
        if self.scorer is not None:
            return judge_in_chunks(self.judge, self.scorer, examples, self.local_chunk)
        return self.loop.run_until_complete(judge_examples(self.judge, examples, self.slots))


class LLMJudgeWorker:
    """An async actor judging with an LLM judge: many batches in flight, at most the judge's concurrency of
    examples at once; its service uses the run's shared limiter and budget."""

    def __init__(self, worker: WorkerSpec):
        self.judge = worker.build()
        self.concurrency = worker.concurrency
        self.slots: asyncio.Semaphore | None = None

    async def ready(self) -> dict[str, Any]:
        """Answers once the judge is built."""
        return node_info()

    async def judge_batch(self, examples: list[Example]) -> list[JudgeResult]:
        """Judge a batch of examples (concurrently with the actor's other batches); results in the batch's order."""
        if self.slots is None:   # created on the actor's event loop
            self.slots = asyncio.Semaphore(self.concurrency)
        return await judge_examples(self.judge, examples, self.slots)
