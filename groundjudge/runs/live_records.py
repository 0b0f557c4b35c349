"""A run folder written as verdicts arrive, for faces that judge one answer at a time (the service, the pytest
plugin): the header when the folder is opened, then one flushed line per verdict, ``summary.json`` on close.

The folder is a run folder like any other (``records.jsonl`` + ``summary.json``), so ``report``, ``summarize``,
``export`` and ``replay`` read it. Its header's data set is the live source (``served``, ``pytest``): the answers
are not known when it is written, so its ``n`` is 0 and its hash empty; the records hold every answer judged.
Reopening a folder whose header names the same judges appends to it; other judges are an error.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from groundjudge.errors import UsageError
from groundjudge.runs.lock import RunLock
from groundjudge.runs.provenance import git_commit, package_versions
from groundjudge.runs.records import RecordWriter, new_run_id, read_header, repair_torn_tail
from groundjudge.runs.lean_records import read_lean_records
from groundjudge.runs.summary import summarize, summarize_file
from groundjudge.types import DatasetInfo, Example, JudgeResult, JudgeSpec, ResultRecord, RunHeader

LIVE_FORMAT = "live"
"""The data set format a live run's header records."""


def live_header(judges: Sequence[JudgeSpec], source: str, template_hashes: dict[str, str] | None = None
                ) -> RunHeader:
    """The header of a live run fed by ``source`` (``served``, ``pytest``, ...) with these judges."""
    return RunHeader(run_id=new_run_id(), judges=tuple(judges),
                     dataset=DatasetInfo(files=(source,), formats=(LIVE_FORMAT,), n=0, hash=""),
                     eval_split=source, template_hashes=dict(template_hashes or {}), versions=package_versions(),
                     git_commit=git_commit(), started_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))


class LiveRecords:
    """Append verdicts to a locked run folder as they come, from any thread; one writer per folder.

    ``write`` flushes and fsyncs each line before it returns, so a verdict whose request was answered is on disk
    even if the process is killed next; ``close`` writes ``summary.json`` and releases the folder.
    """

    def __init__(self, out: str | Path, header: RunHeader, command: Sequence[str] = ("groundjudge",)):
        self.out = Path(out)
        self.path = self.out / "records.jsonl"
        self._lock = RunLock(self.out, list(command), warn=lambda text: None)
        self._mutex = threading.Lock()
        self._lock.acquire()
        try:
            self.header = self._open_header(header)
            self._writer = RecordWriter(self.path)
            if self.header is header:
                self._writer.write(header)
                self._writer.sync()
        except BaseException:
            self._lock.release()
            raise
        self.count = 0
        """Results written by this writer."""

    def _open_header(self, header: RunHeader) -> RunHeader:
        """The folder's header: the one on disk when it names the same judges (appending), else ``header``."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return header
        repair_torn_tail(self.path)
        previous = read_header(self.path)
        if [s.spec for s in previous.judges] != [s.spec for s in header.judges]:
            raise UsageError(f"{self.path} was written with judges {[s.spec for s in previous.judges]}, not "
                             f"{[s.spec for s in header.judges]}: use another folder")
        return previous

    def write(self, judge: str, example: Example, result: JudgeResult) -> None:
        """Append one verdict and sync it to disk."""
        record = ResultRecord(judge=judge, example=example, result=result)
        with self._mutex:
            self._writer.write(record)
            self._writer.sync()
            self.count += 1

    def summary(self) -> dict[str, Any]:
        """The summary of every verdict in the folder so far."""
        return summarize_file(self.path)

    def close(self) -> dict[str, Any] | None:
        """Write ``summary.json`` (when any verdict was written), close the file and release the folder."""
        with self._mutex:
            try:
                self._writer.close()
                records = read_lean_records(self.path)
                summary = summarize(records) if records.results else None
                if summary is not None:
                    (self.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
                return summary
            finally:
                self._lock.release()

    def __enter__(self) -> LiveRecords:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
