"""Argilla (2.x) interchange: a run's answers as Argilla records with the judges' verdicts as suggestions and
metadata, the dataset settings that go with them, and an Argilla records export read back into labels.

The shapes follow Argilla 2.x's SDK: a record as ``Record.to_dict()`` writes it, which is what
``dataset.records.to_list(flatten=False)`` and ``dataset.records.to_json(path)`` export (``id``, ``fields``,
``metadata``, ``suggestions`` {question: {value, score, agent}}, ``responses`` {question: [{value, user_id}]},
``vectors``, ``status``, ``_server_id``; argilla-io/argilla, argilla/src/argilla/records/_resource.py), and the
settings as ``Settings.to_json`` writes them (``Settings.serialize``, argilla/src/argilla/settings/_resource.py).
Argilla keeps one suggestion per question and record: the ``label`` suggestion is the run's first judge's verdict
(its ``agent``), the span and error-type suggestions come from the first judge that gives them; every judge's
verdict and score is in the metadata (``judgeN_label``, ``judgeN_score``, N in the run's judge order, the judge's
name in the property's title), hidden from annotators.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from groundjudge.labels.interchange_common import (HUMAN_LABELS, SPAN_LABEL, Problems, RunView, check_span,
                                                   flagged_spans, verdict_error_types)
from groundjudge.labels.store import LabelRecord

QUESTIONS = ("label", "error_types", "spans", "note")
"""The dataset's questions, as the settings name them."""

VERDICTS = ("grounded", "ungrounded", "abstain")
"""What a judge's verdict metadata may hold."""


def _options(values: list[str] | tuple[str, ...]) -> list[dict[str, str]]:
    return [{"text": value, "value": value} for value in values]


def _question(name: str, title: str, required: bool, settings: dict[str, Any]) -> dict[str, Any]:
    return {"id": None, "inserted_at": None, "updated_at": None, "name": name, "settings": settings, "title": title,
            "description": None, "required": required, "dataset_id": None, "type": settings["type"]}


def _field(name: str, title: str, required: bool) -> dict[str, Any]:
    return {"id": None, "inserted_at": None, "updated_at": None, "name": name,
            "settings": {"type": "text", "use_markdown": False}, "title": title, "required": required,
            "description": None, "dataset_id": None, "type": "text"}


def _metadata(name: str, title: str, settings: dict[str, Any]) -> dict[str, Any]:
    return {"id": None, "inserted_at": None, "updated_at": None, "name": name,
            "settings": {"visible_for_annotators": False, **settings}, "title": title,
            "visible_for_annotators": False, "dataset_id": None}


def dataset_settings(judges: list[str], taxonomy: list[str]) -> dict[str, Any]:
    """The Argilla dataset settings (``rg.Settings.from_json`` reads them) for the exported records: fields
    question, documents, answer; questions label, error_types, spans (on the answer), note; the judges' metadata."""
    metadata = []
    for n, judge in enumerate(judges, start=1):
        metadata.append(_metadata(f"judge{n}_label", f"{judge}: verdict", {"type": "terms", "values": list(VERDICTS)}))
        metadata.append(_metadata(f"judge{n}_score", f"{judge}: grounding score",
                                  {"type": "float", "min": 0.0, "max": 1.0}))
    return {
        "guidelines": "Is the answer grounded in the documents? Mark the parts of the answer the documents do not "
                      "support, and the error types, if any.",
        "questions": [
            _question("label", "Is the answer grounded in the documents?", True,
                      {"type": "label_selection", "options": _options(HUMAN_LABELS), "visible_options": 3}),
            _question("error_types", "Error types", False,
                      {"type": "multi_label_selection", "options": _options(taxonomy),
                       "visible_options": len(taxonomy) if len(taxonomy) >= 3 else None,
                       "options_order": "natural"}),
            _question("spans", "Unsupported parts of the answer", False,
                      {"type": "span", "allow_overlapping": False, "field": "answer",
                       "options": _options([SPAN_LABEL]), "visible_options": None}),
            _question("note", "Note", False, {"type": "text", "use_markdown": False}),
        ],
        "fields": [_field("question", "Question", False), _field("documents", "Documents", True),
                   _field("answer", "Answer", True)],
        "vectors": [],
        "metadata": metadata,
        "allow_extra_metadata": False,
        "distribution": {"strategy": "overlap", "min_submitted": 1},
        "mapping": None,
    }


def _suggestions(run: RunView, example_id: str, taxonomy: list[str]) -> dict[str, Any]:
    verdicts = run.verdicts.get(example_id, {})
    answer = run.examples[example_id].answer
    suggestions: dict[str, Any] = {}
    first = verdicts.get(run.judges[0]) if run.judges else None
    if first is not None and first.label != "abstain":
        suggestions["label"] = {"value": first.label, "score": first.score, "agent": run.judges[0]}
    for judge in run.judges:
        verdict = verdicts.get(judge)
        if verdict is None or verdict.label == "abstain":
            continue
        spans = flagged_spans(verdict, answer)
        if spans and "spans" not in suggestions:
            suggestions["spans"] = {"value": [{"start": s, "end": e, "label": SPAN_LABEL} for s, e, _ in spans],
                                    "score": None, "agent": judge}
        types = verdict_error_types(verdict, taxonomy)
        if types and "error_types" not in suggestions:
            suggestions["error_types"] = {"value": types, "score": None, "agent": judge}
    return suggestions


