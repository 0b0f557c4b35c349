"""The committed runs the label-budget scripts read: one judge's verdicts and the gold labels, by example id.

Shared by scripts/label_budget.py and scripts/label_budget_ppi.py, so that neither imports the other.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from groundjudge.runs.records import read_records  # noqa: E402


def verdicts_of(folder: str, spec: str | None) -> tuple[dict[str, str], dict[str, str]]:
    """(id -> verdict label, id -> gold label) of one judge of a committed run."""
    records = read_records(ROOT / folder / "records.jsonl.gz")
    spec = spec or records.header.judges[0].spec
    rows = [r for r in records.results if r.judge == spec]
    if not rows:
        raise SystemExit(f"{folder}: no judge {spec!r}")
    return ({r.example.id: r.result.verdict.label for r in rows},
            {r.example.id: r.example.label for r in rows if r.example.label})
