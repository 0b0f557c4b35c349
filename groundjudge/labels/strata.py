"""Strata of a run's answers by the judges' verdict pattern: answers on which every judge says the same thing
fall in one stratum, each way the judges split in another."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from groundjudge.runs.records import RunRecords

SHORT = {"grounded": "G", "ungrounded": "U", "abstain": "A"}
"""One letter per verdict label in a pattern's name."""

MISSING = "-"
"""The letter of a judge that left an answer unjudged."""


def judge_order(records: RunRecords) -> list[str]:
    """The run's judges (their spec text), in header order."""
    return [spec.spec for spec in records.header.judges]


def verdict_table(records: RunRecords) -> dict[str, dict[str, str]]:
    """Per example id, each judge's verdict label (the last record where one repeats)."""
    table: dict[str, dict[str, str]] = {}
    for record in records.results:
        table.setdefault(record.example.id, {})[record.judge] = record.result.verdict.label
    return table


def pattern(verdicts: Mapping[str, str], judges: Sequence[str]) -> str:
    """The stratum name of one answer: a letter per judge in order (G, U, A, ``-`` not judged)."""
    return "".join(SHORT.get(verdicts.get(judge, ""), MISSING) for judge in judges)


def is_disagreement(name: str) -> bool:
    """Whether the judges' decisions differ in this stratum (an abstention or a gap disagrees with a decision)."""
    return len(set(name)) > 1


def strata_of(records: RunRecords) -> dict[str, str]:
    """Example id -> stratum name, for every answer of the run (data order)."""
    judges = judge_order(records)
    return {example_id: pattern(verdicts, judges) for example_id, verdicts in verdict_table(records).items()}
