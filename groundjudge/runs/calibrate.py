"""Fit the thresholds of score-based judges on dev data, then freeze them for the evaluation."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from groundjudge.consoles import console
from groundjudge.judges.stack_fit import save_fit
from groundjudge.metrics import fit_threshold
from groundjudge.runs.lean_records import read_lean_records
from groundjudge.runs.records import RecordWriter, done_pairs, read_records
from groundjudge.runs.runner import JudgeTask, run_judges
from groundjudge.runs.selection import Filtered
from groundjudge.types import Calibration, Example, RunHeader


def needs_calibration(task: JudgeTask, user_settings: dict[str, str]) -> bool:
    """A judge whose threshold decides its verdicts and that the user did not set explicitly.

    A judge whose settings leave the threshold unused (``uses_threshold`` false: the triplets judge's strict and
    majority rules) is not calibrated, so no dev example is judged for nothing. A judge that fits a model on dev
    (``needs_fit``: the stacked judge) is calibrated exactly when it has no fit yet.
    """
    if hasattr(task.judge, "needs_fit"):
        return task.judge.needs_fit
    return dataclasses.is_dataclass(task.judge) and hasattr(task.judge, "threshold") \
        and getattr(task.judge, "uses_threshold", True) and "threshold" not in user_settings


def calibrate(tasks: Sequence[JudgeTask], dev: Iterable[Example], source: str, header: RunHeader,
              records_path: Path, judge_all: Callable[..., int] = run_judges) -> dict[str, Calibration]:
    """Judge the dev examples (recorded in ``records_path``) and fit each judge's threshold.

    ``judge_all`` judges them as the run judges its examples: ``run_judges`` with the run's concurrency, progress
    bar, provider batches and local chunk size bound (called as ``judge_all(tasks, examples, writer, done=...)``).
    The dev records are resumable like any run. Returns the calibration per judge spec.
    """
    labelled = Filtered(dev, lambda example: example.label is not None)   # streamed, as the run's examples
    if not len(labelled):
        raise ValueError(f"calibration data {source!r} has no labelled examples")
    done: set[tuple[str, str]] = set()
    if records_path.exists():
        done = done_pairs(records_path)
    with RecordWriter(records_path) as writer:
        if not done and records_path.stat().st_size == 0:
            writer.write(header)
        judge_all(tasks, labelled, writer, done=done)
    records = read_lean_records(records_path)   # scores and gold are all a threshold is fitted on
    calibrations = {}
    for task in tasks:
        results = [r for r in records.results if r.judge == task.spec]
        if hasattr(task.judge, "fit_calibration"):   # a stacked judge: its model and threshold, saved for weights=
            results = [r for r in read_records(records_path).results if r.judge == task.spec]
            calibrations[task.spec] = task.judge.fit_calibration(results, source)
            saved = save_fit(calibrations[task.spec], records_path.parent / fit_file_name(task.spec))
            console.print(f"stack fit of {task.spec!r} saved: {saved} (reuse it with weights=FILE)", markup=False,
                          soft_wrap=True)
            continue
        try:
            threshold, dev_bal = fit_threshold([r.result.verdict.score for r in results],
                                               [r.example.label for r in results])
        except ValueError:  # every dev example abstained: keep the default, say why
            calibrations[task.spec] = Calibration(threshold=task.judge.threshold, n=len(results),
                                                  source="default (every dev example abstained)")
            continue
        calibrations[task.spec] = Calibration(threshold=threshold, source=source, n=len(results),
                                              dev_balanced_accuracy=dev_bal)
    return calibrations


def with_threshold(task: JudgeTask, calibration: Calibration) -> JudgeTask:
    """The same judge with its threshold replaced by the calibrated one (and a stacked judge's fitted model)."""
    fitted = {"fit": calibration.fit} if calibration.fit is not None else {}
    return JudgeTask(spec=task.spec, judge=dataclasses.replace(task.judge, threshold=calibration.threshold, **fitted))


def frozen_calibrations(tasks: Sequence[JudgeTask]) -> dict[str, Calibration]:
    """The fits judges loaded from a file (a stacked judge's ``weights=``), for the records header."""
    return {t.spec: t.judge.frozen_calibration for t in tasks if getattr(t.judge, "frozen_calibration", None)}


def fit_file_name(spec: str) -> str:
    """The file a run saves a stacked judge's fit to: ``stack-<sha256 of its spec, 10 hex>.json``."""
    return f"stack-{hashlib.sha256(spec.encode('utf-8')).hexdigest()[:10]}.json"
