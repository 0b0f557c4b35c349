"""A test session's verdicts as a run folder (``records.jsonl`` + ``summary.json``, source ``pytest``), written
by :class:`~groundjudge.runs.live_records.LiveRecords` so ``report``, ``summarize`` and ``replay`` read it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from groundjudge.runs.live_records import LiveRecords, live_header
from groundjudge.testing.gate_model import GateVerdict

SOURCE = "pytest"
"""The live source the header names."""


def write_session(folder: str | Path, verdicts: Sequence[GateVerdict], command: Sequence[str] = ("pytest",)) -> Path:
    """Write the session's verdicts into ``folder`` (a previous session's records there are replaced); the
    records path. Each judge's header entry is the first one seen; the header's template hashes are theirs."""
    specs = {}
    for verdict in verdicts:
        specs.setdefault(verdict.spec.spec, verdict.spec)
    templates = {name: t.hash for spec in specs.values() for name, t in spec.templates.items()}
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("records.jsonl", "summary.json"):
        (out / name).unlink(missing_ok=True)
    with LiveRecords(out, live_header(list(specs.values()), SOURCE, templates), command) as live:
        for verdict in verdicts:
            live.write(verdict.judge, verdict.example, verdict.result)
    return live.path
