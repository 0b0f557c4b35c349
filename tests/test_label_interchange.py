"""Labels to and from Label Studio and Argilla: ``groundjudge label RUN --export label-studio|argilla --to FILE`` and
``--import FILE``.

The formats are checked against the tools' own documentation and, where the SDK is installed, their own code:

* Label Studio tasks with predictions: https://labelstud.io/guide/predictions ; the JSON export of annotated
  tasks (``annotations[].result``, ``completed_by``, ``created_at`` / ``updated_at``, ``was_cancelled``):
  https://labelstud.io/guide/task_format ; text spans as ``labels`` results with ``start`` / ``end`` / ``text``:
  https://labelstud.io/tags/labels . With ``label-studio-sdk`` importable, its ``LabelInterface`` parses the
  config and validates every prediction and annotation (the SDK pins numpy < 2.3, so it is not a dependency).
* Argilla 2.x records as ``Record.to_dict()`` / ``dataset.records.to_list(flatten=False)`` write them
  (argilla-io/argilla, argilla/src/argilla/records/_resource.py): ``suggestions`` {question: {value, score, agent}},
  ``responses`` {question: [{value, user_id}]}. With ``argilla`` importable, ``Record.from_dict`` and
  ``Settings`` read the export back unchanged.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from unittest import mock

import pytest

from groundjudge.labels.interchange import detect_format, export_run, import_labels, read_import, sidecar_path
from groundjudge.labels.interchange_common import read_run, taxonomy_names
from groundjudge.labels.label_studio import prediction
from groundjudge.labels.queue import queue_for_run, write_queue
from groundjudge.labels.store import LABELS_FILE, LabelRecord, LabelsError, append_label, read_labels
from groundjudge.runs.records import find_records, read_records
from groundjudge.types import Claim, ClaimVerdict, Verdict
from conftest import cli, rent_rows, write_jsonl

JUDGES = ["quip:n=21,threshold=0.5", "quip:n=8,threshold=0.7"]
LEGAL = ["Factual Inaccuracies", "Contextual Misinterpretations", "Procedural Errors", "Reasoning Errors",
         "Misattributions", "Terminological Errors"]
ANSWER_U1 = "Tenants may withhold rent whenever the landlord delays repairs for 4 weeks."


@pytest.fixture(scope="module")
def base_run(tmp_path_factory) -> Path:
    """One run of two quip judges on 8 answers (made once for the module; tests work on copies)."""
    folder = tmp_path_factory.mktemp("interchange")
    data = write_jsonl(folder / "data.jsonl", rent_rows(4))
    cli("run", str(data), "--judge", JUDGES[0], "--judge", JUDGES[1], "--out", str(folder / "run"), "--quiet",
        "--dev-fraction", "0")
    return folder / "run"


@pytest.fixture
def run(base_run, tmp_path) -> Path:
    """A fresh copy of the run folder."""
    return Path(shutil.copytree(base_run, tmp_path / "run"))


def _region(region_id: str, control: str, kind: str, value: dict) -> dict:
    return {"value": value, "id": region_id, "from_name": control, "to_name": "answer", "type": kind,
            "origin": "manual"}


def _annotation(annotation_id: int, user: int, task: int, result: list, when: str, cancelled: bool = False) -> dict:
    """One annotation as Label Studio's JSON export writes it (https://labelstud.io/guide/task_format)."""
    return {"id": annotation_id, "completed_by": user, "result": result, "was_cancelled": cancelled,
            "ground_truth": False, "created_at": when, "updated_at": when, "draft_created_at": None,
            "lead_time": 12.5, "prediction": {}, "result_count": len(result), "unique_id": f"uid-{annotation_id}",
            "import_id": None, "last_action": None, "task": task, "project": 3, "updated_by": user,
            "parent_prediction": None, "parent_annotation": None, "last_created_by": None}


def _task(task_id: int, example_id: str, answer: str, annotations: list) -> dict:
    return {"id": task_id, "annotations": annotations, "file_upload": "ls.json", "drafts": [], "predictions": [],
            "data": {"id": example_id, "question": "", "documents": "...", "answer": answer}, "meta": {},
            "created_at": "2024-05-02T09:00:00.000000Z", "updated_at": "2024-05-02T11:00:00.000000Z",
            "inner_id": task_id, "total_annotations": len(annotations), "cancelled_annotations": 0,
            "total_predictions": 0, "comment_count": 0, "unresolved_comment_count": 0,
            "last_comment_updated_at": None, "project": 3, "updated_by": None, "comment_authors": []}


