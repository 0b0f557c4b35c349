"""groundjudge's own JSON-lines format: one Example per line.

``{"id", "question"?, "context": str | [str], "answer", "label": "grounded" |
"ungrounded" | null, "error_types"?: [str], "split"?: "train" | "dev" | "test",
"meta"?: {}}``
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from groundjudge.formats._common import RowError, first_jsonl_object, make_example, read_jsonl
from groundjudge.types import Example

NAME = "native"
REQUIRED = {"id", "context", "answer"}


def detect(path: Path) -> bool:
    """A JSON-lines file whose first object has id, context and answer."""
    first = first_jsonl_object(path)
    return first is not None and REQUIRED <= first.keys()


def load(path: Path) -> Iterator[Example | RowError]:
    """Validate every line as an Example; unknown fields and an id already used above are errors."""
    first_line: dict[str, int] = {}
    for line, obj in read_jsonl(path):
        if isinstance(obj, RowError):
            yield obj
            continue
        missing = sorted(REQUIRED - obj.keys())
        if missing:
            yield RowError(file=str(path), line=line, field=missing[0], message="field required")
            continue
        example = make_example(path, line, **obj)
        if isinstance(example, Example):
            if example.id in first_line:
                yield RowError(file=str(path), line=line, field="id",
                               message=f"duplicate id {example.id!r} (first on line {first_line[example.id]})")
                continue
            first_line[example.id] = line
        yield example
