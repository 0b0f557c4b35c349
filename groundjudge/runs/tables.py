"""Flat tables from a run's records: one row per verdict or per claim, written as CSV or Parquet."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from groundjudge.runs.records import RunRecords

INSTALL_HINT = 'pip install "groundjudge[pandas]"'

VERDICT_COLUMNS: tuple[str, ...] = (
    "run_id", "judge", "kind", "example_id", "split", "gold_label", "label", "score", "threshold", "correct",
    "abstain_reason", "path", "n_claims", "n_unsupported", "error_types", "gold_error_types", "llm_calls",
    "llm_calls_cached", "input_tokens", "output_tokens", "cost_usd", "latency_s", "queue_s", "question", "answer",
    "meta", "n_repeats",
)
"""The columns of :func:`verdict_rows`, in order."""

CLAIM_COLUMNS: tuple[str, ...] = (
    "run_id", "judge", "kind", "example_id", "claim_index", "claim", "start", "end", "label", "score", "error_type",
    "reason", "evidence_text", "evidence_doc_index", "evidence_start", "evidence_end",
)
"""The columns of :func:`claim_rows`, in order."""


def _kinds(records: RunRecords) -> dict[str, str]:
    """Judge spec text -> judge name, from the run header."""
    return {judge.spec: judge.name for judge in records.header.judges}


def _joined(values: Iterable[str | None]) -> str | None:
    """Distinct non-empty values in first-seen order joined with ';', or None when there are none."""
    distinct = list(dict.fromkeys(v for v in values if v))
    return ";".join(distinct) if distinct else None


def verdict_rows(records: RunRecords) -> list[dict[str, Any]]:
    """One row per result record (judge x answer): the verdict, the gold label, the LLM usage and the example."""
    kinds = _kinds(records)
    rows = []
    for record in records.results:
        example, result = record.example, record.result
        verdict, calls = result.verdict, result.calls
        rows.append({
            "run_id": records.header.run_id,
            "judge": record.judge,
            "kind": kinds.get(record.judge),
            "example_id": example.id,
            "split": example.split,
            "gold_label": example.label,
            "label": verdict.label,
            "score": verdict.score,
            "threshold": verdict.threshold,
            "correct": None if example.label is None else verdict.label == example.label,
            "abstain_reason": verdict.abstain_reason,
            "path": verdict.path,
            "n_claims": len(verdict.claims),
            "n_unsupported": sum(1 for claim in verdict.claims if claim.label != "supported"),
            "error_types": _joined(claim.error_type for claim in verdict.claims),
            "gold_error_types": _joined(example.error_types),
            "llm_calls": sum(1 for call in calls if not call.cached),
            "llm_calls_cached": sum(1 for call in calls if call.cached),
            "input_tokens": sum(call.input_tokens for call in calls),
            "output_tokens": sum(call.output_tokens for call in calls),
            "cost_usd": sum(call.cost_usd for call in calls),
            "latency_s": result.latency_s,
            "queue_s": result.queue_s,
            "question": example.question,
            "answer": example.answer,
            "meta": json.dumps(example.meta, ensure_ascii=False, sort_keys=True, default=str),
            "n_repeats": len(getattr(result, "repeats", ()) or ()),
        })
    return rows


def claim_rows(records: RunRecords) -> list[dict[str, Any]]:
    """One row per claim verdict of every result: the claim, its span, its label and its evidence."""
    kinds = _kinds(records)
    rows = []
    for record in records.results:
        for index, verdict in enumerate(record.result.verdict.claims):
            evidence = verdict.evidence
            rows.append({
                "run_id": records.header.run_id,
                "judge": record.judge,
                "kind": kinds.get(record.judge),
                "example_id": record.example.id,
                "claim_index": index,
                "claim": verdict.claim.text,
                "start": verdict.claim.start,
                "end": verdict.claim.end,
                "label": verdict.label,
                "score": verdict.score,
                "error_type": verdict.error_type,
                "reason": verdict.reason,
                "evidence_text": evidence.text if evidence else None,
                "evidence_doc_index": evidence.doc_index if evidence else None,
                "evidence_start": evidence.start if evidence else None,
                "evidence_end": evidence.end if evidence else None,
            })
    return rows


def _columns(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None) -> list[str]:
    """The given columns, then any other key of the rows, in first-seen order."""
    seen = dict.fromkeys(columns or ())
    for row in rows:
        seen.update(dict.fromkeys(row))
    return list(seen)


def write_table(rows: Sequence[dict[str, Any]], path: Path, fmt: Literal["csv", "parquet"],
                columns: Sequence[str] | None = None) -> Path:
    """Write rows to ``path`` as CSV or Parquet (columns: ``columns`` then any other key, first seen first)."""
    path = Path(path)
    names = _columns(rows, columns)
    if fmt == "csv":
        with open(path, "w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=names)
            if names:
                writer.writeheader()
            writer.writerows(rows)
    elif fmt == "parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError as err:
            raise ImportError(f"Parquet output needs pyarrow: {INSTALL_HINT}") from err
        if rows:
            table = pa.Table.from_pylist([{name: row.get(name) for name in names} for row in rows])
        else:
            table = pa.table({name: pa.array([], type=pa.null()) for name in names})
        pq.write_table(table, path)
    else:
        raise ValueError(f"unknown table format {fmt!r} (csv or parquet)")
    return path


def to_dataframe(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None):
    """Rows as a pandas DataFrame (columns: ``columns`` then any other key, first seen first)."""
    try:
        import pandas as pd
    except ImportError as err:
        raise ImportError(f"DataFrames need pandas: {INSTALL_HINT}") from err
    return pd.DataFrame(list(rows), columns=_columns(rows, columns))