def label_studio_export() -> list[dict]:
    """A Label Studio JSON export of three tasks: u1 labelled by users 1 and 2 (user 2 with a span, an error type
    and a note), g1 by user 1, and g2 only skipped (a cancelled annotation)."""
    span_text = "withhold rent"
    start = ANSWER_U1.index(span_text)
    u1 = _task(11, "u1", ANSWER_U1, [
        _annotation(101, 1, 11, [_region("a1", "label", "choices", {"choices": ["ungrounded"]})],
                    "2024-05-02T10:00:00.000000Z"),
        _annotation(102, 2, 11, [
            _region("b1", "spans", "labels", {"start": start, "end": start + len(span_text), "text": span_text,
                                              "labels": ["unsupported"]}),
            _region("b2", "label", "choices", {"choices": ["ungrounded"]}),
            _region("b3", "error_types", "choices", {"choices": ["Contextual Misinterpretations"]}),
            _region("b4", "note", "textarea", {"text": ["the documents say nothing about withholding"]}),
        ], "2024-05-02T10:30:00.000000Z"),
    ])
    g1 = _task(12, "g1", "Rent of 101 crowns is due on day 2 of each month.", [
        _annotation(103, 1, 12, [_region("c1", "label", "choices", {"choices": ["grounded"]})],
                    "2024-05-02T10:05:00.000000Z")])
    g2 = _task(13, "g2", "Rent of 102 crowns is due on day 3 of each month.", [
        _annotation(104, 2, 13, [], "2024-05-02T10:40:00.000000Z", cancelled=True)])
    return [u1, g1, g2]


USERS = ("2f0c2b64-1d7e-4a39-9a86-3e2f6f1c0a11", "8d5e7a90-5b1c-4c0e-b8f4-6a9d2c3e4f22")


def argilla_export() -> list[dict]:
    """Records as Argilla 2.x's ``dataset.records.to_list(flatten=False)`` exports them: u1 answered by two users
    (the second with spans, an error type and a note), g3 by one, g0 by nobody."""
    start = ANSWER_U1.index("4 weeks")
    return [
        {"id": "u1", "fields": {"documents": "...", "answer": ANSWER_U1}, "metadata": {"judge1_label": "ungrounded"},
         "suggestions": {"label": {"value": "ungrounded", "score": 0.0, "agent": JUDGES[0]}},
         "responses": {"label": [{"value": "ungrounded", "user_id": USERS[0]},
                                 {"value": "unsure", "user_id": USERS[1]}],
                       "error_types": [{"value": ["Factual Inaccuracies"], "user_id": USERS[1]}],
                       "spans": [{"value": [{"start": start, "end": start + 7, "label": "unsupported"}],
                                  "user_id": USERS[1]}],
                       "note": [{"value": "a number the documents do not give", "user_id": USERS[1]}]},
         "vectors": {}, "status": "completed", "_server_id": "0d3c7a5e-9f0b-4d7e-8a1c-2b3d4e5f6a77"},
        {"id": "g3", "fields": {"documents": "...", "answer": "x"}, "metadata": {}, "suggestions": {},
         "responses": {"label": [{"value": "grounded", "user_id": USERS[0]}]}, "vectors": {},
         "status": "completed", "_server_id": "1e4d8b6f-0a1c-4e8f-9b2d-3c4e5f6a7b88"},
        {"id": "g0", "fields": {"documents": "...", "answer": "x"}, "metadata": {}, "suggestions": {},
         "responses": {}, "vectors": {}, "status": "pending", "_server_id": "2f5e9c7a-1b2d-4f9a-8c3e-4d5f6a7b8c99"},
    ]


def _write(path: Path, items) -> Path:
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


