"""What the Label Studio and Argilla formats share: the run as an exporter sees it (answers, judges, verdicts, in
queue order), the spans a judge flagged, strict reading of an export file, and the list of problems an import found.

An import is checked whole before anything is written: every problem is collected with the file, the item's index
(and id) and the field, and one :class:`~groundjudge.labels.store.LabelsError` lists them all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from groundjudge.labels.queue import read_queue
from groundjudge.labels.store import LabelsError, LabelSpan
from groundjudge.runs.records import find_records, read_records
from groundjudge.types import Example, Verdict

HUMAN_LABELS = ("grounded", "ungrounded", "unsure")
"""The label values a person may give (as in ``labels.jsonl``)."""

SPAN_LABEL = "unsupported"
"""The one span label of both formats: a part of the answer the documents do not support."""

MAX_LISTED = 20
"""Most problems an import error lists (the count of the rest follows)."""

DEFAULT_TAXONOMY = Path(__file__).resolve().parents[1] / "judges" / "taxonomies" / "legal_error_types.json"
"""The six legal error types (the error-types judge's default taxonomy), read here without importing the judges."""


@dataclass
class RunView:
    """A run folder read for interchange: its judges (spec text, header order), its answers by id, each judge's
    verdict per answer, and the order to export them in (the queue's when the run has one, else the run's)."""

    folder: Path
    judges: list[str]
    examples: dict[str, Example]
    verdicts: dict[str, dict[str, Verdict]]
    order: list[str]


def read_run(run: str | Path) -> RunView:
    """Read a run folder's records (and its queue, when there is one) for export or import."""
    folder = Path(run)
    path = find_records(folder)
    if not path.exists():
        raise LabelsError(f"{folder} is not a run folder (no records.jsonl)")
    records = read_records(path)
    examples: dict[str, Example] = {}
    verdicts: dict[str, dict[str, Verdict]] = {}
    for record in records.results:
        examples.setdefault(record.example.id, record.example)
        verdicts.setdefault(record.example.id, {})[record.judge] = record.result.verdict
    queued = [item.id for item in read_queue(folder) if item.id in examples]
    return RunView(folder=folder, judges=[spec.spec for spec in records.header.judges], examples=examples,
                   verdicts=verdicts, order=queued or list(examples))


def taxonomy_names(path: str | Path | None = None) -> list[str]:
    """The error type names of a taxonomy file (a JSON list of ``{"name", "definition"}``; default: the six legal
    error types)."""
    source = Path(path) if path else DEFAULT_TAXONOMY
    try:
        entries = json.loads(source.read_text(encoding="utf-8"))
        names = [str(entry["name"]) for entry in entries]
    except (OSError, ValueError, TypeError, KeyError) as err:
        raise LabelsError(f"taxonomy {source}: not a JSON list of {{name, definition}} ({err})") from None
    if not names:
        raise LabelsError(f"taxonomy {source}: no error types")
    return names


def flagged_spans(verdict: Verdict, answer: str) -> list[tuple[int, int, str | None]]:
    """The answer spans a verdict calls unsupported (claims not ``supported`` with valid offsets into the answer):
    ``(start, end, error type or None)``, in answer order, duplicates dropped."""
    spans = {}
    for claim in verdict.claims:
        start, end = claim.claim.start, claim.claim.end
        if claim.label == "supported" or start is None or end is None or not 0 <= start < end <= len(answer):
            continue
        spans.setdefault((start, end), claim.error_type)
    return [(start, end, kind) for (start, end), kind in sorted(spans.items())]


def verdict_error_types(verdict: Verdict, taxonomy: list[str]) -> list[str]:
    """The taxonomy's error types a verdict gives its unsupported claims, in taxonomy order."""
    given = {claim.error_type for claim in verdict.claims if claim.label != "supported" and claim.error_type}
    return [name for name in taxonomy if name in given]


def read_json_list(path: str | Path) -> list[Any]:
    """An export file as a JSON list; not UTF-8, not JSON or not a list is a :class:`LabelsError` naming the file
    (and line and column for bad JSON)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise LabelsError(f"{path}: cannot be read ({err.strerror or err})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise LabelsError(f"{path}: not UTF-8 (byte {err.start})") from None
    try:
        items = json.loads(text)
    except json.JSONDecodeError as err:
        raise LabelsError(f"{path}:{err.lineno}:{err.colno}: not JSON ({err.msg})") from None
    if not isinstance(items, list):
        raise LabelsError(f"{path}: not a JSON list of tasks or records (found a JSON {type(items).__name__})")
    return items


def normal_time(value: Any) -> str | None:
    """An export's timestamp as an ISO time in UTC to the second (as ``labels.jsonl`` writes it); None when it
    cannot be read as one."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds")


@dataclass
class Problems:
    """Problems found while checking an import file, each naming the file, the item and the field."""

    path: Path
    found: list[str] = field(default_factory=list)

    def add(self, index: int, item_id: Any, where: str, message: str) -> None:
        """Note one problem of item ``index`` (its id when known) at field ``where``."""
        name = f"item {index}" + (f" (id {item_id!r})" if item_id is not None else "")
        self.found.append(f"{self.path}: {name}: {where}: {message}")

    def raise_if_any(self) -> None:
        """Raise one LabelsError listing the problems (the first MAX_LISTED) when there are any."""
        if not self.found:
            return
        listed = self.found[:MAX_LISTED]
        more = len(self.found) - len(listed)
        tail = f"\n... and {more} more" if more else ""
        raise LabelsError(f"nothing imported: {len(self.found)} problem(s) in {self.path}:\n"
                          + "\n".join(listed) + tail)


def check_span(answer: str, start: Any, end: Any, text: Any) -> LabelSpan | str:
    """A span of the answer as a LabelSpan, or why it is not one (offsets outside the answer, or a text that is not
    the answer's text at those offsets); a missing text is taken from the answer."""
    if not isinstance(start, int) or not isinstance(end, int) or isinstance(start, bool) or isinstance(end, bool):
        return f"start and end must be whole numbers (got {start!r}, {end!r})"
    if not 0 <= start < end <= len(answer):
        return f"offsets {start}..{end} are outside the answer (0..{len(answer)})"
    if text is not None and text != answer[start:end]:
        return f"text {text!r} is not the answer's text at {start}..{end} ({answer[start:end]!r})"
    return LabelSpan(start=start, end=end, text=answer[start:end])
