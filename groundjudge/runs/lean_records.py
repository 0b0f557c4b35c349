"""A records file read back for its figures only: every line validated, each kept as a small slotted copy.

A summary reads from each result its judge, the example's id, gold label, error types, split and meta, and the
verdict's label, score, threshold, path, reason, injection findings and typed claims, with the result's timing and
calls -- never the documents, the answer or the evidence text, which make most of a record's bytes. Reading a run
of 50,000 answers as :class:`~groundjudge.types.ResultRecord` objects took gigabytes; :func:`read_lean_records`
keeps a few hundred bytes per result instead, so that ``summarize`` (and the run's own summary) stay flat in the
documents' size and linear in the answers with a small constant. The copies answer the same attribute paths as
the records (``record.example.label``, ``record.result.verdict.score``, ...), so the summary's functions take
either; a line that is not a valid record is the same error as :func:`~groundjudge.runs.records.read_records`'s.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType
from typing import Any

from groundjudge.runs.records import RecordsError, RunRecords, open_records
from groundjudge.types import ResultRecord, RunHeader

_NO_META: Any = MappingProxyType({})
"""The meta of every example that has none (read-only, shared)."""


def _shared(text: str | None) -> str | None:
    """``text`` interned: the few distinct labels, paths and splits of a run are one string each."""
    return None if text is None else sys.intern(text)


class LeanExample:
    """What a summary reads of an example (no documents, question or answer); one copy serves every judge's
    record of the answer."""

    __slots__ = ("id", "label", "error_types", "split", "meta")

    def __init__(self, example: Any):
        self.id = example.id
        self.label = _shared(example.label)
        self.error_types = example.error_types or ()
        self.split = _shared(example.split)
        self.meta = example.meta or _NO_META

    def same_as(self, example: Any) -> bool:
        """Whether ``example`` reads the same as this copy (the one answer, recorded for another judge)."""
        return (self.label, self.split, self.error_types, dict(self.meta)) == \
            (example.label, example.split, example.error_types or (), example.meta)


class LeanClaim:
    """What a summary reads of a claim verdict: its label, error type and view votes -- no claim text, evidence,
    reason or chunks (which make most of a claim's bytes: ~3.7 KB per answer of the ``views`` judge, kept for every
    answer of a run until the summary was written). Equal view votes share one read-only mapping."""

    __slots__ = ("label", "error_type", "views")

    def __init__(self, claim: Any, votes: dict[tuple, Any]):
        self.label = _shared(claim.label)
        self.error_type = _shared(claim.error_type)
        views = claim.views
        if views is not None:   # 2^n distinct vote patterns for n views: one mapping each
            key = tuple(views.items())
            views = votes.get(key) or votes.setdefault(key, MappingProxyType(dict(views)))
        self.views = views


class LeanRecord:
    """One result of a run as a summary reads it, flat: ``record.result`` and ``record.result.verdict`` are the
    record itself (their fields do not overlap), so a result costs one object, its example is shared with the
    other judges' results of the answer, and the claims kept are those with an error type or views, as
    :class:`LeanClaim` copies (no text)."""

    __slots__ = ("judge", "example", "calls", "latency_s", "queue_s", "started_at", "finished_at", "batch_size",
                 "stages", "repeats", "label", "score", "threshold", "path", "abstain_reason", "claims",
                 "suspected_injection", "injection_action")

    def __init__(self, record: ResultRecord, example: LeanExample, numbers: dict[float, float],
                 votes: dict[tuple, Any] | None = None):
        result, verdict = record.result, record.result.verdict
        self.judge = sys.intern(record.judge)
        self.example = example
        self.calls = result.calls or ()
        self.latency_s = result.latency_s
        self.queue_s = numbers.setdefault(result.queue_s, result.queue_s) if result.queue_s == 0 else result.queue_s
        self.started_at = result.started_at
        self.finished_at = result.finished_at
        self.batch_size = result.batch_size
        self.stages = result.stages or ()
        self.repeats = result.repeats or ()
        self.label = _shared(verdict.label)
        self.score = verdict.score
        self.threshold = verdict.threshold if verdict.threshold is None else \
            numbers.setdefault(verdict.threshold, verdict.threshold)
        self.path = _shared(verdict.path)
        self.abstain_reason = verdict.abstain_reason
        votes = {} if votes is None else votes
        self.claims = tuple(LeanClaim(c, votes) for c in verdict.claims if c.error_type or c.views)
        self.suspected_injection = verdict.suspected_injection or ()
        self.injection_action = verdict.injection_action

    @property
    def result(self) -> LeanRecord:
        """The result's fields (calls, latency, timing, stages, repeats): on the record itself."""
        return self

    @property
    def verdict(self) -> LeanRecord:
        """The verdict's fields (label, score, threshold, path, reason, claims, injection): on the record itself."""
        return self


def lean_lines(path: Path) -> Iterator[tuple[int, RunHeader | LeanRecord]]:
    """(line number, header or lean record) for every line of a records file, each validated as it is read."""
    examples: dict[str, LeanExample] = {}
    numbers: dict[float, float] = {}   # thresholds (a few per run) and zero queue times, one object each
    votes: dict[tuple, Any] = {}   # the claims' view votes, one mapping per pattern
    with open_records(path) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                if number == 1:
                    yield number, RunHeader.model_validate_json(line)
                    continue
                record = ResultRecord.model_validate_json(line)
            except ValueError as err:
                raise RecordsError(f"{path}:{number}: not a valid {'header' if number == 1 else 'result'} "
                                   f"record: {str(err).splitlines()[0]}") from err
            example = examples.get(record.example.id)
            if example is None or not example.same_as(record.example):
                example = examples[record.example.id] = LeanExample(record.example)
            yield number, LeanRecord(record, example, numbers, votes)


def read_lean_records(path: str | Path) -> RunRecords:
    """A records file (plain or .gz) with its results as :class:`LeanRecord` copies, for figures; a bad line is
    an error naming file and line."""
    path = Path(path)
    header: RunHeader | None = None
    results: list[Any] = []
    for number, item in lean_lines(path):
        if number == 1:
            header = item   # type: ignore[assignment]
        else:
            results.append(item)
    if header is None:
        raise RecordsError(f"{path}: empty records file (no header line)")
    return RunRecords(header=header, results=results)
