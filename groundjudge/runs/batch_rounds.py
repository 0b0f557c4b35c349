"""A batch run's round loop: judge what is unfinished, submit what was deferred, repeat until nothing is.

Each round judges every unfinished (judge, example) pair as the plain runner does, inside a deferral scope: an
example whose judge asked for a reply that is not in the call cache is deferred (``Deferred``) and nothing is
written for it this round. When every judge has had its turn, the batch driver submits the round's pending
requests -- one batch per provider and model, all judges together -- waits for them and puts the replies in the
cache, and the next round begins. The run ends with a round that defers nothing. A resumed run first polls the
batches its predecessor left open. A local judge with a batch path (which never defers) is judged in its turn of
the first round as a plain run judges it: in chunks of answers grouped by document
(:func:`~groundjudge.runs.local_chunks.write_chunks`), each chunk's records written whole and synced.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence

from rich.markup import escape

from groundjudge.llm.batch import Deferred, deferral_scope
from groundjudge.llm.batch.driver import BatchDriver, BatchError
from groundjudge.runs.chunk_option import DEFAULT_LOCAL_CHUNK
from groundjudge.runs.local_chunks import batch_scorer, write_chunks
from groundjudge.runs.memory_budget import LocalChunks
from groundjudge.runs.records import RecordWriter
from groundjudge.runs.task import JudgeTask, judge_one, progress_bar
from groundjudge.types import Example, ResultRecord


def _quiet(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """The loop's error handler: a deferral or an interrupt left in a task a judge started is not an error."""
    if isinstance(context.get("exception"), (Deferred, KeyboardInterrupt)):
        return
    loop.default_exception_handler(context)


async def judge_round(task: JudgeTask, examples: Sequence[Example], concurrency: int, driver: BatchDriver,
                      on_result: Callable[[ResultRecord], None]) -> int:
    """Judge the examples once with one judge, writing each finished result; returns how many were deferred."""
    queue: asyncio.Queue[Example] = asyncio.Queue()
    for example in examples:
        queue.put_nowait(example)
    deferred = 0

    async def worker() -> None:
        nonlocal deferred
        while True:
            try:
                example = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            with deferral_scope() as scope:
                try:
                    result = await judge_one(task.judge, example)
                except Deferred:
                    scope.deferred = True
            if scope.deferred:   # also when a judge swallowed the signal: its verdict lacks a reply
                driver.session.release(scope)
                deferred += 1
                continue
            on_result(ResultRecord(judge=task.spec, example=example, result=result))

    limit = task.judge.max_concurrency or concurrency
    await asyncio.gather(*(worker() for _ in range(max(1, min(limit, len(examples))))))
    return deferred


async def _judge_pending(tasks: Sequence[JudgeTask], examples: Sequence[Example], finished: set[tuple[str, str]],
                         concurrency: int, driver: BatchDriver, on_result: Callable[[JudgeTask, ResultRecord], None],
                         in_chunks: Callable[[JudgeTask, list[Example]], None]) -> int:
    """One round: every judge over its unfinished examples (a local judge with a batch path by ``in_chunks``, which
    writes its records); returns how many were deferred."""
    asyncio.get_running_loop().set_exception_handler(_quiet)
    deferred = 0
    for task in tasks:
        todo = [ex for ex in examples if (task.spec, ex.id) not in finished]
        if todo and batch_scorer(task.judge) is not None:
            in_chunks(task, todo)
        elif todo:
            deferred += await judge_round(task, todo, concurrency, driver,
                                          lambda record, task=task: on_result(task, record))
    return deferred


async def _with_driver(driver: BatchDriver, work):
    """Run the driver's work, closing its provider clients (bound to this event loop) at the end."""
    asyncio.get_running_loop().set_exception_handler(_quiet)
    try:
        return await work
    finally:
        await driver.close()