def export_records(run: RunView, taxonomy: list[str]) -> list[dict[str, Any]]:
    """The run's answers as Argilla 2.x records (``Record.to_dict()`` shape) in queue order."""
    records = []
    for example_id in run.order:
        example = run.examples[example_id]
        fields = {"question": example.question} if example.question else {}
        fields.update(documents=example.context_text, answer=example.answer)
        metadata: dict[str, Any] = {}
        for n, judge in enumerate(run.judges, start=1):
            verdict = run.verdicts.get(example_id, {}).get(judge)
            if verdict is not None:
                metadata[f"judge{n}_label"] = verdict.label
                if verdict.score is not None:
                    metadata[f"judge{n}_score"] = verdict.score
        records.append({"id": example_id, "fields": fields, "metadata": metadata,
                        "suggestions": _suggestions(run, example_id, taxonomy), "responses": {}, "vectors": {},
                        "status": "pending", "_server_id": None})
    return records


def _response_value(question: str, value: Any, answer: str, taxonomy: list[str]) -> tuple[Any, str | None]:
    """A response's value as a label field, or the reason it cannot be one."""
    if question == "label":
        return (value, None) if value in HUMAN_LABELS else \
            (None, f"unknown label {value!r} (known: {', '.join(HUMAN_LABELS)})")
    if question == "error_types":
        values = value if isinstance(value, list) else [value]
        unknown = [v for v in values if v not in taxonomy]
        return (values, None) if not unknown else \
            (None, f"unknown error type {unknown[0]!r} (known: {', '.join(taxonomy)})")
    if question == "note":
        return ("" if value is None else str(value)), None
    spans = []
    for span in value if isinstance(value, list) else [value]:
        if not isinstance(span, dict):
            return None, f"a span must be an object {{start, end, label}} (got {span!r})"
        if span.get("label", SPAN_LABEL) != SPAN_LABEL:
            return None, f"unknown span label {span.get('label')!r} (known: {SPAN_LABEL!r})"
        checked = check_span(answer, span.get("start"), span.get("end"), span.get("text"))
        if isinstance(checked, str):
            return None, checked
        spans.append(checked)
    return spans, None


def _record_responses(record: dict, context: tuple) -> tuple[dict[str, dict[str, Any]], int]:
    """Per user id, the record's answers by question; and the count of draft or discarded responses left out."""
    problems, index, item_id, answer, taxonomy = context
    responses = record.get("responses") or {}
    if not isinstance(responses, dict):
        problems.add(index, item_id, "responses", "not an object of question -> [responses]")
        return {}, 0
    by_user: dict[str, dict[str, Any]] = {}
    skipped = 0
    for question, given in responses.items():
        if question not in QUESTIONS:
            problems.add(index, item_id, f"responses.{question}",
                         f"not a question of groundjudge's settings ({', '.join(QUESTIONS)})")
            continue
        for j, response in enumerate(given if isinstance(given, list) else [given]):
            where = f"responses.{question}[{j}]"
            if not isinstance(response, dict) or not response.get("user_id"):
                problems.add(index, item_id, where, "not a response object with a user_id")
                continue
            if response.get("status") in ("draft", "discarded"):
                skipped += 1
                continue
            value, why = _response_value(question, response.get("value"), answer, taxonomy)
            if why:
                problems.add(index, item_id, f"{where}.value", why)
                continue
            by_user.setdefault(str(response["user_id"]), {})[question] = value
    return by_user, skipped


def parse_export(items: list[Any], run: RunView, taxonomy: list[str], problems: Problems,
                 time: str) -> tuple[list[LabelRecord], int]:
    """Labels of an Argilla records export (``records.to_list(flatten=False)`` / ``records.to_json``), one per
    user who answered the ``label`` question, stamped ``time`` (the export carries no response times); and the
    count of draft or discarded responses left out. Problems go to ``problems``."""
    labels: list[LabelRecord] = []
    skipped = 0
    for index, record in enumerate(items):
        if not isinstance(record, dict) or ("fields" not in record and "responses" not in record):
            flat = isinstance(record, dict) and any(".responses" in key for key in record)
            problems.add(index, None, "responses", "a flattened export (use records.to_list(flatten=False) or "
                                                   "records.to_json)" if flat else "not an Argilla record object")
            continue
        raw_id = record.get("id")
        item_id = str(raw_id) if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool) else None
        if item_id not in run.examples:
            problems.add(index, raw_id, "id", "unknown answer id (not in the run)" if raw_id is not None
                         else "missing: the record does not name the answer it labels")
            continue
        context = (problems, index, item_id, run.examples[item_id].answer, taxonomy)
        by_user, left_out = _record_responses(record, context)
        skipped += left_out
        for user, answers in by_user.items():
            if "label" not in answers:
                problems.add(index, item_id, "responses.label", f"user {user} answered without a label")
                continue
            try:
                labels.append(LabelRecord(id=item_id, label=answers["label"],
                                          error_types=answers.get("error_types", []), spans=answers.get("spans", []),
                                          note=answers.get("note", ""), labeller=f"argilla:{user}", time=time))
            except ValidationError as err:
                problems.add(index, item_id, f"responses (user {user})", str(err.errors()[0]["msg"]))
    return labels, skipped
