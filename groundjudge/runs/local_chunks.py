"""Local judges given answers in chunks: one ``score_batch`` call scores many answers, each recorded on its own.

A local judge whose ``score`` is its ``score_batch`` of one answer (nli, crossencoder, cosine, views, hhem,
minicheck, spans) is handed a run's answers in chunks of ``--local-chunk`` (default 32,
:data:`~groundjudge.runs.chunk_option.DEFAULT_LOCAL_CHUNK`): the answers are grouped by document first, so that
a document's context sentences or evidence windows are embedded once for all of its answers, and the judge
length-sorts the pairs of the whole chunk inside its model call. Every answer still gets its own result: its verdict is decided from its own score
exactly as the judge's ``judge()`` decides it, its ``latency_s`` is its share of the chunk's compute (the call's
time / the answers in it), ``batch_size`` says how many shared it, and ``started_at`` / ``finished_at`` are the
call's. An answer whose scoring raises abstains alone: a chunk that raises is scored again one answer at a time,
so the others keep their verdicts. Errors that would fail every answer the same way (a model that cannot be
loaded) stop the run, as on the per-answer path.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from typing import Any

from groundjudge.judges.scoring import Scored, decide
from groundjudge.runs.interrupts import interrupts_deferred
from groundjudge.runs.memory_budget import LocalChunks, as_local_chunks
from groundjudge.runs.task import FATAL_ERRORS, JudgeTask, error_verdict
from groundjudge.types import Example, JudgeResult, ResultRecord

BatchScorer = Callable[[Sequence[Example]], list[Scored]]
"""Scores many answers in one blocking call, one Scored per answer, in order."""


def _defining_class(cls: type, name: str) -> type | None:
    return next((klass for klass in cls.__mro__ if name in vars(klass)), None)


def batch_scorer(judge: Any) -> BatchScorer | None:
    """The judge's ``score_batch`` when it scores answers in chunks, else None (it is judged answer by answer).

    It does when it has ``score_batch``, ``threshold`` and ``path()``, is not repeated (``repeats``), and its
    ``score_batch`` is defined no higher in its class tree than its ``score`` (a subclass that overrides ``score``
    alone would be batched on its parent's input)."""
    cls = type(judge)
    batch_owner, score_owner = _defining_class(cls, "score_batch"), _defining_class(cls, "score")
    if batch_owner is None or score_owner is None or not issubclass(batch_owner, score_owner):
        return None
    if not hasattr(judge, "threshold") or not callable(getattr(judge, "path", None)):
        return None
    if getattr(judge, "repeats", 1) > 1:
        return None
    return judge.score_batch


def by_document(examples: Sequence[Example]) -> list[Example]:
    """The examples with those of one document (the same context) next to each other, documents in order of first
    appearance and answers in input order within each."""
    groups: dict[tuple[str, ...], list[Example]] = {}
    for example in examples:
        groups.setdefault(tuple(example.context), []).append(example)
    return [example for group in groups.values() for example in group]


GROUPING_WINDOW = 64
"""Chunks' worth of answers read ahead and grouped by document at once: a run's answers are streamed, so the
answers of one document are chunked together when they lie within this many chunks of each other (in data sets
with answers of a document next to each other, always)."""


def chunks(examples: Iterable[Example], size: int | Callable[[], int]) -> Iterator[list[Example]]:
    """The examples grouped by document (:func:`by_document`) and cut into chunks of at most ``size`` (or of
    ``size()``, asked before each chunk is cut: a memory budget may lower it as answers come), read
    ``GROUPING_WINDOW`` chunks at a time (only that many answers in memory); every chunk but the last is full."""
    size_now = size if callable(size) else (lambda: size)
    source = iter(examples)
    pending: list[Example] = []
    while True:
        wanted = size_now() * GROUPING_WINDOW
        window = pending + list(islice(source, max(0, wanted - len(pending))))
        if not window:
            return
        ordered = by_document(window)
        spent = len(ordered) < wanted   # the source is spent: what is left is cut to the end
        start = 0
        while start < len(ordered):
            step = size_now()
            if not spent and len(ordered) - start < step:
                break   # a part chunk waits for the next window
            yield ordered[start:start + step]
            start += step
        pending = ordered[start:]
        if spent:
            return


def _scored_results(judge: Any, chunk: Sequence[Example], scored: Sequence[Scored], started_at: float,
                    elapsed: float) -> list[JudgeResult]:
    """One result per answer of a chunk scored in one call: its own verdict, its share of the call's time."""
    share = elapsed / len(chunk)
    path = judge.path()
    return [JudgeResult(verdict=decide(example, one, judge.threshold, path), latency_s=share,
                        started_at=started_at, finished_at=started_at + elapsed, batch_size=len(chunk),
                        timings={"score_s": share, "chunk_s": elapsed, **one.timings})
            for example, one in zip(chunk, scored)]


def _scored_call(judge: Any, scorer: BatchScorer, chunk: Sequence[Example]) -> list[JudgeResult]:
    """Score ``chunk`` in one call; raises what the call raised (or a ValueError for a wrong number of scores)."""
    started_at, start = time.time(), time.perf_counter()
    scored = scorer(chunk)
    elapsed = time.perf_counter() - start
    if len(scored) != len(chunk):
        raise ValueError(f"score_batch returned {len(scored)} scores for {len(chunk)} answers")
    return _scored_results(judge, chunk, scored, started_at, elapsed)


def _one_alone(judge: Any, scorer: BatchScorer, example: Example) -> JudgeResult:
    """One answer scored on its own; an error it raises (other than a fatal one) is its abstention."""
    started_at, start = time.time(), time.perf_counter()
    try:
        return _scored_call(judge, scorer, [example])[0]
    except FATAL_ERRORS:
        raise
    except Exception as err:  # noqa: BLE001 - recorded as the abstention reason
        elapsed = time.perf_counter() - start
        return JudgeResult(verdict=error_verdict(judge, example, err), latency_s=elapsed, started_at=started_at,
                           finished_at=started_at + elapsed, batch_size=1)


def judge_chunk(judge: Any, scorer: BatchScorer, chunk: Sequence[Example]) -> list[JudgeResult]:
    """The results of one chunk, in its order. When the call raises, the chunk's answers are scored again one at a
    time, so that only the answer that raises abstains (with its error as the reason)."""
    if len(chunk) == 1:
        return [_one_alone(judge, scorer, chunk[0])]
    try:
        return _scored_call(judge, scorer, chunk)
    except FATAL_ERRORS:
        raise
    except Exception:  # noqa: BLE001 - found answer by answer below
        return [_one_alone(judge, scorer, example) for example in chunk]


def judged_chunks(task: JudgeTask, examples: Iterable[Example], size: int | LocalChunks
                  ) -> Iterator[list[ResultRecord]]:
    """The records of ``examples`` judged by ``task``'s judge in chunks of ``size`` (a number, or the run's
    :class:`~groundjudge.runs.memory_budget.LocalChunks` with its memory budget), one list per chunk (for the
    caller to write and sync before the next chunk is scored)."""
    scorer = batch_scorer(task.judge)
    if scorer is None:
        raise ValueError(f"judge {task.spec!r} has no batch path")
    sizer = as_local_chunks(size).sizer(task.judge, task.spec)
    for chunk in chunks(examples, sizer.size):
        results = judge_chunk(task.judge, scorer, chunk)
        sizer.observe(result.timings for result in results)
        yield [ResultRecord(judge=task.spec, example=example, result=result)
               for example, result in zip(chunk, results)]


def write_chunks(task: JudgeTask, examples: Iterable[Example], size: int | LocalChunks, writer: Any,
                 on_result: Callable[[ResultRecord], None]) -> None:
    """Judge ``examples`` in chunks (:func:`judged_chunks`) and hand each record to ``on_result`` (which writes it):
    a chunk's records are handed over whole (an interrupt waits for the last of them) and ``writer`` (a
    :class:`~groundjudge.runs.records.RecordWriter`) is synced to disk before the next chunk is scored."""
    for records in judged_chunks(task, examples, size):
        with interrupts_deferred():
            for record in records:
                on_result(record)
            writer.sync()