# --- export ------------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_label_studio_export_is_tasks_with_one_prediction_per_judge(run, tmp_path):
    cli("label", str(run), "--export", "label-studio", "--to", str(tmp_path / "ls.json"))
    tasks = json.loads((tmp_path / "ls.json").read_text(encoding="utf-8"))
    config = ET.fromstring((tmp_path / "ls.label_config.xml").read_text(encoding="utf-8"))
    view = read_run(run)
    assert [t["data"]["id"] for t in tasks] == view.order and len(tasks) == 8
    controls = {tag.get("name"): tag for tag in config if tag.tag in ("Choices", "Labels", "TextArea")}
    assert [c.get("value") for c in controls["label"]] == ["grounded", "ungrounded", "unsure"]
    assert [c.get("value") for c in controls["error_types"]] == LEGAL == taxonomy_names()
    assert [c.get("value") for c in controls["spans"]] == ["unsupported"]
    objects = {tag.get("name"): tag.get("value") for tag in config if tag.tag == "Text"}
    assert objects == {"question": "$question", "documents": "$documents", "answer": "$answer"}
    spans_seen = 0
    for task in tasks:
        example = view.examples[task["data"]["id"]]
        assert task["data"] == {"id": example.id, "question": "", "documents": example.context_text,
                                "answer": example.answer}
        assert [p["model_version"] for p in task["predictions"]] == JUDGES
        for pred in task["predictions"]:
            verdict = view.verdicts[example.id][pred["model_version"]]
            assert pred["score"] == verdict.score and 0 <= pred["score"] <= 1
            for region in pred["result"]:
                assert set(region) == {"id", "from_name", "to_name", "type", "value"}
                assert region["from_name"] in controls and region["to_name"] == "answer"
                if region["type"] == "choices" and region["from_name"] == "label":
                    assert region["value"] == {"choices": [verdict.label]}
                if region["type"] == "labels":
                    spans_seen += 1
                    value = region["value"]
                    assert value["labels"] == ["unsupported"]
                    assert example.answer[value["start"]:value["end"]] == value["text"]
    assert spans_seen >= 4      # quip flags the altered answers' claims


def test_export_follows_the_queue_when_the_run_has_one(run, tmp_path):
    queue = [item.id for item in queue_for_run(read_records(find_records(run)), size=3, seed=4)]
    write_queue(queue_for_run(read_records(find_records(run)), size=3, seed=4), run)
    export_run(run, "argilla", tmp_path / "a.json")
    assert [r["id"] for r in json.loads((tmp_path / "a.json").read_text())] == queue


def test_a_prediction_carries_error_types_and_an_abstention_gives_none():
    answer = "The fee is 9 percent and applies at once."
    claims = (ClaimVerdict(claim=Claim(text="The fee is 9 percent", start=0, end=20), label="contradicted",
                           error_type="Factual Inaccuracies"),
              ClaimVerdict(claim=Claim(text="applies at once", start=25, end=40), label="supported"))
    verdict = Verdict(example_id="x", label="ungrounded", score=0.2, claims=claims, path="llm:test")
    pred = prediction(0, "error_types:model=m", verdict, answer, LEGAL)
    assert pred["model_version"] == "error_types:model=m" and pred["score"] == 0.2
    kinds = {(r["from_name"], r["type"]): r["value"] for r in pred["result"]}
    assert kinds[("spans", "labels")] == {"start": 0, "end": 20, "text": "The fee is 9 percent",
                                          "labels": ["unsupported"]}
    assert kinds[("error_types", "choices")] == {"choices": ["Factual Inaccuracies"]}
    abstain = Verdict(example_id="x", label="abstain", abstain_reason="no reply", path="llm:test")
    assert prediction(0, "j", abstain, answer, LEGAL) is None


def test_argilla_export_is_records_with_suggestions_and_settings(run, tmp_path):
    cli("label", str(run), "--export", "argilla", "--to", str(tmp_path / "ar.json"))
    records = json.loads((tmp_path / "ar.json").read_text(encoding="utf-8"))
    settings = json.loads(sidecar_path(tmp_path / "ar.json", "argilla").read_text(encoding="utf-8"))
    view = read_run(run)
    assert len(records) == 8
    for record in records:
        assert set(record) == {"id", "fields", "metadata", "suggestions", "responses", "vectors", "status",
                               "_server_id"}
        example, verdicts = view.examples[record["id"]], view.verdicts[record["id"]]
        assert record["fields"] == {"documents": example.context_text, "answer": example.answer}
        first = verdicts[JUDGES[0]]
        assert record["suggestions"]["label"] == {"value": first.label, "score": first.score, "agent": JUDGES[0]}
        for n, judge in enumerate(JUDGES, start=1):
            assert record["metadata"][f"judge{n}_label"] == verdicts[judge].label
            assert record["metadata"][f"judge{n}_score"] == verdicts[judge].score
        for span in record["suggestions"].get("spans", {}).get("value", []):
            assert 0 <= span["start"] < span["end"] <= len(example.answer) and span["label"] == "unsupported"
        assert record["responses"] == {} and record["status"] == "pending"
    questions = {q["name"]: q for q in settings["questions"]}
    assert [o["value"] for o in questions["label"]["settings"]["options"]] == ["grounded", "ungrounded", "unsure"]
    assert [o["value"] for o in questions["error_types"]["settings"]["options"]] == LEGAL
    assert questions["spans"]["settings"]["field"] == "answer"
    titles = {m["name"]: (m["title"], m["visible_for_annotators"]) for m in settings["metadata"]}
    assert titles["judge2_score"] == (f"{JUDGES[1]}: grounding score", False)


