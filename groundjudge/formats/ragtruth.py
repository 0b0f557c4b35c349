"""RAGTruth (Niu et al., ACL 2024): word-level hallucination spans in RAG responses of six LLMs.

The release (github.com/ParticleMedia/RAGTruth, folder ``dataset/``) is two
JSON-lines files; the user passes ``response.jsonl``:

* ``response.jsonl``: ``{id, source_id, model, temperature, labels: [{start,
  end, text, meta, label_type, implicit_true, due_to_null}], split: "train" |
  "test", quality: "good" | "incorrect_refusal" | "truncated", response}``;
* ``source_info.jsonl`` in the same folder: ``{source_id, task_type: "QA" |
  "Summary" | "Data2txt", source: "MARCO" | "CNN/DM" | "Recent News" | "Yelp",
  source_info, prompt}``, where ``source_info`` is the article text
  (Summary), ``{"question", "passages"}`` with the passages in one string
  ("passage 1:...\\n\\npassage 2:...") for QA, or a Yelp business record
  (Data2txt).

Each response is one example: the question (QA only), the context (the
article; each QA passage as its own document; the Data2txt record as indented
JSON) and the response as the answer. Any hallucination span makes it
ungrounded (as the paper's response-level task does, ``implicit_true`` spans
included; their count is in meta); the distinct ``label_type`` values
(Evident/Subtle Conflict, Evident/Subtle Baseless Info) are the error types.
Responses of every quality are kept, with ``meta["quality"]``: the paper's
baselines use only ``quality == "good"``, so filter on it to match them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from groundjudge.formats._common import RowError, first_jsonl_object, make_example, read_jsonl
from groundjudge.types import Example

NAME = "ragtruth"
SOURCE_FILE = "source_info.jsonl"
RESPONSE_KEYS = ("id", "source_id", "labels", "response")
SPLITS = {"train": "train", "dev": "dev", "validation": "dev", "val": "dev", "test": "test"}
PASSAGE_START = re.compile(r"(?:^|\n+)(?=passage \d+\s*:)", re.IGNORECASE)


def detect(path: Path) -> bool:
    """A JSON-lines file of responses: source_id, labels and response in the first object."""
    first = first_jsonl_object(path)
    return first is not None and all(k in first for k in ("source_id", "labels", "response"))


def passages_of(passages: Any) -> list[str]:
    """The QA passages as separate documents: a list as given, a string cut before each "passage N:"."""
    if isinstance(passages, list):
        return [str(p).strip() for p in passages if str(p).strip()]
    text = str(passages or "")
    pieces = [p.strip() for p in PASSAGE_START.split(text) if p.strip()]
    return pieces or ([text] if text.strip() else [])


def context_of(source: dict[str, Any]) -> tuple[str | None, list[str]]:
    """(question, documents) of a source_info row, by task type."""
    info = source.get("source_info")
    if source.get("task_type") == "QA" and isinstance(info, dict):
        question = info.get("question")
        return (str(question) if question else None), passages_of(info.get("passages"))
    if isinstance(info, (dict, list)):
        return None, [json.dumps(info, ensure_ascii=False, indent=2)]
    return None, [str(info)] if info is not None else []


def _sources(path: Path) -> tuple[dict[str, dict[str, Any]], list[RowError]]:
    """source_id -> row of source_info.jsonl, and the rows that could not be read."""
    sources: dict[str, dict[str, Any]] = {}
    errors: list[RowError] = []
    for line, row in read_jsonl(path):
        if isinstance(row, RowError):
            errors.append(row)
            continue
        missing = [k for k in ("source_id", "task_type", "source_info") if k not in row]
        if missing:
            errors.append(RowError(file=str(path), line=line, field=missing[0], message="field required"))
        elif str(row["source_id"]) in sources:
            errors.append(RowError(file=str(path), line=line, field="source_id",
                                   message=f"duplicate source_id {row['source_id']!r}"))
        else:
            sources[str(row["source_id"])] = row
    return sources, errors


def _spans(labels: Any) -> list[dict[str, Any]] | str:
    """The label spans, or an error message when they are malformed."""
    if not isinstance(labels, list):
        return "expected a list of spans"
    for span in labels:
        if not isinstance(span, dict) or not span.get("label_type"):
            return "each span needs a label_type"
    return labels


def load(path: Path) -> Iterator[Example | RowError]:
    """One example per response line, joined with its source in source_info.jsonl beside it."""
    source_file = path.parent / SOURCE_FILE
    if not source_file.is_file():
        yield RowError(file=str(path), line=0, field=SOURCE_FILE,
                       message=f"RAGTruth needs {SOURCE_FILE} in the same folder as the responses ({source_file})")
        return
    sources, errors = _sources(source_file)
    yield from errors
    for line, row in read_jsonl(path):
        if isinstance(row, RowError):
            yield row
            continue
        missing = [k for k in RESPONSE_KEYS if k not in row]
        if missing:
            yield RowError(file=str(path), line=line, field=missing[0], message="field required")
            continue
        if not isinstance(row["response"], str):
            yield RowError(file=str(path), line=line, field="response", message="expected a string")
            continue
        spans = _spans(row["labels"])
        if isinstance(spans, str):
            yield RowError(file=str(path), line=line, field="labels", message=spans)
            continue
        source = sources.get(str(row["source_id"]))
        if source is None:
            yield RowError(file=str(path), line=line, field="source_id",
                           message=f"{row['source_id']!r} is not in {source_file}")
            continue
        raw_split = str(row.get("split") or "").strip().lower()
        question, docs = context_of(source)
        yield make_example(
            path, line, id=str(row["id"]), question=question, context=docs, answer=row["response"],
            label="ungrounded" if spans else "grounded",
            error_types=tuple(dict.fromkeys(str(s["label_type"]) for s in spans)),
            split=SPLITS.get(raw_split),
            meta={"group": str(row["source_id"]), "task_type": source.get("task_type"), "model": row.get("model"),
                  "temperature": row.get("temperature"), "quality": row.get("quality"),
                  "source_dataset": source.get("source"), "source_split": row.get("split"),
                  "spans": [[s.get("start"), s.get("end"), str(s["label_type"])] for s in spans],
                  "n_implicit_true": sum(1 for s in spans if s.get("implicit_true")),
                  "source": "ragtruth"})
