"""LLM-AggreFact (Tang et al., EMNLP 2024): claims checked against grounding documents, from 11 benchmarks.

The release (huggingface.co/datasets/lytang/LLM-AggreFact; fields listed in
github.com/Liyan06/MiniCheck README) has the columns ``dataset`` (the source
benchmark: AggreFact-CNN, TofuEval-MediaS, ExpertQA, RAGTruth, ...), ``doc``,
``claim``, ``label`` (1 if the doc supports the claim, else 0) and
``contamination_identifier``, in a ``dev`` and a ``test`` split. This adapter
reads it exported as CSV, TSV or JSON lines (``.jsonl``/``.json``, as
``Dataset.to_json`` writes).

label 1 is grounded, 0 ungrounded (ints, or the strings "0"/"1"; anything
else is a RowError on ``label``). The id is the row's ``id`` column if there is
one, else ``<file stem>-<line>``. The split is the row's ``split`` column if
present, else the file name's when it is a split name (``dev.csv``,
``test-00000-of-00001.jsonl``, ``llm_aggrefact_dev.csv``), else unassigned.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from groundjudge.formats._common import (
    RowError,
    csv_header,
    first_jsonl_object,
    make_example,
    read_delimited,
    read_jsonl,
    short_hash,
)
from groundjudge.types import Example

NAME = "llm_aggrefact"
COLUMNS = ("doc", "claim", "label")
SPLITS = {"train": "train", "dev": "dev", "validation": "dev", "val": "dev", "test": "test"}
LABELS = {"1": "grounded", "0": "ungrounded", "1.0": "grounded", "0.0": "ungrounded"}


def _tsv_header(path: Path) -> list[str]:
    return csv_header(path, "\t")


def detect(path: Path) -> bool:
    """A CSV, TSV or JSON-lines file whose header / first object has doc, claim and label."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return all(c in csv_header(path) for c in COLUMNS)
    if suffix == ".tsv":
        return all(c in _tsv_header(path) for c in COLUMNS)
    first = first_jsonl_object(path)
    return first is not None and all(c in first for c in COLUMNS)


def parse_label(value: Any) -> str | None:
    """grounded / ungrounded for 1 / 0 (int, integral float or string), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return {1: "grounded", 0: "ungrounded"}.get(value) if value in (0, 1) else None
    if isinstance(value, str):
        return LABELS.get(value.strip())
    return None


def split_of_file(path: Path) -> str | None:
    """The split named by a file like dev.csv, test-00000-of-00001.jsonl or aggrefact_dev.csv."""
    match = re.fullmatch(r"(?:.*[-_.])?(train|dev|validation|val|test)(?:-\d+-of-\d+)?", path.stem.lower())
    return SPLITS[match.group(1)] if match else None


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any] | RowError]]:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return read_delimited(path)
    if suffix == ".tsv":
        return read_delimited(path, "\t")
    return read_jsonl(path)


def load(path: Path) -> Iterator[Example | RowError]:
    """One example per row: doc is the context, claim the answer."""
    file_split = split_of_file(path)
    for line, row in _rows(path):
        if isinstance(row, RowError):
            yield row
            continue
        if None in row:
            yield RowError(file=str(path), line=line, field="<row>", message="more cells than header columns")
            continue
        missing = [c for c in COLUMNS if row.get(c) is None or (isinstance(row.get(c), str) and not row[c].strip())]
        if missing:
            yield RowError(file=str(path), line=line, field=missing[0], message="field required")
            continue
        if not isinstance(row["doc"], str) or not isinstance(row["claim"], str):
            field = "doc" if not isinstance(row["doc"], str) else "claim"
            yield RowError(file=str(path), line=line, field=field, message="expected a string")
            continue
        label = parse_label(row["label"])
        if label is None:
            yield RowError(file=str(path), line=line, field="label",
                           message=f"expected 1 (supported) or 0 (unsupported), got {row['label']!r}")
            continue
        raw_split = str(row.get("split") or "").strip().lower()
        if raw_split and raw_split not in SPLITS:
            yield RowError(file=str(path), line=line, field="split",
                           message=f"unknown split {row['split']!r}; expected train, dev or test")
            continue
        row_id = row.get("id")
        dataset = row.get("dataset")
        yield make_example(
            path, line, id=str(row_id) if row_id not in (None, "") else f"{path.stem}-{line}",
            context=[row["doc"]], answer=row["claim"], label=label,
            split=SPLITS[raw_split] if raw_split else file_split,
            meta={"group": short_hash(row["doc"]), "dataset": dataset if dataset not in (None, "") else None,
                  "source": "llm_aggrefact"})