def test_the_label_studio_sdk_accepts_the_config_predictions_and_annotations(run, tmp_path):
    interface = pytest.importorskip("label_studio_sdk.label_interface")
    export_run(run, "label-studio", tmp_path / "ls.json")
    li = interface.LabelInterface((tmp_path / "ls.label_config.xml").read_text(encoding="utf-8"))
    assert {c.name for c in li.controls} == {"label", "error_types", "spans", "note"}
    for task in json.loads((tmp_path / "ls.json").read_text(encoding="utf-8")):
        for pred in task["predictions"]:
            assert li.validate_prediction(pred), pred
    for task in label_studio_export():
        for annotation in task["annotations"]:
            assert li.validate_annotation(annotation), annotation
    bad = {"model_version": "x", "result": [{"id": "a", "from_name": "label", "to_name": "answer",
                                             "type": "choices", "value": {"choices": ["maybe"]}}]}
    assert not li.validate_prediction(bad)


def test_argilla_reads_the_export_back_unchanged(run, tmp_path):
    rg = pytest.importorskip("argilla")
    export_run(run, "argilla", tmp_path / "ar.json")
    settings = json.loads(sidecar_path(tmp_path / "ar.json", "argilla").read_text(encoding="utf-8"))
    with mock.patch.object(rg.Argilla, "_get_default", return_value=mock.MagicMock()):
        parsed = rg.Settings._from_dict(settings)
        assert [q.name for q in parsed.questions] == ["label", "error_types", "spans", "note"]
        assert parsed.serialize()["questions"] == settings["questions"]
        assert parsed.serialize()["metadata"] == settings["metadata"]
    for record in json.loads((tmp_path / "ar.json").read_text(encoding="utf-8")):
        assert rg.Record.from_dict(record).to_dict() == record
    for record in argilla_export():     # the import fixture is the shape Argilla writes (it holds no status)
        back = rg.Record.from_dict(record).to_dict()
        assert back["responses"] == record["responses"] and back["suggestions"] == record["suggestions"]


# --- import ------------------------------------------------------------------------------------------------------

def test_a_label_studio_export_imports_every_annotator_span_type_and_note(run, tmp_path):
    source = _write(tmp_path / "export.json", label_studio_export())
    out = cli("label", str(run), "--import", str(source)).stdout
    assert "imported 3 label(s)" in out and "1 cancelled" in out and "label-studio:1, label-studio:2" in out
    labels = read_labels(run / LABELS_FILE)
    assert [(r.id, r.labeller, r.label) for r in labels] == [
        ("u1", "label-studio:1", "ungrounded"), ("g1", "label-studio:1", "grounded"),
        ("u1", "label-studio:2", "ungrounded")]         # in time order
    second = labels[2]
    start = ANSWER_U1.index("withhold rent")
    assert [s.model_dump() for s in second.spans] == [{"start": start, "end": start + 13, "text": "withhold rent"}]
    assert second.error_types == ["Contextual Misinterpretations"]
    assert second.note == "the documents say nothing about withholding"
    assert second.time == "2024-05-02T10:30:00+00:00" and labels[0].error_types == [] and labels[0].spans == []
    before = (run / LABELS_FILE).read_bytes()
    report = import_labels(run, source)            # the same export again appends nothing
    assert (report.imported, report.already_present) == (0, 3) and (run / LABELS_FILE).read_bytes() == before


def test_a_label_studio_span_without_text_takes_the_answers_text(run, tmp_path):
    tasks = label_studio_export()
    del tasks[0]["annotations"][1]["result"][0]["value"]["text"]
    labels, _ = read_import(run, _write(tmp_path / "e.json", tasks))
    assert labels[-1].spans[0].text == "withhold rent"


