"""ContractNLI (Koreeda & Manning, 2021): NDA contracts x 17 fixed hypotheses.

``{"documents": [{id, file_name, text, spans, annotation_sets: [{annotations:
{hyp_key: {choice, spans}}}]}], "labels": {hyp_key: {hypothesis, ...}}}``.
Each contract x annotated hypothesis is an example: the contract is the
context, the hypothesis the answer; Entailment is grounded, Contradiction and
NotMentioned ungrounded. The gold evidence spans are kept in meta as
``[start, end]`` character offsets into the contract text. Row errors give the
document's 1-based index in ``documents`` as their ``line``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from groundjudge.formats._common import RowError, json_head, key_field, make_example, read_json_document
from groundjudge.types import Example

NAME = "contractnli"
CHOICES = {"Entailment": "grounded", "Contradiction": "ungrounded", "NotMentioned": "ungrounded"}
WHERE = "line = 1-based index of the document"
_SPLIT = re.compile(r"(?<![a-z])(train|dev|test)(?![a-z])", re.IGNORECASE)


def detect(path: Path) -> bool:
    """A JSON object with "documents" whose documents carry "annotation_sets" (and a "labels" map)."""
    head = json_head(path, 20000)
    if not head.lstrip().startswith("{") or '"documents"' not in head:
        return False
    if '"annotation_sets"' in head:
        return True
    # a long first contract pushes its annotation_sets past the head: look at the whole text
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return False
    return '"annotation_sets"' in text and '"labels"' in text


def source_split(path: Path) -> str | None:
    """train / dev / test when the file name says so (as a word: ``dev.json``, ``train_small.json``)."""
    match = _SPLIT.search(path.stem)
    return match.group(1).lower() if match else None


def _span(spans: list[Any], i: Any, size: int) -> list[int] | None:
    """The [start, end] of span id i, or None if there is no such span inside a text of this size."""
    if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(spans):
        return None
    span = spans[i]
    if (isinstance(span, list | tuple) and len(span) == 2 and all(isinstance(x, int) for x in span)
            and 0 <= span[0] <= span[1] <= size):
        return [span[0], span[1]]
    return None


def _document(path: Path, index: int, doc: Any, labels: dict[str, Any],
              split: str | None) -> Iterator[Example | RowError]:
    """The examples of one document, or RowErrors for what is wrong in it."""
    where = f"documents[{index - 1}]"

    def error(field: str, message: str) -> RowError:
        return RowError(file=str(path), line=index, field=field, message=f"{message} ({WHERE})")

    if not isinstance(doc, dict):
        yield error(where, "document is not an object")
        return
    if not isinstance(doc.get("text"), str):
        yield error(f"{where}.text", "document text missing" if "text" not in doc else "text is not a string")
        return
    try:
        annotations = doc["annotation_sets"][0]["annotations"]
    except (KeyError, IndexError, TypeError):
        annotations = None
    if not isinstance(annotations, dict):
        yield error(f"{where}.annotation_sets", "expected annotation_sets[0].annotations, a map of hypotheses")
        return
    spans = doc.get("spans") if isinstance(doc.get("spans"), list) else []
    doc_id = doc.get("id", index)
    for key, annotation in annotations.items():
        field = key_field(f"{where}.annotation_sets[0].annotations", key)
        choice = annotation.get("choice") if isinstance(annotation, dict) else None
        if not isinstance(choice, str) or choice not in CHOICES:
            yield error(f"{field}.choice", f"unknown choice {choice!r}; expected one of {sorted(CHOICES)}")
            continue
        hypothesis = labels.get(key)
        if not isinstance(hypothesis, dict) or not isinstance(hypothesis.get("hypothesis"), str):
            yield error(f"{key_field('labels', key)}.hypothesis", "hypothesis not defined in labels")
            continue
        span_ids = annotation.get("spans") or []
        evidence = [_span(spans, i, len(doc["text"])) for i in span_ids] if isinstance(span_ids, list) else [None]
        if None in evidence:
            yield error(f"{field}.spans", f"evidence span ids {span_ids!r} do not all name spans of the document")
            continue
        meta = {"group": f"doc-{doc_id}", "choice": choice, "hypothesis_key": key, "evidence": evidence,
                "file_name": str(doc.get("file_name", "")).strip(), "source": "contractnli"}
        if split:
            meta["source_split"] = split
        result = make_example(path, index, id=f"{doc_id}-{key}", question=None, context=[doc["text"]],
                              answer=hypothesis["hypothesis"], label=CHOICES[choice], error_types=(), meta=meta)
        if isinstance(result, RowError):
            result.message = f"{result.message} ({key}; {WHERE})"
        yield result


def load(path: Path) -> Iterator[Example | RowError]:
    """One example per document x hypothesis; line = the document's 1-based index (0: the whole file)."""
    data = read_json_document(path)
    if isinstance(data, RowError):
        yield data
        return
    documents = data.get("documents") if isinstance(data, dict) else None
    labels = data.get("labels") if isinstance(data, dict) else None
    if not isinstance(documents, list) or not isinstance(labels, dict):
        field = "documents" if not isinstance(documents, list) else "labels"
        yield RowError(file=str(path), line=0, field=field,
                       message="not a ContractNLI file: expected {'documents': [...], 'labels': {...}}")
        return
    split = source_split(path)
    for index, doc in enumerate(documents, start=1):
        yield from _document(path, index, doc, labels, split)
