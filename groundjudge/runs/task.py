"""A run's unit of work: a judge filed under its spec (:class:`JudgeTask`), judged on one example
(:func:`judge_one`: timed, an unexpected error an abstention, never a lost example), and the progress bar the
loops show.

Shared by the in-process loop (:mod:`groundjudge.runs.runner`), the provider-batch rounds
(:mod:`groundjudge.runs.batch_rounds`) and the Ray engine; ``groundjudge.runs.runner`` re-exports it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from groundjudge.judges import Judge
from groundjudge.local_nli.model import ModelUnavailable
from groundjudge.llm.batch import BatchUnavailable
from groundjudge.llm.templates import TemplateError
from groundjudge.llm.repeats import repeat_of
from groundjudge.llm.timing import measure_queue
from groundjudge.runs.stability import majority
from groundjudge.types import Example, JudgeResult, Verdict

FATAL_ERRORS: tuple[type[BaseException], ...] = (ModelUnavailable, TemplateError, BatchUnavailable)
"""Errors that stop the run (every example would fail the same way) instead of becoming abstentions."""


@dataclass(frozen=True)
class JudgeTask:
    """A judge with the spec text its records are filed under."""

    spec: str
    judge: Judge


def error_verdict(judge: Judge, example: Example, err: BaseException) -> Verdict:
    """The abstention of an answer whose judging raised ``err``: the error's type and first line as the reason."""
    message = f"{type(err).__name__}: {err}".splitlines()[0][:300]
    return Verdict(example_id=example.id, label="abstain", abstain_reason=f"judge_error: {message}",
                   path=f"error:{getattr(judge, 'name', type(judge).__name__)}")


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
            result = JudgeResult(verdict=error_verdict(judge, example, err))
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


def progress_bar(disable: bool = False) -> Progress:
    """The rich progress bar used for long work."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TimeRemainingColumn(), disable=disable)