def test_an_argilla_export_imports_one_label_per_user(run, tmp_path):
    records = argilla_export()
    records[1]["responses"]["label"].append({"value": "ungrounded", "user_id": USERS[1], "status": "draft"})
    report = import_labels(run, _write(tmp_path / "argilla.json", records))
    assert (report.format, report.imported, report.left_out, report.items_unlabelled) == ("argilla", 3, 1, 1)
    labels = read_labels(run / LABELS_FILE)
    assert [(r.id, r.labeller, r.label) for r in labels] == [
        ("u1", f"argilla:{USERS[0]}", "ungrounded"), ("u1", f"argilla:{USERS[1]}", "unsure"),
        ("g3", f"argilla:{USERS[0]}", "grounded")]
    start = ANSWER_U1.index("4 weeks")
    assert labels[1].spans[0].model_dump() == {"start": start, "end": start + 7, "text": "4 weeks"}
    assert labels[1].error_types == ["Factual Inaccuracies"] and labels[1].note.startswith("a number")
    assert detect_format(records, "x") == "argilla" and detect_format(label_studio_export(), "x") == "label-studio"


def _bad(case: str):
    """A broken export and the words its error must hold."""
    tasks = label_studio_export()
    if case == "unknown id":
        tasks[1]["data"]["id"] = "nope"
        return tasks, ["item 1 (id 'nope')", "data.id", "unknown answer id"]
    if case == "unknown label":
        tasks[0]["annotations"][1]["result"][1]["value"]["choices"] = ["maybe"]
        return tasks, ["item 0 (id 'u1')", "annotations[1].result[1].value.choices", "unknown label 'maybe'"]
    if case == "unknown error type":
        tasks[0]["annotations"][1]["result"][2]["value"]["choices"] = ["Typos"]
        return tasks, ["annotations[1].result[2].value.choices", "unknown error type 'Typos'"]
    if case == "span text":
        tasks[0]["annotations"][1]["result"][0]["value"]["text"] = "pay rent"
        return tasks, ["annotations[1].result[0].value", "is not the answer's text"]
    if case == "unknown control":
        tasks[2]["annotations"][0].update(was_cancelled=False, result=[
            {"id": "z", "from_name": "sentiment", "to_name": "answer", "type": "choices", "value": {"choices": ["x"]}}])
        return tasks, ["item 2 (id 'g2')", "result[0].from_name", "'sentiment' is not a control"]
    records = argilla_export()
    if case == "argilla unknown id and label":
        records[1]["id"] = "ghost"
        records[0]["responses"]["label"][0]["value"] = "yes"
        return records, ["item 1 (id 'ghost'): id: unknown answer id", "responses.label[0].value: unknown label 'yes'"]
    raise AssertionError(case)


@pytest.mark.parametrize("case", ["unknown id", "unknown label", "unknown error type", "span text", "unknown control",
                                  "argilla unknown id and label"])
def test_a_bad_import_names_every_problem_and_imports_nothing(run, tmp_path, case):
    append_label(run / LABELS_FILE, LabelRecord(id="g0", label="grounded", labeller="ann"))
    before = (run / LABELS_FILE).read_bytes()
    items, words = _bad(case)
    with pytest.raises(LabelsError) as err:
        import_labels(run, _write(tmp_path / "bad.json", items))
    assert str(err.value).startswith("nothing imported")
    for word in words:
        assert word in str(err.value), str(err.value)
    assert (run / LABELS_FILE).read_bytes() == before


def test_a_malformed_or_undecodable_file_is_one_clear_error_on_the_command_line(run, tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('[{"data": {"id": "u1"}, "annotations": [}]', encoding="utf-8")
    result = cli("label", str(run), "--import", str(broken), check=False)
    assert result.returncode != 0 and f"{broken}:1:" in result.stderr and "not JSON" in result.stderr
    assert not (run / LABELS_FILE).exists()
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'[{"data": {"id": "u1", "answer": "caf\xe9"}}]')
    with pytest.raises(LabelsError, match="not UTF-8"):
        import_labels(run, latin)
    with pytest.raises(LabelsError, match="say which with --format"):
        import_labels(run, _write(tmp_path / "other.json", [{"text": "x"}]))
    with pytest.raises(LabelsError, match="holds no label"):
        import_labels(run, _write(tmp_path / "empty.json", [_task(1, "u1", ANSWER_U1, [])]))
    assert not (run / LABELS_FILE).exists()


def test_an_import_stops_while_a_labelling_server_holds_the_run(run, tmp_path):
    from groundjudge.runs.lock import RunLock

    lock = RunLock(run, ["groundjudge", "label", str(run)], warn=lambda message: None)
    lock.acquire()
    try:
        with pytest.raises(LabelsError, match="nothing imported: stop the labelling server"):
            import_labels(run, _write(tmp_path / "e.json", label_studio_export()))
    finally:
        lock.release()
    assert not (run / LABELS_FILE).exists()
