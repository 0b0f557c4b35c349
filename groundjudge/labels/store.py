"""The labels file, ``RUN/labels.jsonl``: one line per label given, appended and synced at once; a relabel is a new
line (the last line for an answer and labeller counts; the history stays).

Reading it is strict: a malformed line, a bad value, an unknown answer id or bytes that are not UTF-8 stop the
read with one line naming ``file:line:field``, and nothing is scored from a file that has one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

LABELS_FILE = "labels.jsonl"
"""The labels' file name inside a run folder."""

HumanLabel = Literal["grounded", "ungrounded", "unsure"]
"""What a person can say of an answer."""


class LabelsError(ValueError):
    """A labels file (or import) that cannot be read as given: the message names file, line and field."""


class LabelSpan(BaseModel):
    """A span of the answer a person marked unsupported (character offsets into the answer)."""

    start: int = Field(ge=0)
    end: int = Field(ge=0)
    text: str = ""


class LabelRecord(BaseModel):
    """One label as given: the answer's id, the label, optional error types, spans and note, who and when."""

    id: str = Field(min_length=1)
    label: HumanLabel
    error_types: list[str] = Field(default_factory=list)
    spans: list[LabelSpan] = Field(default_factory=list)
    note: str = ""
    labeller: str = "anonymous"
    time: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))


def _field_path(error: dict) -> str:
    return ".".join(str(part) for part in error.get("loc", ())) or "line"


def label_lines(path: str | Path, model: type[LabelRecord] = LabelRecord) -> Iterator[tuple[int, LabelRecord]]:
    """Every label line of ``path`` as ``(line number, record)``, validated as ``model`` (LabelRecord or a subclass
    that adds fields); the first bad line raises a LabelsError naming ``file:line:field``."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        line = path.read_bytes()[:err.start].count(b"\n") + 1
        raise LabelsError(f"{path}:{line}: not UTF-8 (byte {err.start})") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise LabelsError(f"{path}:{number}: not a JSON object ({err.msg})") from None
        if not isinstance(obj, dict):
            raise LabelsError(f"{path}:{number}: not a JSON object")
        try:
            record = model.model_validate(obj)
        except ValidationError as err:
            first = err.errors()[0]
            raise LabelsError(f"{path}:{number}:{_field_path(first)}: {first['msg']}") from None
        yield number, record


def read_labels(path: str | Path, known_ids: Collection[str] | None = None) -> list[LabelRecord]:
    """Every label line of ``path`` in file order, validated; ``known_ids``: the answers a label may name."""
    labels = []
    for number, record in label_lines(path):
        if known_ids is not None and record.id not in known_ids:
            raise LabelsError(f"{path}:{number}:id: unknown answer id {record.id!r} (not in the run)")
        labels.append(record)
    return labels


def latest_labels(labels: list[LabelRecord]) -> dict[str, LabelRecord]:
    """Per answer id, its last label line (any labeller): the label that counts as gold."""
    return {record.id: record for record in labels}


def latest_by_labeller(labels: list[LabelRecord]) -> dict[tuple[str, str], LabelRecord]:
    """Per (answer id, labeller), that person's last label line."""
    return {(record.id, record.labeller): record for record in labels}


def append_label(path: str | Path, record: LabelRecord) -> None:
    """Append one label line and sync it to disk before returning (a killed server loses no label it took)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(record.model_dump_json() + "\n")
        handle.flush()
        os.fsync(handle.fileno())
