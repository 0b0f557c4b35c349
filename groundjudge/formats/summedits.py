"""SummEdits (Laban et al., 2023): ``summedits_<domain>.json``, a JSON array of edited summaries.

Each row ``{id, doc, summary, label, original_summary, edit_types, split}`` is an
example: the document is the context, the summary the answer; ``label`` 1
(consistent) is grounded, 0 ungrounded; ``edit_types`` become the error types
of an inconsistent summary. SummEdits' own ``split`` ("evaluation") is kept as
``meta["source_split"]``; ``Example.split`` stays unassigned. Row errors give
the row's 1-based index in the array as their ``line``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from groundjudge.formats._common import RowError, first_array_object, make_example, read_json_document, short_hash
from groundjudge.types import Example

NAME = "summedits"
KEYS = ("doc", "summary", "label")
WHERE = "line = 1-based item index in the JSON array"


def detect(path: Path) -> bool:
    """A .json file holding an array whose first object has doc, summary and label."""
    if path.suffix.lower() != ".json":
        return False
    first = first_array_object(path)
    return first is not None and all(k in first for k in KEYS)


def domain_of(path: Path) -> str | None:
    """The domain in a file name like ``summedits_news.json``, or None."""
    match = re.fullmatch(r"summedits_(.+)", path.stem)
    return match.group(1) if match else None


def _error(path: Path, index: int, field: str, message: str) -> RowError:
    return RowError(file=str(path), line=index, field=field, message=f"{message} ({WHERE})")


def _row(path: Path, index: int, row: Any, domain: str | None) -> Example | RowError:
    """One array item as an Example, or the first thing wrong with it."""
    if not isinstance(row, dict):
        return _error(path, index, "<row>", "array item is not an object")
    for key in ("id", *KEYS):
        if key not in row:
            return _error(path, index, key, "field required")
    for key in ("doc", "summary"):
        if not isinstance(row[key], str):
            return _error(path, index, key, f"expected a string, got {type(row[key]).__name__}")
    label = row["label"]
    if isinstance(label, bool) or label not in (0, 1):
        return _error(path, index, "label", f"expected 0 or 1, got {label!r}")
    edit_types = row.get("edit_types") or []
    if not isinstance(edit_types, list) or not all(isinstance(t, str) for t in edit_types):
        return _error(path, index, "edit_types", "expected a list of strings")
    grounded = label == 1
    result = make_example(
        path, index,
        id=str(row["id"]), context=[row["doc"]], answer=row["summary"],
        label="grounded" if grounded else "ungrounded",
        error_types=() if grounded else tuple(edit_types),
        meta={"group": short_hash(row["doc"]), "domain": domain, "source": "summedits",
              "source_split": row.get("split")},
    )
    if isinstance(result, RowError):
        result.message = f"{result.message} ({WHERE})"
    return result


def load(path: Path) -> Iterator[Example | RowError]:
    """Every item of the array; a bad item is a RowError whose line is its 1-based index (0: the whole file)."""
    rows = read_json_document(path)
    if isinstance(rows, RowError):
        yield rows
        return
    if not isinstance(rows, list):
        yield RowError(file=str(path), line=0, field="<json>", message="expected a JSON array of rows")
        return
    domain = domain_of(path)
    for index, row in enumerate(rows, start=1):
        yield _row(path, index, row, domain)
