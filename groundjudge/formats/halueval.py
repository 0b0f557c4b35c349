"""HaluEval QA (Li et al., 2023): ``knowledge, question, right_answer, hallucinated_answer`` rows.

JSON lines (the released ``qa_*.json`` files are JSON lines despite the name)
or a JSON array. Each row gives two examples over the same knowledge: the
right answer (grounded) and the hallucinated one (ungrounded), with ids
``<stem>-<n>-right`` / ``<stem>-<n>-halluc`` where n is the line (JSON lines)
or the 1-based item index (array).

The group is a hash of the knowledge text, not the row id: the one-turn and
multi-turn files share their 500 questions, knowledge and right answers, so a
per-file group would put the same example on both sides of a split. The row
id is kept as ``meta["row"]``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from groundjudge.formats._common import (
    RowError,
    first_array_object,
    first_jsonl_object,
    json_head,
    make_example,
    read_json_document,
    read_jsonl,
    short_hash,
)
from groundjudge.types import Example

NAME = "halueval"
KEYS = ("knowledge", "question", "right_answer", "hallucinated_answer")


def detect(path: Path) -> bool:
    """JSON lines, or a JSON array, whose first object has the four HaluEval QA keys."""
    first = first_jsonl_object(path)
    if first is None:
        first = first_array_object(path)
    return first is not None and all(k in first for k in KEYS)


def _array_rows(path: Path) -> Iterator[tuple[int, dict[str, Any] | RowError]]:
    """(1-based item index, object) of a JSON array file."""
    rows = read_json_document(path)
    if isinstance(rows, RowError):
        yield rows.line, rows
        return
    if not isinstance(rows, list):
        yield 0, RowError(file=str(path), line=0, field="<json>", message="expected a JSON array of rows")
        return
    for index, row in enumerate(rows, start=1):
        yield index, row if isinstance(row, dict) else RowError(
            file=str(path), line=index, field="<row>", message="array item is not an object (line = item index)")


def load(path: Path) -> Iterator[Example | RowError]:
    """Two examples per row: ``<stem>-<n>-right`` (grounded) and ``<stem>-<n>-halluc`` (ungrounded)."""
    is_array = json_head(path, 256).lstrip().startswith("[")
    where = "line = 1-based item index in the JSON array" if is_array else "line = line of the file"
    for line, row in (_array_rows(path) if is_array else read_jsonl(path)):
        if isinstance(row, RowError):
            yield row
            continue
        bad = next((k for k in KEYS if not isinstance(row.get(k), str)), None)
        if bad is not None:
            problem = "field required" if bad not in row else f"expected a string, got {type(row[bad]).__name__}"
            yield RowError(file=str(path), line=line, field=bad, message=f"{problem} ({where})")
            continue
        row_id = f"{path.stem}-{line}"
        meta = {"group": short_hash(row["knowledge"]), "row": row_id, "source": "halueval"}
        for suffix, answer, label in (("right", row["right_answer"], "grounded"),
                                      ("halluc", row["hallucinated_answer"], "ungrounded")):
            result = make_example(path, line, id=f"{row_id}-{suffix}", question=row["question"],
                                  context=[row["knowledge"]], answer=answer, label=label, meta=dict(meta))
            if isinstance(result, RowError):
                result.message = f"{result.message} ({suffix} answer; {where})"
            yield result
