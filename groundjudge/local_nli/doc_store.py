"""The append-only file of pairs made from documents, ``OUT/pairs/units.jsonl``: one line per document (its key,
split, pairs and drops), written whole, flushed and synced before the next document starts.

A run killed in the middle of a line leaves a partial last line; :func:`open_units` cuts it off, so a resumed run
skips every document whose line is complete and makes the cut one again: no pair is repeated or lost.
"""

from __future__ import annotations

import os
from pathlib import Path

from groundjudge.local_nli.doc_pairs import UnitPairs

UNITS_FILE = "units.jsonl"
"""The file of the pairs made from documents, inside ``OUT/pairs``."""


def read_units(path: Path) -> list[UnitPairs]:
    """The complete lines of the file (a partial last line is left out), in order."""
    if not path.exists():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    return [UnitPairs.from_json(line) for line in data[:end].decode("utf-8").splitlines() if line.strip()]


def _cut_partial_line(path: Path) -> None:
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end != len(data):
        with path.open("r+b") as handle:
            handle.truncate(end)
            handle.flush()
            os.fsync(handle.fileno())


class UnitWriter:
    """Appends one document's line at a time, each synced to disk before :meth:`write` returns."""

    def __init__(self, path: Path):
        """Open ``path`` for appending (created when absent; a partial last line is cut off first)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            _cut_partial_line(path)
        self._handle = path.open("a", encoding="utf-8")

    def write(self, unit: UnitPairs) -> None:
        """Append the unit's line and sync it."""
        self._handle.write(unit.to_json() + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        """Close the file."""
        self._handle.close()

    def __enter__(self) -> UnitWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
