"""FaithBench (Bao et al., NAACL 2025): human-annotated hallucinations in summaries written by ten LLMs.

Three shapes of the public release (github.com/vectara/FaithBench) are read:

* ``FaithBench.csv``: one row per summary, columns ``source, summary, LLM,
  worst-label, best-label``. ``worst-label`` is the most severe label any
  annotator gave (``Consistent`` < ``Benign`` < ``Questionable`` <
  ``Unwanted``). Line numbers are those where the (possibly multi-line) row
  starts.
* ``data_for_release/batch_N.json``: ``{"samples": [{sample_id, source,
  summary, annotations: [{annot_id, annotator_id, annotator_name, label:
  ["Unwanted", "Unwanted.Intrinsic"], note, summary_span, summary_start,
  summary_end, source_span?, ...}], metadata: {summarizer, hhemv1, ...,
  raw_sample_id}}]}``. The worst label is derived from the annotations as
  the release's ``scripts/binarize.py`` does ("worst" strategy); a sample
  without annotations is Consistent.
* the earlier JSON shape: a bare array of samples with ``meta_model`` and
  ``meta_sample_id`` instead of ``metadata``.

Label: worst label ``Unwanted`` is ungrounded; Consistent, Benign and
Questionable are grounded (binarize.py can also count Questionable as
hallucinated; that choice is kept out of the gold label but the worst label
is in ``meta["worst_label"]``). Error types of an ungrounded summary are its
Unwanted sub-labels (``Unwanted.Intrinsic`` / ``Unwanted.Extrinsic``), or
``Unwanted`` when no sub-label was given. JSON errors give the file line where
the sample's object starts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from groundjudge.formats._common import (
    RowError,
    csv_header,
    decode_json,
    first_array_object,
    json_head,
    make_example,
    read_delimited,
    read_text,
    short_hash,
)
from groundjudge.types import Example

NAME = "faithbench"
SEVERITY = ("Consistent", "Benign", "Questionable", "Unwanted")
"""Top-level labels, least to most severe."""
WORST_COLUMNS = ("worst-label", "worst_label")
SAMPLE_KEYS = ("source", "summary", "annotations")


def detect(path: Path) -> bool:
    """The CSV with source, summary and a worst-label column, or a JSON release batch."""
    if path.suffix.lower() == ".csv":
        header = csv_header(path)
        return "source" in header and "summary" in header and any(c in header for c in WORST_COLUMNS)
    head = json_head(path, 20000).lstrip("\ufeff \t\r\n")
    if head.startswith("{"):
        return re.match(r'\{\s*"samples"\s*:\s*\[', head) is not None and all(f'"{k}"' in head for k in SAMPLE_KEYS)
    first = first_array_object(path)
    return first is not None and all(k in first for k in SAMPLE_KEYS)


def split_label(label: str) -> tuple[str, str | None]:
    """("Unwanted", "Unwanted.Intrinsic") for "Unwanted.Intrinsic"; ("Benign", None) for "Benign".

    The top level is the part before the first "." or "_"; the old README's
    misspelling "Instrinsic" is read as "Intrinsic".
    """
    match = re.fullmatch(r"\s*([A-Za-z]+)\s*(?:[._]\s*([A-Za-z]+)\s*)?", str(label))
    if match is None:
        return str(label), None
    top = match.group(1).capitalize()
    sub = match.group(2)
    return top, f"{top}.{sub.capitalize().replace('Instrinsic', 'Intrinsic')}" if sub else None


def worst_of(labels: list[str]) -> tuple[str, tuple[str, ...]] | str:
    """(worst top-level label, Unwanted sub-labels) of a list of labels, or an error message."""
    worst = 0
    subtypes: list[str] = []
    for label in labels:
        top, sub = split_label(label)
        if top not in SEVERITY:
            return f"unknown label {label!r}; expected one of {', '.join(SEVERITY)} (with an optional .subtype)"
        worst = max(worst, SEVERITY.index(top))
        if top == "Unwanted" and sub and sub not in subtypes:
            subtypes.append(sub)
    return SEVERITY[worst], tuple(subtypes)


def _example(path: Path, line: int, row_id: str, source: Any, summary: Any, worst: str,
             subtypes: tuple[str, ...], meta: dict[str, Any]) -> Example | RowError:
    for field, value in (("source", source), ("summary", summary)):
        if not isinstance(value, str) or not value.strip():
            return RowError(file=str(path), line=line, field=field, message="missing or empty")
    ungrounded = worst == "Unwanted"
    return make_example(path, line, id=row_id, context=[source], answer=summary,
                        label="ungrounded" if ungrounded else "grounded",
                        error_types=(subtypes or ("Unwanted",)) if ungrounded else (),
                        meta={"group": short_hash(source), "source": "faithbench", "worst_label": worst,
                              **{k: v for k, v in meta.items() if v not in (None, "")}})


def _load_csv(path: Path) -> Iterator[Example | RowError]:
    header = csv_header(path)
    worst_column = next((c for c in WORST_COLUMNS if c in header), WORST_COLUMNS[0])
    for index, (line, row) in enumerate(read_delimited(path)):
        if isinstance(row, RowError):
            yield row
            continue
        if None in row:
            yield RowError(file=str(path), line=line, field="<row>", message="more cells than header columns")
            continue
        cell = (row.get(worst_column) or "").strip()
        if not cell:
            yield RowError(file=str(path), line=line, field=worst_column, message="missing or empty")
            continue
        worst = worst_of([cell])
        if isinstance(worst, str):
            yield RowError(file=str(path), line=line, field=worst_column, message=worst)
            continue
        yield _example(path, line, f"{path.stem}-{index}", row.get("source"), row.get("summary"), *worst,
                       meta={"model": row.get("LLM"), "best_label": (row.get("best-label") or "").strip(),
                             "row": index})


def _array_items(text: str, pos: int, start_line: int) -> Iterator[tuple[int, Any] | RowError]:
    """(file line, item) for each item of the JSON array whose "[" is at pos; a RowError ends it."""
    line, counted = start_line, pos
    pos += 1
    while True:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        if pos < len(text) and text[pos] == "]":
            return
        line += text.count("\n", counted, pos)
        counted = pos
        try:
            item, pos = decode_json(text, pos)
        except json.JSONDecodeError as err:
            yield RowError(file="", line=err.lineno, field="<json>", message=err.msg)
            return
        yield line, item
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        if pos < len(text) and text[pos] == ",":
            pos += 1
        elif pos >= len(text) or text[pos] != "]":
            yield RowError(file="", line=text.count("\n", 0, pos) + 1, field="<json>",
                           message="expected ',' or ']' after an array item")
            return


def _samples(text: str) -> Iterator[tuple[int, Any] | RowError]:
    """The samples of a batch file ({"samples": [...]}) or of a bare array, with their file lines."""
    stripped = text.lstrip("\ufeff \t\r\n")
    pos = len(text) - len(stripped)
    if stripped.startswith("["):
        yield from _array_items(text, pos, text.count("\n", 0, pos) + 1)
        return
    match = re.compile(r'\{\s*"samples"\s*:\s*\[').match(text, pos)
    if match is None:
        yield RowError(file="", line=1, field="samples", message='expected {"samples": [...]} or a JSON array')
        return
    start = match.end() - 1
    yield from _array_items(text, start, text.count("\n", 0, start) + 1)


def _load_json(path: Path) -> Iterator[Example | RowError]:
    text = read_text(path)
    if isinstance(text, RowError):
        yield text
        return
    for item in _samples(text):
        if isinstance(item, RowError):
            yield item.model_copy(update={"file": str(path)})
            continue
        line, sample = item
        if not isinstance(sample, dict):
            yield RowError(file=str(path), line=line, field="<row>", message="not a JSON object")
            continue
        annotations = sample.get("annotations") or []
        if not isinstance(annotations, list) or not all(
                isinstance(a, dict) and isinstance(a.get("label", []), list) for a in annotations):
            yield RowError(file=str(path), line=line, field="annotations",
                           message="expected a list of objects, each with a list of labels")
            continue
        worst = worst_of([label for a in annotations for label in a.get("label") or []])
        if isinstance(worst, str):
            yield RowError(file=str(path), line=line, field="annotations.label", message=worst)
            continue
        metadata = sample.get("metadata") if isinstance(sample.get("metadata"), dict) else {}
        sample_id = sample.get("sample_id", sample.get("meta_sample_id"))
        meta = {
            "model": metadata.get("summarizer", sample.get("meta_model")),
            "sample_id": sample_id,
            "raw_sample_id": metadata.get("raw_sample_id", sample.get("meta_sample_id")),
            "batch": path.stem,
            "n_annotations": len(annotations),
        }
        row_id = f"{path.stem}-{sample_id if sample_id is not None else line}"
        yield _example(path, line, row_id, sample.get("source"), sample.get("summary"), *worst, meta=meta)


def load(path: Path) -> Iterator[Example | RowError]:
    """Every summary of a FaithBench CSV or JSON batch, as an Example or a RowError."""
    if path.suffix.lower() == ".csv":
        yield from _load_csv(path)
    else:
        yield from _load_json(path)
