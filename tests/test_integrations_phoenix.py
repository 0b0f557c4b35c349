"""Phoenix: ``groundjudge export RUN --to phoenix`` writes span annotations a real Phoenix server holds (read back
through its API), and, for answers without a span id, a dataset and an experiment whose evaluations are the verdicts.

The server is ``phoenix serve`` on 127.0.0.1 with sqlite in a temporary folder (tests/phoenix_server.py), started
once for the module. The run judges 8 answers with a local judge (quip: annotator_kind CODE) and an LLM judge talking
to the scripted OpenAI server (LLM); 4 answers carry the span ids of spans logged into Phoenix first, and two have a
human label in the run folder (HUMAN). Runs where the ``[phoenix]`` extra is installed (the integrations environment,
installed with constraints/integrations.txt: see docs/integrations/environment.md).
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

pytest.importorskip("phoenix.client")
pytest.importorskip("phoenix.server")

from conftest import rent_rows, write_jsonl  # noqa: E402
from phoenix_server import phoenix_server  # noqa: E402

from groundjudge.cli import main  # noqa: E402
from groundjudge.integrations.phoenix import LiveAnnotator, client_for  # noqa: E402
from groundjudge.runs.records import read_records  # noqa: E402
from groundjudge.testing.oracle import oracle_responder  # noqa: E402
from groundjudge.testing.scripted_server import ScriptedLLMServer  # noqa: E402

PROJECT = "default"
TRACED = ("g0", "u0", "g1", "u1")
"""The answers whose example names a span (the rest go to the dataset)."""


def span_id(example_id: str) -> str:
    """A fixed 16-hex span id per answer."""
    return (example_id.encode().hex() + "0" * 16)[:16]


def trace_id(example_id: str) -> str:
    """A fixed 32-hex trace id per answer."""
    return (example_id.encode().hex() + "f" * 32)[:32]


@pytest.fixture(scope="module")
def phoenix() -> str:
    """A Phoenix server for the module: its base URL."""
    with phoenix_server() as url:
        yield url


@pytest.fixture(scope="module")
def traced_spans(phoenix: str) -> list[str]:
    """One RAG span per traced answer, logged into Phoenix and readable (bounded wait); their ids."""
    client = client_for(phoenix)
    now = datetime.now(timezone.utc)
    spans = [{"name": "rag_answer", "span_kind": "CHAIN", "status_code": "OK",
              "context": {"trace_id": trace_id(e), "span_id": span_id(e)}, "start_time": now.isoformat(),
              "end_time": (now + timedelta(seconds=1)).isoformat(), "attributes": {"input.value": e}}
             for e in TRACED]
    client.spans.log_spans(project_identifier=PROJECT, spans=spans)
    ids = [span_id(e) for e in TRACED]
    deadline = time.monotonic() + 60
    while len(client.spans.get_spans(project_identifier=PROJECT, span_ids=ids)) < len(ids):
        assert time.monotonic() < deadline, "Phoenix did not store the spans within 60 s"
        time.sleep(0.5)
    return ids


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, traced_spans) -> Path:
    """A finished run of quip and an LLM judge on 8 answers (4 traced), with two human labels."""
    folder = tmp_path_factory.mktemp("phoenix-run")
    rows = rent_rows(4)
    for row in rows:
        if row["id"] in TRACED:
            row["meta"].update(span_id=span_id(row["id"]), trace_id=trace_id(row["id"]))
    data = write_jsonl(folder / "data.jsonl", rows)
    out = folder / "run"
    with ScriptedLLMServer(oracle_responder) as server, pytest.MonkeyPatch.context() as patch:
        patch.setenv("GROUNDJUDGE_CACHE_DIR", str(folder / "cache"))
        llm = f"direct:model=openai/gpt-4o-mini,api_base={server.openai_base},timeout=5"
        assert main(["run", str(data), "--judge", "quip", "--judge", llm, "--dev-fraction", "0",
                     "--out", str(out), "--quiet"]) == 0
    labels = [{"id": "u0", "label": "ungrounded", "labeller": "ana", "note": "no repair clause"},
              {"id": "g2", "label": "grounded", "labeller": "ana"}]
    (out / "labels.jsonl").write_text("".join(json.dumps(line) + "\n" for line in labels), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def exported(run_dir: Path, phoenix: str) -> str:
    """The run exported with the CLI (once for the module); the Phoenix URL."""
    assert main(["export", str(run_dir), "--to", "phoenix", "--endpoint", phoenix]) == 0
    return phoenix


def _verdicts(run_dir: Path) -> dict[tuple[str, str], object]:
    """(judge, example id) -> the recorded verdict."""
    return {(r.judge, r.example.id): r.result.verdict for r in read_records(run_dir / "records.jsonl").results}


def test_verdicts_are_span_annotations_on_the_traced_spans(exported: str, run_dir: Path, traced_spans) -> None:
    client = client_for(exported)
    annotations = client.spans.get_span_annotations(span_ids=traced_spans, project_identifier=PROJECT)
    verdicts = _verdicts(run_dir)
    llm_judge = next(judge for judge, _ in verdicts if judge.startswith("direct:"))
    by_key = {(a["name"], a["span_id"]): a for a in annotations}
    assert len(annotations) == 2 * len(TRACED) + 1   # two judges per traced answer, one human label
    for example_id in TRACED:
        for judge, kind in (("quip", "CODE"), (llm_judge, "LLM")):
            annotation = by_key[(f"groundjudge:{judge}", span_id(example_id))]
            verdict = verdicts[(judge, example_id)]
            assert annotation["annotator_kind"] == kind
            assert annotation["result"]["label"] == verdict.label
            assert annotation["result"]["score"] == pytest.approx(verdict.score)
            assert annotation["result"]["explanation"].startswith(verdict.label)
            assert annotation["metadata"]["path"] == verdict.path
    human = by_key[("groundjudge:human", span_id("u0"))]
    assert human["annotator_kind"] == "HUMAN" and human["result"]["label"] == "ungrounded"
    assert human["identifier"] == "ana" and human["result"]["explanation"] == "no repair clause"


def test_answers_without_a_span_go_to_a_dataset_and_an_experiment(exported: str, run_dir: Path) -> None:
    client = client_for(exported)
    run_id = read_records(run_dir / "records.jsonl").header.run_id
    dataset = client.datasets.get_dataset(dataset=f"groundjudge {run_id}")
    examples = {e["metadata"]["example_id"]: e for e in dataset.examples}
    assert sorted(examples) == ["g2", "g3", "u2", "u3"]
    assert examples["u2"]["output"]["label"] == "ungrounded"
    assert examples["u2"]["input"]["context"] and examples["u2"]["metadata"]["answer"]
    [experiment] = client.experiments.list(dataset_id=dataset.id)
    assert experiment["metadata"]["run_id"] == run_id
    ran = client.experiments.get_experiment(experiment_id=experiment["id"])
    assert len(ran["task_runs"]) == 4
    runs = {run["id"]: run for run in ran["task_runs"]}
    by_example = {e["id"]: e["metadata"]["example_id"] for e in dataset.examples}
    verdicts = _verdicts(run_dir)
    seen = set()
    for evaluation in ran["evaluation_runs"]:
        example_id = by_example[runs[evaluation.experiment_run_id]["dataset_example_id"]]
        judge = evaluation.name.removeprefix("groundjudge:")
        seen.add((judge, example_id))
        if judge == "human":
            assert (example_id, evaluation.annotator_kind, evaluation.result["label"]) == ("g2", "HUMAN", "grounded")
            continue
        assert evaluation.annotator_kind == ("CODE" if judge == "quip" else "LLM")
        assert evaluation.result["label"] == verdicts[(judge, example_id)].label
    assert len(seen) == 2 * 4 + 1


def test_the_live_annotator_sends_what_serve_answers(phoenix: str, traced_spans) -> None:
    from groundjudge.types import Example, JudgeResult, Verdict

    annotator = LiveAnnotator(phoenix)
    example = Example(id="served-1", context=("Rent is due on day 1.",), answer="Rent is due on day 1.",
                      meta={"span_id": traced_spans[0], "trace_id": trace_id(TRACED[0])})
    verdict = Verdict(example_id="served-1", label="grounded", score=0.97, path="local:quip")
    annotator("quip:n=5", example, JudgeResult(verdict=verdict))
    annotator("quip:n=5", example.model_copy(update={"meta": {}}), JudgeResult(verdict=verdict))
    annotator.close()
    assert (annotator.sent, annotator.skipped, annotator.failed) == (1, 1, 0)
    [annotation] = client_for(phoenix).spans.get_span_annotations(
        span_ids=[traced_spans[0]], project_identifier=PROJECT, include_annotation_names=["groundjudge:quip:n=5"])
    assert annotation["result"]["score"] == pytest.approx(0.97)


def test_export_without_an_endpoint_is_a_usage_error(run_dir: Path, capsys) -> None:
    assert main(["export", str(run_dir), "--to", "phoenix"]) == 2
    assert "--to phoenix needs --endpoint URL" in capsys.readouterr().err


def test_run_with_phoenix_sends_the_verdicts_when_it_ends(phoenix: str, tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", rent_rows(2))
    out = tmp_path / "run"
    assert main(["run", str(data), "--judge", "quip", "--dev-fraction", "0", "--out", str(out), "--quiet",
                 "--phoenix", phoenix]) == 0
    run_id = read_records(out / "records.jsonl").header.run_id
    dataset = client_for(phoenix).datasets.get_dataset(dataset=f"groundjudge {run_id}")
    assert sorted(e["metadata"]["example_id"] for e in dataset.examples) == ["g0", "g1", "u0", "u1"]


def test_serve_with_phoenix_annotates_the_span_of_each_request(phoenix: str, traced_spans, tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    import httpx

    from groundjudge.serve.process import ServeProcess

    span, trace = traced_spans[1], trace_id(TRACED[1])
    with ServeProcess(["--judge", "quip:n=7", "--phoenix", phoenix], log=tmp_path / "serve.log") as service:
        response = httpx.post(f"{service.url}/v1/judge", timeout=30,
                              json={"answer": "Rent is due on day 1.", "context": "Rent is due on day 1 monthly."},
                              headers={"traceparent": f"00-{trace}-{span}-01"})
        assert response.status_code == 200
    client = client_for(phoenix)
    deadline = time.monotonic() + 30
    while not (found := client.spans.get_span_annotations(span_ids=[span], project_identifier=PROJECT,
                                                          include_annotation_names=["groundjudge:quip:n=7"])):
        assert time.monotonic() < deadline, "no annotation within 30 s"
        time.sleep(0.5)
    assert found[0]["result"]["label"] == response.json()["label"]
    assert found[0]["annotator_kind"] == "CODE"
