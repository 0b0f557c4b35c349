"""Fit the thresholds of score-based judges on dev data, then freeze them for the evaluation."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from groundjudge.metrics import fit_threshold
from groundjudge.runs.records import RecordWriter, read_records
from groundjudge.runs.runner import JudgeTask, run_judges
from groundjudge.types import Calibration, Example, RunHeader


def needs_calibration(task: JudgeTask, user_settings: dict[str, str]) -> bool:
    """A judge whose threshold decides its verdicts and that the user did not set explicitly.

    A judge whose settings leave the threshold unused (``uses_threshold`` false: the triplets judge's strict and
    majority rules) is not calibrated, so no dev example is judged for nothing.
    """
    return dataclasses.is_dataclass(task.judge) and hasattr(task.judge, "threshold") \
        and getattr(task.judge, "uses_threshold", True) and "threshold" not in user_settings


def calibrate(tasks: Sequence[JudgeTask], dev: Sequence[Example], source: str, header: RunHeader,
              records_path: Path, concurrency: int = 8, show_progress: bool = True,
              batches=None) -> dict[str, Calibration]:
    """Judge the dev examples (recorded in ``records_path``) and fit each judge's threshold.

    The dev records are resumable like any run (in provider-batch rounds with ``batches``, as ``run_judges``).
    Returns the calibration per judge spec.
    """
    labelled = [ex for ex in dev if ex.label is not None]
    if not labelled:
        raise ValueError(f"calibration data {source!r} has no labelled examples")
    done: set[tuple[str, str]] = set()
    if records_path.exists():
        done = read_records(records_path).done()
    with RecordWriter(records_path) as writer:
        if not done and records_path.stat().st_size == 0:
            writer.write(header)
        run_judges(tasks, labelled, writer, done=done, concurrency=concurrency, show_progress=show_progress,
                   batches=batches)
    records = read_records(records_path)
    calibrations = {}
    for task in tasks:
        results = [r for r in records.results if r.judge == task.spec]
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
    """The same judge with its threshold replaced by the calibrated one."""
    return JudgeTask(spec=task.spec, judge=dataclasses.replace(task.judge, threshold=calibration.threshold))
