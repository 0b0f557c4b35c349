"""A run's verdicts as the adapters hand them on: read a run folder (or ``Run``, or read records) once."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from groundjudge.integrations.verdicts import VerdictView, view_of


def run_records(run: Any) -> Any:
    """The ``RunRecords`` of a run folder, an API ``Run`` or records already read."""
    from groundjudge.runs.records import RunRecords, find_records, read_records

    if isinstance(run, RunRecords):
        return run
    if hasattr(run, "records"):
        return run.records
    return read_records(find_records(Path(run)))


def run_views(run: Any, skip: Iterable[tuple[str, str]] = ()) -> tuple[Any, list[VerdictView]]:
    """The run's records and one view per result (with its judge's header entry), less the ``skip`` pairs."""
    records = run_records(run)
    specs = {spec.spec: spec for spec in records.header.judges}
    left_out = set(skip)
    views = [view_of(record, spec=specs.get(record.judge)) for record in records.results
             if (record.judge, record.example.id) not in left_out]
    return records, views


def human_labels(run: Any) -> dict[str, Any]:
    """The label that counts per answer from the run folder's ``labels.jsonl`` (empty when it has none)."""
    from groundjudge.labels.gold import labels_path
    from groundjudge.labels.store import latest_labels, read_labels

    folder = getattr(run, "path", run)
    if not isinstance(folder, (str, Path)) or not labels_path(folder).exists() or not Path(folder).is_dir():
        return {}
    return latest_labels(read_labels(labels_path(folder)))