def run_rounds(tasks: Sequence[JudgeTask], examples: Sequence[Example], writer: RecordWriter,
               done: set[tuple[str, str]], concurrency: int, show_progress: bool, driver: BatchDriver,
               local_chunk: int | LocalChunks = DEFAULT_LOCAL_CHUNK) -> int:
    """Judge every example with every judge in batch rounds (see the module docstring), local judges with a batch
    path in chunks of ``local_chunk`` (a number, or the run's budgeted sizes); returns results written."""
    written = 0
    finished = set(done)
    driver.restore(counted_keys(driver.run_dir))
    with progress_bar(disable=not show_progress) as progress:
        driver.progress = progress if show_progress else None
        bars = {task.spec: progress.add_task(escape(task.spec), total=len(examples),
                                             completed=sum((task.spec, ex.id) in done for ex in examples))
                for task in tasks}

        def on_result(task: JudgeTask, record: ResultRecord) -> None:
            nonlocal written
            writer.write(record)
            finished.add((task.spec, record.example.id))
            written += 1
            progress.advance(bars[task.spec])

        def in_chunks(task: JudgeTask, todo: list[Example]) -> None:
            write_chunks(task, todo, local_chunk, writer, lambda record: on_result(task, record))

        # each round and each wait for batches in an event loop of its own: what a judge keeps per loop (the
        # facts a claims judge shares between answers) is computed afresh from the cache, and every call's
        # record goes with the answer that reads it; tasks a deferred answer left behind end with their round
        asyncio.run(_with_driver(driver, driver.resume()))
        round_no = driver.next_round()
        while True:
            deferred = asyncio.run(_judge_pending(tasks, examples, finished, concurrency, driver, on_result,
                                                  in_chunks))
            if not deferred:
                break
            if not asyncio.run(_with_driver(driver, driver.flush(round_no))):
                raise BatchError(f"round {round_no} deferred {deferred} answer(s) but filed no request for a batch")
            round_no += 1
    return written


def with_batch(configs: list) -> list:
    """``--batch``: the judge configs with ``batch=true`` on every judge that has the setting (the LLM judges;
    the LLM judges inside a composite are reached through the service's session)."""
    from groundjudge.judges.config import config_model

    return [c.model_copy(update={"settings": {**c.settings, "batch": True}})
            if "batch" in config_model(c.kind).model_fields else c for c in configs]


def batch_judges(tasks: Sequence[JudgeTask], all_judges: bool) -> bool:
    """Whether the run goes in batch rounds: ``--batch``, or a judge (or a judge inside one) with ``batch=true``.
    Raises BatchUnavailable for a batch-mode judge whose provider has no batch API."""
    from groundjudge.judges.composite import judge_parts
    from groundjudge.llm.batch import require_provider

    batching = False
    for task in tasks:
        for part in judge_parts(task.judge):
            if hasattr(part, "llm_settings") and (all_judges or getattr(part, "batch", False)):
                require_provider(part.model, f"judge {task.spec!r}: ")
                batching = True
    return batching


def batch_driver(options, out, service) -> BatchDriver:
    """The run's batch driver, its session installed on the run's LLM service (a run without a disk cache keeps
    the batches' replies in memory: the rounds read them from the cache)."""
    from groundjudge.llm.batch import BatchSession
    from groundjudge.llm.cache import CallCache

    service.batch = BatchSession(all_judges=options.batch)
    if not service.cache.enabled:
        service.cache = CallCache(None, enabled=True)
    return BatchDriver(run_dir=out, session=service.batch, cache=service.cache, budget=service.budget,
                       poll_s=options.batch_poll_s, max_wait_s=options.batch_max_wait_s)


def counted_keys(run_dir) -> set[str]:
    """Cache keys of the calls the run's records (and calibration records) already charge (not read from the
    cache)."""
    from pathlib import Path

    keys: set[str] = set()
    for name in ("calibration.jsonl", "records.jsonl"):
        path = Path(run_dir) / name
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines()[1:]:
            try:
                calls = json.loads(line)["result"]["calls"]
            except (ValueError, KeyError, TypeError):
                continue
            keys.update(c["cache_key"] for c in calls if not c.get("cached") and c.get("cache_key"))
    return keys
