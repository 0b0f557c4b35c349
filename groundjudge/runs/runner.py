"""Run judges over examples: bounded concurrency, a progress bar, one flushed record per result."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from groundjudge.judges import Judge
from groundjudge.local_nli.model import ModelUnavailable
from groundjudge.llm.batch import BatchUnavailable
from groundjudge.llm.templates import TemplateError
from groundjudge.llm.repeats import repeat_of
from groundjudge.llm.timing import measure_queue
from groundjudge.runs.records import RecordWriter
from groundjudge.runs.stability import majority
from groundjudge.types import Example, JudgeResult, ResultRecord, Verdict

FATAL_ERRORS: tuple[type[BaseException], ...] = (ModelUnavailable, TemplateError, BatchUnavailable)
"""Errors that stop the run (every example would fail the same way) instead of becoming abstentions."""


@dataclass(frozen=True)
class JudgeTask:
    """A judge with the spec text its records are filed under."""

    spec: str
    judge: Judge


async def judge_one(judge: Judge, example: Example) -> JudgeResult:
    """Judge one example, timing it (service time apart from client-side queueing); an unexpected error
    becomes an abstention, never a lost example."""
    started_at, start = time.time(), time.perf_counter()
    with measure_queue() as clock:
        try:
            repeats = getattr(judge, "repeats", 1)
            result = await judge.judge(example) if repeats <= 1 else await judge_repeated(judge, example, repeats)
        except FATAL_ERRORS:
            raise
        except Exception as err:  # noqa: BLE001 - recorded as the abstention reason
            message = f"{type(err).__name__}: {err}".splitlines()[0][:300]
            verdict = Verdict(example_id=example.id, label="abstain", abstain_reason=f"judge_error: {message}",
                              path=f"error:{getattr(judge, 'name', type(judge).__name__)}")
            result = JudgeResult(verdict=verdict)
    wall = time.perf_counter() - start
    return result.model_copy(update={"latency_s": wall - clock.queue_s, "queue_s": clock.queue_s,
                                     "started_at": started_at, "finished_at": started_at + wall})


async def judge_repeated(judge: Judge, example: Example, repeats: int) -> JudgeResult:
    """Judge an answer ``repeats`` times, each repeat with its own calls (and cache keys); the majority verdict."""
    results = []
    for index in range(repeats):
        with repeat_of(index):
            results.append(await judge.judge(example))
    return majority(results)


def _quiet_after_interrupt(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """The loop's error handler: an interrupt (SIGINT / SIGTERM, or Ctrl-C) left in a task is not an error to
    log -- the run is stopping on purpose, and the records say what was done; anything else is logged as usual."""
    if isinstance(context.get("exception"), KeyboardInterrupt):
        return
    loop.default_exception_handler(context)


async def _judge_all(task: JudgeTask, examples: Sequence[Example], concurrency: int,
                     on_result: Callable[[ResultRecord], None]) -> None:
    asyncio.get_running_loop().set_exception_handler(_quiet_after_interrupt)
    queue: asyncio.Queue[Example] = asyncio.Queue()
    for example in examples:
        queue.put_nowait(example)

    async def worker() -> None:
        while True:
            try:
                example = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            result = await judge_one(task.judge, example)
            on_result(ResultRecord(judge=task.spec, example=example, result=result))

    limit = task.judge.max_concurrency or concurrency
    await asyncio.gather(*(worker() for _ in range(max(1, min(limit, len(examples))))))


def progress_bar(disable: bool = False) -> Progress:
    """The rich progress bar used for long work."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TimeRemainingColumn(), disable=disable)


def run_judges(tasks: Sequence[JudgeTask], examples: Sequence[Example], writer: RecordWriter,
               done: set[tuple[str, str]] = frozenset(), concurrency: int = 8,
               show_progress: bool = True, batches=None) -> int:
    """Judge every example with every judge, skipping pairs already done; returns results written.

    Judges run one after another (so local judges' latencies are not distorted by
    each other); within a judge, examples run concurrently up to its limit. With ``batches`` (a
    :class:`~groundjudge.llm.batch.driver.BatchDriver`) the run goes in provider-batch rounds
    (:mod:`groundjudge.runs.batch_rounds`).
    """
    if batches is not None:
        from groundjudge.runs.batch_rounds import run_rounds

        return run_rounds(tasks, examples, writer, set(done), concurrency, show_progress, batches)
    written = 0
    with progress_bar(disable=not show_progress) as progress:
        for task in tasks:
            todo = [ex for ex in examples if (task.spec, ex.id) not in done]
            bar = progress.add_task(escape(task.spec), total=len(examples),   # a spec's [..] is no markup
                                    completed=len(examples) - len(todo))

            def on_result(record: ResultRecord, bar=bar) -> None:
                nonlocal written
                writer.write(record)
                written += 1
                progress.advance(bar)

            if todo:
                asyncio.run(_judge_all(task, todo, concurrency, on_result))
    return written
