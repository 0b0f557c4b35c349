"""TruthfulQA.csv (Lin et al., 2022) read with the claims protocol of evidence-typed generation (ETG-RLM).

The evidence (context) of a question is its Best Answer; every ';'-separated
Correct Answer is a supported claim (grounded) and every Incorrect Answer an
unsupported one (ungrounded). The Best Answer also appears among the correct
answers and is kept as one of them, as the protocol counts it.

Splitting rule, as in the seed's evaluation code (HuggingFace ``truthful_qa``
lists, then ``len(a.strip()) >= 3``): split on ';', strip, drop empty pieces
(trailing ';') and pieces shorter than 3 characters (the bare answers "No"
and "UK", which are not claims without the question). On the 817-row CSV this
gives the seed's 5,865 claims (2,577 correct / 3,288 incorrect); keeping the
short pieces would give 5,887.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from groundjudge.formats._common import RowError, csv_header, make_example, read_delimited
from groundjudge.types import Example

NAME = "truthfulqa"
COLUMNS = ("Question", "Best Answer", "Correct Answers", "Incorrect Answers")
MIN_CLAIM_CHARS = 3
"""Shorter pieces ("No", "UK") are dropped, as in the seed protocol."""


def detect(path: Path) -> bool:
    """A .csv file whose header has Best Answer and Correct Answers."""
    if path.suffix.lower() != ".csv":
        return False
    header = csv_header(path)
    return "Best Answer" in header and "Correct Answers" in header


def claims(cell: str | None) -> list[str]:
    """The claims of a ';'-separated cell: stripped, empty and too-short pieces dropped."""
    pieces = (piece.strip() for piece in (cell or "").split(";"))
    return [piece for piece in pieces if len(piece) >= MIN_CLAIM_CHARS]


def load(path: Path) -> Iterator[Example | RowError]:
    """One example per correct or incorrect answer of every question; line = the row's line in the CSV."""
    header = csv_header(path)
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        yield RowError(file=str(path), line=1, field=missing[0], message="column missing from the header")
        return
    for index, (line, row) in enumerate(read_delimited(path)):
        if isinstance(row, RowError):
            yield row
            continue
        yield from _row(path, index, line, row)


def _row(path: Path, index: int, line: int, row: dict[str, str]) -> Iterator[Example | RowError]:
    """The claims of row ``index`` (0-based, ids ``tqa-<index>-c<j>`` / ``-i<j>``)."""
    empty = next((c for c in ("Question", "Best Answer") if not (row.get(c) or "").strip()), None)
    if empty is not None:
        yield RowError(file=str(path), line=line, field=empty, message="empty (line = line of the CSV file)")
        return
    correct, incorrect = claims(row.get("Correct Answers")), claims(row.get("Incorrect Answers"))
    if not correct and not incorrect:
        yield RowError(file=str(path), line=line, field="Correct Answers",
                       message="no correct or incorrect answers (line = line of the CSV file)")
        return
    group = f"tqa-{index:03d}"
    for kind, label, answers in (("c", "grounded", correct), ("i", "ungrounded", incorrect)):
        for j, claim in enumerate(answers):
            yield make_example(
                path, line, id=f"{group}-{kind}{j}", question=row["Question"].strip(),
                context=[row["Best Answer"].strip()], answer=claim, label=label,
                meta={"group": group, "category": row.get("Category"), "type": row.get("Type"),
                      "source": "truthfulqa"})
