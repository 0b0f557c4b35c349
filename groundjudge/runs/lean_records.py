"""A records file read back for its figures only: every line validated, its figures kept in columns.

A summary reads from each result its judge, the example's id, gold label, error types, split and meta, and the
verdict's label, score, threshold, path, reason, injection findings and typed claims, with the result's timing and
calls -- never the documents, the answer or the evidence text, which make most of a record's bytes. Reading a run
of 50,000 answers as :class:`~groundjudge.types.ResultRecord` objects took gigabytes; one slotted copy per result
took ~370 bytes; :func:`read_lean_records` keeps the figures in typed columns (:class:`LeanResults`), about a
hundred bytes per result and one small object per answer, so that ``summarize`` (and the run's own summary) stay
flat in the documents' size and linear in the answers with a small constant. Each result read is a view that
answers the same attribute paths as the records (``record.example.label``, ``record.result.verdict.score``, ...),
so the summary's functions take either; a line that is not a valid record is the same error as
:func:`~groundjudge.runs.records.read_records`'s.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator, Sequence
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
    """What a summary reads of a claim verdict: its label, support score, error type and view votes -- no claim
    text, evidence, reason or chunks (which make most of a claim's bytes: ~3.7 KB per answer of the ``views`` judge,
    kept for every answer of a run until the summary was written). Equal view votes share one read-only mapping."""

    __slots__ = ("label", "score", "error_type", "views")

    def __init__(self, claim: Any, votes: dict[tuple, Any]):
        self.label = _shared(claim.label)
        self.score = claim.score
        self.error_type = _shared(claim.error_type)
        views = claim.views
        if views is not None:   # 2^n distinct vote patterns for n views: one mapping each
            key = tuple(views.items())
            views = votes.get(key) or votes.setdefault(key, MappingProxyType(dict(views)))
        self.views = views


_MISSING_STARTED, _MISSING_FINISHED, _MISSING_SCORE, _MISSING_THRESHOLD, _MISSING_BATCH = 1, 2, 4, 8, 16
"""Bits of :attr:`LeanResults.missing`: which of a result's optional numbers is None."""

_PLAIN = (None, (), (), (), None)
"""The rare fields of a result that has none of them: (abstain_reason, stages, repeats, suspected_injection,
injection_action), shared by every such result."""


class LeanResults(Sequence):
    """A run's results as a summary reads them, one column per field: numbers in typed arrays, the few distinct
    judges, labels and paths as codes, so a result costs about a hundred bytes and no object of its own. Each
    item read is a :class:`LeanRecord`, a view made on access that answers the record's attribute paths."""

    def __init__(self) -> None:
        self.strings: list[str] = []
        """The distinct judges, labels and paths, in order of first use."""
        self._codes: dict[str, int] = {}
        self.judge = array("I")
        self.label = array("I")
        self.path = array("I")
        self.example: list[LeanExample] = []
        self.latency_s = array("d")
        self.queue_s = array("d")
        self.started_at = array("d")
        self.finished_at = array("d")
        self.score = array("d")
        self.threshold = array("d")
        self.batch_size = array("I")
        self.missing = bytearray()
        """Per result, the bits ``_MISSING_*`` of its numbers that are None."""
        self.calls: list[tuple] = []
        self.claims: list[tuple] = []
        self.rare: list[tuple] = []
        """Per result, (abstain_reason, stages, repeats, suspected_injection, injection_action); most share
        ``_PLAIN``."""
        self._reasons: dict[str | None, tuple] = {None: _PLAIN}

    def _code(self, text: str) -> int:
        code = self._codes.get(text)
        if code is None:
            code = self._codes[text] = len(self.strings)
            self.strings.append(sys.intern(text))
        return code

    def append(self, record: ResultRecord, example: LeanExample, votes: dict[tuple, Any]) -> None:
        """Add ``record``'s figures (its example already read as ``example``; ``votes`` shares equal view votes)."""
        result, verdict = record.result, record.result.verdict
        missing = 0
        for bit, value in ((_MISSING_STARTED, result.started_at), (_MISSING_FINISHED, result.finished_at),
                           (_MISSING_SCORE, verdict.score), (_MISSING_THRESHOLD, verdict.threshold),
                           (_MISSING_BATCH, result.batch_size)):
            if value is None:
                missing |= bit
        self.missing.append(missing)
        self.judge.append(self._code(record.judge))
        self.label.append(self._code(verdict.label))
        self.path.append(self._code(verdict.path))
        self.example.append(example)
        self.latency_s.append(result.latency_s)
        self.queue_s.append(result.queue_s)
        self.started_at.append(result.started_at or 0.0)
        self.finished_at.append(result.finished_at or 0.0)
        self.score.append(0.0 if verdict.score is None else verdict.score)
        self.threshold.append(0.0 if verdict.threshold is None else verdict.threshold)
        self.batch_size.append(result.batch_size or 0)
        self.calls.append(result.calls or ())
        self.claims.append(tuple(LeanClaim(c, votes) for c in verdict.claims if c.error_type or c.views) or ())
        rare = (verdict.abstain_reason, result.stages or (), result.repeats or (), verdict.suspected_injection or (),
                verdict.injection_action)
        if rare[1:] == _PLAIN[1:]:   # a reason alone, or nothing: one tuple per distinct reason
            reason = rare[0]
            rare = self._reasons.get(reason) or self._reasons.setdefault(reason, rare)
        self.rare.append(rare)

    def __len__(self) -> int:
        return len(self.missing)

    def __getitem__(self, index: int | slice) -> Any:
        return _views(self, range(len(self)), index)

    def __iter__(self) -> Iterator[LeanRecord]:
        return (LeanRecord(self, i) for i in range(len(self)))

    def by_judge(self) -> dict[str, LeanSelection]:
        """The results of each judge, in file order: row numbers, not records (a view is made per item read)."""
        rows: dict[int, array] = {}
        for index, code in enumerate(self.judge):
            selected = rows.get(code)
            if selected is None:
                selected = rows[code] = array("I")
            selected.append(index)
        return {self.strings[code]: LeanSelection(self, selected) for code, selected in rows.items()}


