"""Human labels as gold: a run's answers scored against people's labels, matched by example id.

A label of ``grounded`` or ``ungrounded`` replaces the answer's gold label; ``unsure`` leaves the answer without
one (it is judged, not scored). Answers nobody labelled keep the gold their data gave, unless ``only_labelled``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from groundjudge.labels.store import LABELS_FILE, LabelRecord, LabelsError, latest_labels, read_labels
from groundjudge.runs.records import RunRecords
from groundjudge.types import Example


def labels_path(source: str | Path) -> Path:
    """The labels file a ``--labels`` value names: the file itself, or ``RUN/labels.jsonl`` for a run folder."""
    path = Path(source)
    return path / LABELS_FILE if path.is_dir() else path


def load_gold(source: str | Path, ids: Iterable[str]) -> dict[str, LabelRecord]:
    """The label that counts per answer from a labels file or run folder, every id checked against ``ids``."""
    path = labels_path(source)
    if not path.exists():
        raise LabelsError(f"{path}: no such labels file")
    return latest_labels(read_labels(path, set(ids)))


def _gold(record: LabelRecord) -> str | None:
    return record.label if record.label in ("grounded", "ungrounded") else None


def relabel_examples(examples: list[Example], labels: Mapping[str, LabelRecord],
                     only_labelled: bool = False) -> list[Example]:
    """The examples with human gold where a label names them (see the module's description)."""
    out = []
    for example in examples:
        if example.id in labels:
            out.append(example.model_copy(update={"label": _gold(labels[example.id])}))
        elif not only_labelled:
            out.append(example)
    return out


def relabel_records(records: RunRecords, labels: Mapping[str, LabelRecord]) -> RunRecords:
    """The run's records with every answer's gold taken from the human labels (unlabelled answers: no gold)."""
    results = [r.model_copy(update={"example": r.example.model_copy(update={
        "label": _gold(labels[r.example.id]) if r.example.id in labels else None})}) for r in records.results]
    return RunRecords(header=records.header, results=results)
