"""Labels in and out of Label Studio and Argilla: ``groundjudge label RUN --export label-studio|argilla --to FILE``
and ``groundjudge label RUN --import FILE``.

Export writes the run's answers (in queue order when the run has a queue) with each judge's verdict as a
prediction (Label Studio) or suggestion (Argilla), and beside ``FILE`` the labelling config (``FILE`` with the
suffix ``.label_config.xml``) or the dataset settings (``.argilla_settings.json``). Import reads the tool's
export back, checks all of it against the run (answer ids, label values, error types, span offsets) and appends
nothing unless every item passes; a label equal (time aside) to the last one of the same answer and labeller in
``labels.jsonl`` is not appended again, so importing the same export twice appends nothing the second time.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from groundjudge.labels import argilla_format, label_studio
from groundjudge.labels.interchange_common import Problems, RunView, read_json_list, read_run, taxonomy_names
from groundjudge.labels.store import (LABELS_FILE, LabelRecord, LabelsError, append_label, latest_by_labeller,
                                     read_labels)
from groundjudge.runs.lock import RunLock, RunLockError

Format = Literal["label-studio", "argilla"]
"""The tools labels travel to and from."""

FORMATS: tuple[str, ...] = ("label-studio", "argilla")
"""Every interchange format, as the command line names them."""

SIDECAR = {"label-studio": ".label_config.xml", "argilla": ".argilla_settings.json"}
"""The suffix of the file written beside an export: Label Studio's labelling config, Argilla's settings."""


class ImportReport(BaseModel):
    """What an import did: labels appended, labels already there, responses left out (cancelled, draft or
    discarded), items without any label, and who labelled."""

    path: str
    format: str
    imported: int
    already_present: int
    left_out: int
    items: int
    items_unlabelled: int
    labellers: list[str]


def sidecar_path(to: str | Path, fmt: Format) -> Path:
    """Where the config or settings of an export to ``to`` go: beside it, ``<stem><suffix>``."""
    to = Path(to)
    return to.with_name(to.stem + SIDECAR[fmt])


def export_run(run: str | Path, fmt: Format, to: str | Path, taxonomy: str | Path | None = None) -> list[Path]:
    """Write the run's answers and verdicts for ``fmt`` to ``to``, and its config or settings beside it; returns
    both paths."""
    if fmt not in FORMATS:
        raise LabelsError(f"unknown format {fmt!r}: {' or '.join(FORMATS)}")
    view, names = read_run(run), taxonomy_names(taxonomy)
    if fmt == "label-studio":
        items: list[Any] = label_studio.export_tasks(view, names)
        sidecar_text = label_studio.label_config(names)
    else:
        items = argilla_format.export_records(view, names)
        sidecar_text = json.dumps(argilla_format.dataset_settings(view.judges, names), indent=2) + "\n"
    to, sidecar = Path(to), sidecar_path(to, fmt)
    to.parent.mkdir(parents=True, exist_ok=True)
    to.write_text(json.dumps(items, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    sidecar.write_text(sidecar_text, encoding="utf-8")
    return [to, sidecar]


def detect_format(items: list[Any], path: str | Path) -> Format:
    """Which tool an export is from: Label Studio tasks have ``data``, Argilla records ``fields`` or
    ``responses``; an empty or unrecognisable file is a LabelsError asking for ``--format``."""
    first = next((item for item in items if isinstance(item, dict)), None)
    if first is not None and "data" in first:
        return "label-studio"
    if first is not None and ("fields" in first or "responses" in first or any(".responses" in k for k in first)):
        return "argilla"
    raise LabelsError(f"{path}: neither a Label Studio export (tasks with 'data' and 'annotations') nor an Argilla "
                      f"one (records with 'fields' and 'responses'); say which with --format")


def _parse(items: list[Any], fmt: Format, view: RunView, names: list[str], problems: Problems):
    if fmt == "label-studio":
        return label_studio.parse_export(items, view, names, problems)
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return argilla_format.parse_export(items, view, names, problems, now)


def _content(record: LabelRecord) -> dict[str, Any]:
    return record.model_dump(exclude={"time"})


def _not_yet_there(labels: list[LabelRecord], existing: Path, ids: set[str]) -> list[LabelRecord]:
    """The labels that change something: those not equal (time aside) to the last line of the same answer and
    labeller, in the file or earlier in the import (so importing the same export twice appends nothing)."""
    latest = latest_by_labeller(read_labels(existing, ids)) if existing.exists() else {}
    new = []
    for record in labels:
        key = (record.id, record.labeller)
        if key in latest and _content(latest[key]) == _content(record):
            continue
        latest[key] = record
        new.append(record)
    return new


def read_import(run: str | Path, path: str | Path, fmt: Format | None = None,
                taxonomy: str | Path | None = None) -> tuple[list[LabelRecord], ImportReport]:
    """Check an export against the run and return its labels (in time order) and a report; any problem is one
    LabelsError naming every bad item and field, and then nothing is returned to append."""
    view, names, items = read_run(run), taxonomy_names(taxonomy), read_json_list(path)
    if fmt is not None and fmt not in FORMATS:
        raise LabelsError(f"unknown format {fmt!r}: {' or '.join(FORMATS)}")
    fmt = fmt or detect_format(items, path)
    problems = Problems(Path(path))
    labels, left_out = _parse(items, fmt, view, names, problems)
    problems.raise_if_any()
    if not labels:
        raise LabelsError(f"nothing imported: {path} holds no label ({len(items)} items, none labelled"
                          + (f"; {left_out} cancelled, draft or discarded" if left_out else "") + ")")
    labels.sort(key=lambda record: record.time)
    new = _not_yet_there(labels, Path(run) / LABELS_FILE, set(view.examples))
    report = ImportReport(path=str(path), format=fmt, imported=len(new), already_present=len(labels) - len(new),
                          left_out=left_out, items=len(items),
                          items_unlabelled=len(items) - len({r.id for r in labels}),
                          labellers=sorted({r.labeller for r in labels}))
    return new, report


def import_labels(run: str | Path, path: str | Path, fmt: Format | None = None, taxonomy: str | Path | None = None,
                  command: list[str] | None = None) -> ImportReport:
    """Import a Label Studio or Argilla export into ``RUN/labels.jsonl`` (all of it or, on any problem, nothing),
    holding the run folder's lock while appending (a labelling server on the run holds it: stop it first)."""
    new, report = read_import(run, path, fmt, taxonomy)
    if new:
        lock = RunLock(run, command or ["groundjudge", "label", str(run), "--import", str(path)],
                       warn=lambda message: None)
        try:
            lock.acquire()
        except RunLockError as err:
            raise LabelsError(f"{err}\n(nothing imported: stop the labelling server on {run} first, then import "
                              "again)") from None
        try:
            for record in new:
                append_label(Path(run) / LABELS_FILE, record)
        finally:
            lock.release()
    return report


def describe(report: ImportReport, run: str | Path) -> str:
    """One paragraph saying what an import did, for the command line."""
    parts = [f"imported {report.imported} label(s) from {report.path} ({report.format}) into "
             f"{Path(run) / LABELS_FILE}"]
    if report.already_present:
        parts.append(f"{report.already_present} already there (not appended again)")
    if report.left_out:
        parts.append(f"{report.left_out} cancelled, draft or discarded left out")
    if report.items_unlabelled:
        parts.append(f"{report.items_unlabelled} of {report.items} items had no label")
    return "; ".join(parts) + f"; labellers: {', '.join(report.labellers)}"