class LeanSelection(Sequence):
    """Some rows of a :class:`LeanResults` (one judge's), read as :class:`LeanRecord` views like the whole."""

    def __init__(self, rows: LeanResults, indices: array):
        self.rows = rows
        self.indices = indices

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, index: int | slice) -> Any:
        return _views(self.rows, self.indices, index)

    def __iter__(self) -> Iterator[LeanRecord]:
        rows = self.rows
        return (LeanRecord(rows, i) for i in self.indices)


def _views(rows: LeanResults, positions: Sequence[int], index: int | slice) -> LeanRecord | list[LeanRecord]:
    """Item ``index`` of the rows at ``positions`` (a range or an array of row numbers) as a view, or a list of
    views for a slice; indices as a list takes them (negative from the end, IndexError past it)."""
    if isinstance(index, slice):
        return [LeanRecord(rows, i) for i in positions[index]]
    return LeanRecord(rows, positions[index])


def _code_column(name: str, doc: str) -> property:
    """A string field kept as a code into :attr:`LeanResults.strings`."""
    return property(lambda self: self.rows.strings[getattr(self.rows, name)[self.index]], doc=doc)


def _number_column(name: str, missing_bit: int, doc: str) -> property:
    """A number field kept in a typed array; None where the result's ``missing`` bit is set (0 = never None)."""
    def read(self: LeanRecord) -> Any:
        rows, index = self.rows, self.index
        if missing_bit and rows.missing[index] & missing_bit:
            return None
        return getattr(rows, name)[index]
    return property(read, doc=doc)


def _rare_column(position: int, doc: str) -> property:
    """One of the rare fields (abstain reason, stages, repeats, injection findings and action)."""
    return property(lambda self: self.rows.rare[self.index][position], doc=doc)


class LeanRecord:
    """One result of a run as a summary reads it: a view of row ``index`` of a :class:`LeanResults`. The record
    is flat: ``record.result`` and ``record.verdict`` are the view itself (their fields do not overlap), its example
    is shared with the other judges' results of the answer, and the claims kept are those with an error type or
    views, as :class:`LeanClaim` copies (no text)."""

    __slots__ = ("rows", "index")

    def __init__(self, rows: LeanResults, index: int):
        self.rows = rows
        self.index = index

    judge = _code_column("judge", "The judge's spec.")
    label = _code_column("label", "The verdict's label.")
    path = _code_column("path", "Which path produced the verdict.")
    latency_s = _number_column("latency_s", 0, "The result's latency in seconds.")
    queue_s = _number_column("queue_s", 0, "The result's client-side wait in seconds.")
    started_at = _number_column("started_at", _MISSING_STARTED, "Unix time judging started, or None.")
    finished_at = _number_column("finished_at", _MISSING_FINISHED, "Unix time judging finished, or None.")
    score = _number_column("score", _MISSING_SCORE, "The verdict's score, or None.")
    threshold = _number_column("threshold", _MISSING_THRESHOLD, "The verdict's threshold, or None.")
    batch_size = _number_column("batch_size", _MISSING_BATCH, "The chunk's size, or None.")
    abstain_reason = _rare_column(0, "Why the judge abstained, or None.")
    stages = _rare_column(1, "Verdicts of the inner judges of a fallback or cascade.")
    repeats = _rare_column(2, "The verdicts of a repeated judge.")
    suspected_injection = _rare_column(3, "Injection findings.")
    injection_action = _rare_column(4, "What the judge did about an injection, or None.")

    @property
    def example(self) -> LeanExample:
        """The answer's example, shared with the other judges' results of it."""
        return self.rows.example[self.index]

    @property
    def calls(self) -> tuple:
        """The result's LLM calls."""
        return self.rows.calls[self.index]

    @property
    def claims(self) -> tuple[LeanClaim, ...]:
        """The claims with an error type or views."""
        return self.rows.claims[self.index]

    @property
    def result(self) -> LeanRecord:
        """The result's fields (calls, latency, timing, stages, repeats): on the record itself."""
        return self

    @property
    def verdict(self) -> LeanRecord:
        """The verdict's fields (label, score, threshold, path, reason, claims, injection): on the record itself."""
        return self


def read_lean_records(path: str | Path) -> RunRecords:
    """A records file (plain or .gz) with its results as a :class:`LeanResults`, for figures; every line is
    validated as it is read, and a bad line is an error naming file and line."""
    path = Path(path)
    header: RunHeader | None = None
    results = LeanResults()
    examples: dict[str, LeanExample] = {}
    votes: dict[tuple, Any] = {}   # the claims' view votes, one mapping per pattern
    with open_records(path) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                if number == 1:
                    header = RunHeader.model_validate_json(line)
                    continue
                record = ResultRecord.model_validate_json(line)
            except ValueError as err:
                raise RecordsError(f"{path}:{number}: not a valid {'header' if number == 1 else 'result'} "
                                   f"record: {str(err).splitlines()[0]}") from err
            example = examples.get(record.example.id)
            if example is None or not example.same_as(record.example):
                example = examples[record.example.id] = LeanExample(record.example)
            results.append(record, example, votes)
    if header is None:
        raise RecordsError(f"{path}: empty records file (no header line)")
    return RunRecords(header=header, results=results)   # type: ignore[arg-type]
