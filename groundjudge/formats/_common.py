"""Helpers shared by the format adapters: row errors, file sniffing, ids."""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from groundjudge.types import Example


class RowError(BaseModel):
    """A bad input row: which file, which line (1-based) and which field."""

    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: field '{self.field}': {self.message}"


def make_example(path: Path, line: int, **fields: Any) -> Example | RowError:
    """Build an Example, turning a validation failure into a RowError for that line."""
    try:
        return Example(**fields)
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "<row>"
        return RowError(file=str(path), line=line, field=field, message=first["msg"])


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any] | RowError]]:
    """Yield (line number, object) for each non-blank line; a bad line yields a RowError."""
    with open(path, encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as err:
                yield number, RowError(file=str(path), line=number, field="<json>", message=str(err))
                continue
            if not isinstance(obj, dict):
                yield number, RowError(file=str(path), line=number, field="<row>", message="not a JSON object")
                continue
            yield number, obj


def first_jsonl_object(path: Path) -> dict[str, Any] | None:
    """The first JSON object of a JSON-lines file, or None if it does not look like one."""
    try:
        with open(path, encoding="utf-8") as handle:
            for text in handle:
                if text.strip():
                    obj = json.loads(text)
                    return obj if isinstance(obj, dict) else None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return None


def csv_header(path: Path) -> list[str]:
    """The header row of a CSV file, or [] if unreadable."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return next(csv.reader(handle), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return []


def json_head(path: Path, size: int = 4096) -> str:
    """The first characters of a file, for cheap sniffing of JSON documents."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read(size)
    except (OSError, UnicodeDecodeError):
        return ""


def short_hash(*parts: str) -> str:
    """A 12-hex-digit content hash, used for group ids of shared documents."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return digest[:12]


def first_array_object(path: Path, head_size: int = 1_000_000) -> dict[str, Any] | None:
    """The first object of a file holding a JSON array, or None if it is not one."""
    decoder = json.JSONDecoder()
    for size in (head_size, None):
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read(size) if size else handle.read()
        except (OSError, UnicodeDecodeError):
            return None
        stripped = text.lstrip()
        if not stripped.startswith("["):
            return None
        body = stripped[1:].lstrip()
        try:
            obj, _ = decoder.raw_decode(body)
        except ValueError:
            if size is None or len(text) < size:
                return None
            continue
        return obj if isinstance(obj, dict) else None
    return None


def read_delimited(path: Path, delimiter: str = ",") -> Iterator[tuple[int, dict[str, str] | RowError]]:
    """Yield (1-based line where the row starts, row dict) from a CSV/TSV file with a header.

    The first data row gets the line after the (possibly multi-line) header. Long fields (whole documents) are
    allowed: the csv module's field size limit is raised to 1 GiB. A file the csv
    module cannot parse further yields one RowError (field "<csv>") and stops.
    """
    csv.field_size_limit(max(csv.field_size_limit(), 1 << 30))
    line = 0
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle, delimiter=delimiter)
            if reader.fieldnames is None:  # reads the header, so line_num is where it ends
                return
            line = reader.line_num
            for row in reader:
                yield line + 1, row
                line = reader.line_num
    except (csv.Error, UnicodeDecodeError) as err:
        yield line + 1, RowError(file=str(path), line=line + 1, field="<csv>", message=str(err))
