"""The append-only run record: ``records.jsonl`` = a header line, then one flushed line per result."""

from __future__ import annotations

import gzip
import json
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from groundjudge.runs.interrupts import interrupts_deferred
from groundjudge.types import ResultRecord, RunHeader


def new_run_id() -> str:
    """A fresh run id: ``run-`` and 12 random hex digits.

    The prefix keeps the id a string wherever it travels: a bare hex id is all digits one time in ~300, and CSV
    readers (pandas, spreadsheets) then turn it into a number that no longer matches the records.
    """
    return f"run-{uuid.uuid4().hex[:12]}"


class RecordsError(ValueError):
    """A records file that cannot be read or does not belong to this run."""


@dataclass
class RunRecords:
    """A records file read back: its header and its results, in file order."""

    header: RunHeader
    results: list[ResultRecord] = field(default_factory=list)

    def done(self) -> set[tuple[str, str]]:
        """(judge spec, example id) pairs that already have a result."""
        return {(r.judge, r.example.id) for r in self.results}


def repair_torn_tail(path: Path) -> int:
    """Cut a last line left half-written by a killed run; returns the bytes removed."""
    size = path.stat().st_size
    if size == 0:
        return 0
    with open(path, "rb+") as handle:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) == b"\n":
            return 0
        data = path.read_bytes()
        keep = data.rfind(b"\n") + 1
        handle.truncate(keep)
        return size - keep


def find_records(run_dir: str | Path, name: str = "records.jsonl") -> Path:
    """A run directory's records file: ``records.jsonl``, or its gzipped copy as published in results/."""
    plain = Path(run_dir) / name
    packed = plain.with_name(name + ".gz")
    return plain if plain.exists() or not packed.exists() else packed


def open_records(path: str | Path) -> IO[str]:
    """A records file (plain or .gz) opened for reading text."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    return opener(path, "rt", encoding="utf-8")


def read_header(path: str | Path) -> RunHeader:
    """The header of a records file alone (its first line), without reading the results."""
    with open_records(path) as handle:
        line = handle.readline()
    if not line.strip():
        raise RecordsError(f"{path}: empty records file (no header line)")
    try:
        return RunHeader.model_validate(json.loads(line))
    except ValueError as err:
        raise RecordsError(f"{path}:1: not a valid header record: {str(err).splitlines()[0]}") from err


def done_pairs(path: str | Path) -> set[tuple[str, str]]:
    """(judge spec, example id) of every result in a records file, read line by line (each line checked as
    :func:`read_records` checks it, only the two keys kept)."""
    done: set[tuple[str, str]] = set()
    with open_records(path) as handle:
        for number, line in enumerate(handle, start=1):
            if number == 1 or not line.strip():
                continue
            try:
                record = ResultRecord.model_validate_json(line)
            except ValueError as err:
                raise RecordsError(f"{path}:{number}: not a valid result record: "
                                   f"{str(err).splitlines()[0]}") from err
            done.add((record.judge, record.example.id))
    return done


def read_records(path: str | Path) -> RunRecords:
    """Read and validate a records file (plain or .gz); a bad line is an error naming file and line."""
    path = Path(path)
    header: RunHeader | None = None
    results: list[ResultRecord] = []
    with open_records(path) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                if number == 1:
                    header = RunHeader.model_validate(obj)
                else:
                    results.append(ResultRecord.model_validate(obj))
            except ValueError as err:
                raise RecordsError(f"{path}:{number}: not a valid {'header' if number == 1 else 'result'} "
                                   f"record: {str(err).splitlines()[0]}") from err
    if header is None:
        raise RecordsError(f"{path}: empty records file (no header line)")
    return RunRecords(header=header, results=results)


class RecordWriter:
    """Appends records as JSON lines, flushing each so a killed run loses at most the line in flight (and an
    interrupted one none: a signal waits for the line being written)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(self.path, "a", encoding="utf-8")

    def write(self, record: RunHeader | ResultRecord) -> None:
        """Append one record and flush it to the OS; SIGINT / SIGTERM wait until the whole line is written."""
        line = record.model_dump_json() + "\n"
        with interrupts_deferred():
            self._handle.write(line)
            self._handle.flush()

    def sync(self) -> None:
        """Flush what was written to the disk itself (fsync), not only to the OS."""
        with interrupts_deferred():
            self._handle.flush()
            os.fsync(self._handle.fileno())

    def close(self) -> None:
        """Flush to disk and close."""
        with interrupts_deferred():
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
