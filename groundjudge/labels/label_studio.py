"""Label Studio interchange: a run's answers as Label Studio tasks (each judge's verdict a prediction), the labelling
config that goes with them, and a Label Studio JSON export read back into labels.

The shapes follow Label Studio's documentation: tasks and predictions as in "Import pre-annotated data"
(https://labelstud.io/guide/predictions), the export as in "Label Studio JSON format of annotated tasks"
(https://labelstud.io/guide/task_format: ``annotations[].result``, ``completed_by``, ``created_at`` /
``updated_at``, ``was_cancelled``), and region values as the ``Choices``, ``Labels`` (text: ``start``, ``end``,
``text``, ``labels``) and ``TextArea`` tags give them (https://labelstud.io/tags).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from pydantic import ValidationError

from groundjudge.labels.interchange_common import (HUMAN_LABELS, SPAN_LABEL, Problems, RunView, check_span,
                                                   flagged_spans, normal_time, verdict_error_types)
from groundjudge.labels.store import LabelRecord
from groundjudge.types import Verdict

LABEL, ERROR_TYPES, SPANS, NOTE, ANSWER = "label", "error_types", "spans", "note", "answer"
"""Names of the config's controls (``from_name``) and of the answer's Text object (``to_name``)."""

CONTROL_TYPES = {LABEL: "choices", ERROR_TYPES: "choices", SPANS: "labels", NOTE: "textarea"}
"""The result ``type`` of each control of the config."""


def label_config(taxonomy: list[str]) -> str:
    """The labelling config (XML) of the exported tasks: question, documents and answer as text (white space kept,
    so offsets are the answer's), unsupported spans marked on the answer, grounded / ungrounded / unsure, the
    taxonomy's error types, and a note."""
    view = ET.Element("View")
    ET.SubElement(view, "Style").text = ".htx-text { white-space: pre-wrap; }"
    for name, title in (("question", "Question"), ("documents", "Documents")):
        ET.SubElement(view, "Header", value=title)
        ET.SubElement(view, "Text", name=name, value=f"${name}")
    ET.SubElement(view, "Header", value="Answer: mark the parts the documents do not support")
    labels = ET.SubElement(view, "Labels", name=SPANS, toName=ANSWER)
    ET.SubElement(labels, "Label", value=SPAN_LABEL, background="#ff8a80")
    ET.SubElement(view, "Text", name=ANSWER, value=f"${ANSWER}", granularity="symbol")
    ET.SubElement(view, "Header", value="Is the answer grounded in the documents?")
    choices = ET.SubElement(view, "Choices", name=LABEL, toName=ANSWER, choice="single", required="true",
                            showInline="true")
    for value in HUMAN_LABELS:
        ET.SubElement(choices, "Choice", value=value)
    ET.SubElement(view, "Header", value="Error types (optional)")
    types = ET.SubElement(view, "Choices", name=ERROR_TYPES, toName=ANSWER, choice="multiple")
    for value in taxonomy:
        ET.SubElement(types, "Choice", value=value)
    ET.SubElement(view, "Header", value="Note (optional)")
    ET.SubElement(view, "TextArea", name=NOTE, toName=ANSWER, maxSubmissions="1", editable="true")
    ET.indent(view)
    return ET.tostring(view, encoding="unicode") + "\n"


def _region(region_id: str, control: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"id": region_id, "from_name": control, "to_name": ANSWER, "type": CONTROL_TYPES[control], "value": value}


def prediction(index: int, judge: str, verdict: Verdict, answer: str, taxonomy: list[str]) -> dict[str, Any] | None:
    """One judge's verdict as a Label Studio prediction (``model_version`` the judge, ``score`` its grounding score,
    higher = more grounded), with its flagged spans and error types; None when the judge abstained."""
    if verdict.label == "abstain":
        return None
    result = [_region(f"j{index}_label", LABEL, {"choices": [verdict.label]})]
    for k, (start, end, _) in enumerate(flagged_spans(verdict, answer)):
        result.append(_region(f"j{index}_span{k}", SPANS,
                              {"start": start, "end": end, "text": answer[start:end], "labels": [SPAN_LABEL]}))
    types = verdict_error_types(verdict, taxonomy)
    if types:
        result.append(_region(f"j{index}_types", ERROR_TYPES, {"choices": types}))
    out: dict[str, Any] = {"model_version": judge, "result": result}
    if verdict.score is not None:
        out["score"] = verdict.score
    return out


def export_tasks(run: RunView, taxonomy: list[str]) -> list[dict[str, Any]]:
    """The run's answers as Label Studio tasks in queue order: ``data`` {id, question, documents, answer} and one
    prediction per judge that did not abstain."""
    tasks = []
    for example_id in run.order:
        example = run.examples[example_id]
        verdicts = run.verdicts.get(example_id, {})
        predictions = [p for i, judge in enumerate(run.judges) if judge in verdicts
                       for p in [prediction(i, judge, verdicts[judge], example.answer, taxonomy)] if p is not None]
        tasks.append({"data": {"id": example_id, "question": example.question or "",
                               "documents": example.context_text, "answer": example.answer},
                      "predictions": predictions})
    return tasks


def _labeller(completed_by: Any) -> str | None:
    if isinstance(completed_by, dict):
        email, user = completed_by.get("email"), completed_by.get("id")
        return str(email) if email else (f"label-studio:{user}" if user is not None else None)
    if isinstance(completed_by, bool) or completed_by is None or completed_by == "":
        return None
    return f"label-studio:{completed_by}" if isinstance(completed_by, int) else str(completed_by)


class _Annotation:
    """What one annotation's result says, gathered region by region (problems go to the shared list)."""

    def __init__(self, problems: Problems, index: int, item_id: str, where: str):
        self.problems, self.index, self.item_id, self.where = problems, index, item_id, where
        self.label: str | None = None
        self.error_types: list[str] = []
        self.spans: list = []
        self.note: list[str] = []

    def problem(self, where: str, message: str) -> None:
        """Note a problem at ``where`` (under this annotation)."""
        self.problems.add(self.index, self.item_id, f"{self.where}.{where}", message)

    def read(self, k: int, region: Any, answer: str, taxonomy: list[str]) -> None:
        """Read result region ``k``."""
        if not isinstance(region, dict) or not isinstance(region.get("value"), dict):
            return self.problem(f"result[{k}]", "not a region object with a value")
        control, value = region.get("from_name"), region["value"]
        if control not in CONTROL_TYPES:
            return self.problem(f"result[{k}].from_name", f"{control!r} is not a control of groundjudge's config "
                                                          f"({', '.join(CONTROL_TYPES)})")
        if control == NOTE:
            text = value.get("text", [])
            self.note.extend([text] if isinstance(text, str) else [str(t) for t in text])
        elif control == SPANS:
            self._span(k, value, answer)
        else:
            chosen = value.get("choices")
            if not isinstance(chosen, list):
                return self.problem(f"result[{k}].value.choices", "missing or not a list")
            self._choices(k, control, chosen, taxonomy)

    def _choices(self, k: int, control: str, chosen: list, taxonomy: list[str]) -> None:
        allowed = HUMAN_LABELS if control == LABEL else taxonomy
        for value in chosen:
            if value not in allowed:
                self.problem(f"result[{k}].value.choices", f"unknown {'label' if control == LABEL else 'error type'} "
                                                           f"{value!r} (known: {', '.join(allowed)})")
        if control == ERROR_TYPES:
            self.error_types.extend(v for v in chosen if v in allowed and v not in self.error_types)
        elif len(chosen) != 1:
            self.problem(f"result[{k}].value.choices", f"one label expected, got {len(chosen)}")
        elif chosen[0] in allowed:
            self.label = chosen[0]
        else:
            self.label = ""     # given but unknown (noted above): not a missing label

    def _span(self, k: int, value: dict, answer: str) -> None:
        labels = value.get("labels", [SPAN_LABEL])
        if labels != [SPAN_LABEL]:
            self.problem(f"result[{k}].value.labels", f"unknown span label {labels!r} (known: {SPAN_LABEL!r})")
        span = check_span(answer, value.get("start"), value.get("end"), value.get("text"))
        if isinstance(span, str):
            self.problem(f"result[{k}].value", span)
        else:
            self.spans.append(span)


def _annotation(j: int, annotation: Any, run: RunView, context: tuple) -> LabelRecord | None:
    problems, index, item_id, taxonomy = context
    where = f"annotations[{j}]"
    if not isinstance(annotation, dict):
        problems.add(index, item_id, where, "not an annotation object")
        return None
    labeller = _labeller(annotation.get("completed_by"))
    if labeller is None:
        problems.add(index, item_id, f"{where}.completed_by", "missing: whose label this is is unknown")
    result = annotation.get("result")
    if not isinstance(result, list):
        problems.add(index, item_id, f"{where}.result", "missing or not a list")
        return None
    before = len(problems.found)
    found = _Annotation(problems, index, item_id, where)
    for k, region in enumerate(result):
        found.read(k, region, run.examples[item_id].answer, taxonomy)
    if found.label is None:
        problems.add(index, item_id, f"{where}.result", f"no {LABEL!r} choice ({', '.join(HUMAN_LABELS)})")
    if not found.label or labeller is None or len(problems.found) > before:
        return None
    time = normal_time(annotation.get("updated_at")) or normal_time(annotation.get("created_at"))
    try:
        return LabelRecord(id=item_id, label=found.label, error_types=found.error_types, spans=found.spans,
                           note="\n".join(found.note), labeller=labeller, **({"time": time} if time else {}))
    except ValidationError as err:
        problems.add(index, item_id, where, str(err.errors()[0]["msg"]))
        return None


def parse_export(items: list[Any], run: RunView, taxonomy: list[str],
                 problems: Problems) -> tuple[list[LabelRecord], int]:
    """Labels of a Label Studio JSON export (a list of tasks) and the count of skipped (cancelled) annotations;
    problems (unknown ids, labels, error types, controls, bad spans) go to ``problems``."""
    labels: list[LabelRecord] = []
    skipped = 0
    for index, task in enumerate(items):
        if not isinstance(task, dict) or not isinstance(task.get("data"), dict):
            problems.add(index, None, "data", "not a Label Studio task (an object with a 'data' object)")
            continue
        raw_id = task["data"].get("id")
        item_id = str(raw_id) if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool) else None
        if item_id not in run.examples:
            problems.add(index, raw_id, "data.id", "unknown answer id (not in the run)" if raw_id is not None
                         else "missing: the task does not name the answer it labels")
            continue
        annotations = task.get("annotations", task.get("completions", []))
        if not isinstance(annotations, list):
            problems.add(index, item_id, "annotations", "not a list")
            continue
        for j, annotation in enumerate(annotations):
            if isinstance(annotation, dict) and annotation.get("was_cancelled"):
                skipped += 1
                continue
            record = _annotation(j, annotation, run, (problems, index, item_id, taxonomy))
            if record is not None:
                labels.append(record)
    return labels, skipped
