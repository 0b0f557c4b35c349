"""Run judges over examples: bounded concurrency, a progress bar, one flushed record per result.

The unit of work -- :class:`JudgeTask`, :func:`judge_one`, :func:`progress_bar` -- is in
:mod:`groundjudge.runs.task` and importable from here as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Iterable, Sequence

from rich.markup import escape

from groundjudge.runs.chunk_option import DEFAULT_LOCAL_CHUNK
from groundjudge.runs.local_chunks import batch_scorer, write_chunks
from groundjudge.runs.memory_budget import LocalChunks, as_local_chunks, check_budget
from groundjudge.runs.records import RecordWriter
from groundjudge.runs.task import JudgeTask, judge_one, progress_bar
from groundjudge.types import Example, ResultRecord


def _quiet_after_interrupt(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """The loop's error handler: an interrupt (SIGINT / SIGTERM, or Ctrl-C) left in a task is not an error to
    log -- the run is stopping on purpose, and the records say what was done; anything else is logged as usual."""
    if isinstance(context.get("exception"), KeyboardInterrupt):
        return
    loop.default_exception_handler(context)


async def _judge_all(task: JudgeTask, examples: Iterable[Example], concurrency: int,
                     on_result: Callable[[ResultRecord], None], count: int) -> None:
    """Judge ``examples`` (``count`` of them, taken in order as workers free up: none is held before its turn)
    with up to the judge's concurrency in flight."""
    asyncio.get_running_loop().set_exception_handler(_quiet_after_interrupt)
    source = iter(examples)

    async def worker() -> None:
        for example in source:   # each worker takes the next example when it is free
            result = await judge_one(task.judge, example)
            on_result(ResultRecord(judge=task.spec, example=example, result=result))

    limit = task.judge.max_concurrency or concurrency
    await asyncio.gather(*(worker() for _ in range(max(1, min(limit, count)))))


def _done_of(spec: str, examples: Iterable[Example], done: Collection[tuple[str, str]]) -> int:
    """How many of ``examples`` ``spec`` has judged already (no pass over them when it has judged none)."""
    if not any(key[0] == spec for key in done):
        return 0
    return sum((spec, example.id) in done for example in examples)


def refuse_small_budget(tasks: Sequence[JudgeTask], local_chunk: int | LocalChunks) -> LocalChunks:
    """``local_chunk`` as :class:`~groundjudge.runs.memory_budget.LocalChunks`, once its memory budget is known to
    hold one answer of every judge given chunks (else the one-line refusal, a UsageError)."""
    chunking = as_local_chunks(local_chunk)
    check_budget(tasks, chunking, lambda judge: batch_scorer(judge) is not None)
    return chunking


def run_judges(tasks: Sequence[JudgeTask], examples: Collection[Example], writer: RecordWriter,
               done: set[tuple[str, str]] = frozenset(), concurrency: int = 8,
               show_progress: bool = True, batches=None, local_chunk: int | LocalChunks = DEFAULT_LOCAL_CHUNK) -> int:
    """Judge every example with every judge, skipping pairs already done; returns results written.

    Judges run one after another (so local judges' latencies are not distorted by
    each other); within a judge, examples run concurrently up to its limit, except that a local judge with a
    batch path is given them in chunks of ``local_chunk`` answers (:mod:`groundjudge.runs.local_chunks`; a
    :class:`~groundjudge.runs.memory_budget.LocalChunks` adds a memory budget, checked for every such judge before
    anything is judged). The examples are taken in order as they are judged, never listed whole. With
    ``batches`` (a :class:`~groundjudge.llm.batch.driver.BatchDriver`) the run goes in provider-batch rounds
    (:mod:`groundjudge.runs.batch_rounds`), its local judges with a batch path still in chunks.
    """
    chunking = refuse_small_budget(tasks, local_chunk)
    if batches is not None:
        from groundjudge.runs.batch_rounds import run_rounds   # the batch machinery loads for a batch run only

        return run_rounds(tasks, examples, writer, set(done), concurrency, show_progress, batches, chunking)
    written = 0
    with progress_bar(disable=not show_progress) as progress:
        for task in tasks:
            completed = _done_of(task.spec, examples, done)
            todo = (ex for ex in examples if (task.spec, ex.id) not in done)   # streamed, never all in memory
            bar = progress.add_task(escape(task.spec), total=len(examples),   # a spec's [..] is no markup
                                    completed=completed)

            def on_result(record: ResultRecord, bar=bar) -> None:
                nonlocal written
                writer.write(record)
                written += 1
                progress.advance(bar)

            if completed == len(examples):
                continue
            if batch_scorer(task.judge) is not None:
                write_chunks(task, todo, chunking, writer, on_result)
            else:
                asyncio.run(_judge_all(task, todo, concurrency, on_result, len(examples) - completed))
    return written
