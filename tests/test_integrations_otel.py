"""OpenTelemetry adapter (issue 37): verdicts from the API, ``evaluate``'s records, the pytest gate and a bare
verdict become ``gen_ai.evaluation.result`` events with the GenAI attributes, parented to the current span, the span
given or the one an example's meta names; ``run --otel`` and ``serve --otel`` export them over OTLP/HTTP to a real
receiver on 127.0.0.1; a missing extra is a one-line error and importing the adapters imports no OpenTelemetry."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import pytest

pytest.importorskip("opentelemetry.sdk._logs")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http._log_exporter")

from conftest import ROOT, write_jsonl  # noqa: E402
from opentelemetry.sdk._logs import LoggerProvider  # noqa: E402
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from otlp_receiver import OTLPReceiver  # noqa: E402

import groundjudge  # noqa: E402
from groundjudge.integrations.otel import EVENT_NAME, emit, emit_records  # noqa: E402
from groundjudge.types import Claim, ClaimVerdict, Example, Verdict  # noqa: E402

pytest_plugins = ["pytester"]

from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter as InMemoryExporter  # noqa: E402  (>= 1.39)

CONTEXT = ("Residential Tenancies Act, Section 12. A landlord must return the security deposit within 30 days "
           "after the tenancy ends. A landlord who fails to do so owes the tenant twice the deposit.")
GROUNDED = "A landlord must return the security deposit within 30 days after the tenancy ends."
MIXED = GROUNDED + " Tenants may also keep the keys for a year after they move out."
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN_ID = "00f067aa0ba902b7"


@pytest.fixture
def logs():
    """A logger provider writing into memory: (provider, exporter)."""
    exporter = InMemoryExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def records_of(exporter) -> list:
    """The SDK log records the exporter holds."""
    return [data.log_record for data in exporter.get_finished_logs()]


def test_api_verdict_is_an_evaluation_event_on_the_current_span(logs):
    provider, exporter = logs
    verdict = groundjudge.judge(MIXED, CONTEXT, judge="quip:agg=min")
    with TracerProvider().get_tracer("app").start_as_current_span("rag answer") as span:
        emit(verdict, logger_provider=provider)
    (record,) = records_of(exporter)
    assert record.event_name == EVENT_NAME == "gen_ai.evaluation.result"
    assert record.trace_id == span.get_span_context().trace_id and record.span_id == span.get_span_context().span_id
    attributes = dict(record.attributes)
    assert attributes["gen_ai.evaluation.name"] == "groundedness"
    assert attributes["gen_ai.evaluation.score.value"] == pytest.approx(verdict.score)
    assert attributes["gen_ai.evaluation.score.label"] == verdict.label == "ungrounded"
    assert "Tenants may also keep the keys" in attributes["gen_ai.evaluation.explanation"]
    assert attributes["groundjudge.judge.name"] == "quip:agg=min" and attributes["groundjudge.judge.kind"] == "quip"
    assert attributes["groundjudge.verdict.path"].startswith("local:quip")
    assert "error.type" not in attributes


def test_span_given_wins_and_abstention_carries_error_type(logs):
    provider, exporter = logs
    tracer = TracerProvider().get_tracer("app")
    claim = ClaimVerdict(claim=Claim(text="The fee is 6 percent."), label="unverifiable", reason="not in the lease")
    verdict = Verdict(example_id="e1", label="abstain", abstain_reason="parse_failure: no JSON", claims=(claim,),
                      path="llm:openai/gpt-4o-mini")
    with tracer.start_as_current_span("outer"):
        with tracer.start_span("evaluated operation") as target:
            emit(verdict, target, logger_provider=provider, judge="claims:model=openai/gpt-4o-mini")
    (record,) = records_of(exporter)
    assert record.span_id == target.get_span_context().span_id
    attributes = dict(record.attributes)
    assert attributes["gen_ai.evaluation.score.label"] == "abstain"
    assert "gen_ai.evaluation.score.value" not in attributes
    assert attributes["error.type"] == "parse_failure"
    assert attributes["gen_ai.evaluation.explanation"] == "abstained: parse_failure: no JSON"
    assert attributes["groundjudge.judge.kind"] == "claims"


def test_evaluate_records_parent_to_the_span_in_each_examples_meta(logs, tmp_path):
    provider, exporter = logs
    examples = [Example(id="a", context=(CONTEXT,), answer=GROUNDED, label="grounded",
                        meta={"trace_id": TRACE_ID, "span_id": SPAN_ID, "response_id": "chatcmpl-1"}),
                Example(id="b", context=(CONTEXT,), answer=MIXED, label="ungrounded")]
    groundjudge.evaluate(examples, judges=["quip:agg=min", "quip:n=11"], out=tmp_path / "run", dev_fraction=0,
                         otel=provider)
    assert emit_records(tmp_path / "run", logger_provider=LoggerProvider()) == 4   # a folder reads as well
    assert len(records_of(exporter)) == 4
    events = {(dict(r.attributes)["groundjudge.judge.name"], dict(r.attributes)["groundjudge.example.id"]): r
              for r in records_of(exporter)}
    assert set(events) == {(j, e) for j in ("quip:agg=min", "quip:n=11") for e in ("a", "b")}
    for judge in ("quip:agg=min", "quip:n=11"):
        parented = events[(judge, "a")]
        assert f"{parented.trace_id:032x}" == TRACE_ID and f"{parented.span_id:016x}" == SPAN_ID
        assert dict(parented.attributes)["gen_ai.response.id"] == "chatcmpl-1"
        assert events[(judge, "b")].span_id == 0   # no span given, none current
    second = dict(events[("quip:n=11", "a")].attributes)
    assert second["groundjudge.judge.kind"] == "quip" and "groundjudge.judge.model" not in second
    assert second["gen_ai.evaluation.score.label"] == "grounded"


def test_llm_judge_event_names_its_model_and_template_hashes(logs, llm_server):
    provider, exporter = logs
    spec = f"direct:model=openai/gpt-4o-mini,api_base={llm_server.openai_base},timeout=10"
    verdict = groundjudge.judge(GROUNDED, CONTEXT, judge=spec)
    emit(verdict, logger_provider=provider)
    attributes = dict(records_of(exporter)[0].attributes)
    assert attributes["groundjudge.judge.model"] == "openai/gpt-4o-mini"
    assert attributes["groundjudge.judge.kind"] == "direct"
    assert list(attributes["groundjudge.judge.template_hashes"]) == \
        list(dict.fromkeys(call.template_hash for call in verdict.calls))


def test_pytest_gate_verdict_is_emitted(logs, groundjudge):
    provider, exporter = logs
    verdict = groundjudge.judge(GROUNDED, CONTEXT, judge="quip")
    emit(verdict, logger_provider=provider)
    attributes = dict(records_of(exporter)[0].attributes)
    assert attributes["gen_ai.evaluation.score.label"] == "grounded"
    assert attributes["groundjudge.example.id"].endswith("test_pytest_gate_verdict_is_emitted")


def test_run_otel_exports_every_verdict_to_an_otlp_receiver(tmp_path, monkeypatch):
    from groundjudge.cli import main

    rows = [{"id": "a", "context": [CONTEXT], "answer": GROUNDED, "label": "grounded",
             "meta": {"trace_id": TRACE_ID, "span_id": SPAN_ID}},
            {"id": "b", "context": [CONTEXT], "answer": MIXED, "label": "ungrounded"}]
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    receiver = OTLPReceiver().start()
    try:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        monkeypatch.setenv("OTEL_SERVICE_NAME", "rag-eval")
        assert main(["run", str(data), "--judge", "quip:agg=min", "--out", str(tmp_path / "run"),
                     "--dev-fraction", "0", "--quiet", "--otel"]) == 0
        events = receiver.wait_for(2)
        assert main(["run", str(data), "--judge", "quip:agg=min", "--out", str(tmp_path / "run"),
                     "--dev-fraction", "0", "--quiet", "--otel", "--resume"]) == 0   # nothing new: nothing sent again
    finally:
        receiver.stop()
    assert len(events) == len(receiver.records) == 2 and set(receiver.paths) == {"/v1/logs"}
    by_id = {e["attributes"]["groundjudge.example.id"]: e for e in events}
    assert all(e["event_name"] == "gen_ai.evaluation.result" and e["scope"] == "groundjudge" for e in events)
    assert by_id["a"]["trace_id"] == TRACE_ID and by_id["a"]["span_id"] == SPAN_ID
    assert by_id["a"]["attributes"]["gen_ai.evaluation.score.label"] == "grounded"
    assert by_id["b"]["attributes"]["gen_ai.evaluation.score.label"] == "ungrounded"
    assert by_id["b"]["attributes"]["groundjudge.judge.name"] == "quip:agg=min"
    assert by_id["a"]["resource"]["service.name"] == "rag-eval"


@pytest.mark.slow
def test_serve_otel_parents_each_verdict_to_the_request_traceparent(tmp_path):
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    from groundjudge.serve.process import ServeProcess

    receiver = OTLPReceiver().start()
    try:
        service = ServeProcess(["--judge", "quip:agg=min", "--otel"], log=tmp_path / "serve.log",
                               env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint})
        with service:
            response = httpx.post(f"{service.url}/v1/judge", json={"answer": MIXED, "context": CONTEXT},
                                  headers={"traceparent": f"00-{TRACE_ID}-{SPAN_ID}-01"}, timeout=30)
            assert response.status_code == 200
        assert service.process.returncode == 0, service.output()
        events = receiver.wait_for(1)
    finally:
        receiver.stop()
    served = [e for e in events if e["attributes"]["groundjudge.example.id"].startswith("served-")]
    (event,) = served
    assert event["trace_id"] == TRACE_ID and event["span_id"] == SPAN_ID
    assert event["attributes"]["gen_ai.evaluation.score.label"] == response.json()["label"] == "ungrounded"
    assert event["resource"]["service.name"] == "groundjudge"


@pytest.mark.slow
def test_pytest_groundjudge_otel_exports_the_sessions_verdicts(pytester, monkeypatch):
    pytester.makepyfile(test_gate="from groundjudge.testing import assert_grounded\n\n"
                                  f"def test_grounded():\n    assert_grounded({GROUNDED!r}, {CONTEXT!r}, judge='quip')\n")
    receiver = OTLPReceiver().start()
    try:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--groundjudge-otel")
        events = receiver.wait_for(1)
    finally:
        receiver.stop()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["exported 1 gen_ai.evaluation.result events over OTLP"])
    (event,) = events
    assert event["attributes"]["groundjudge.example.id"] == "test_gate.py::test_grounded"
    assert event["attributes"]["gen_ai.evaluation.score.label"] == "grounded"


BLOCK = "import sys\nfor name in ({names}):\n    sys.modules[name] = None   # as if not installed\n"


def python(code: str) -> subprocess.CompletedProcess:
    """Run code in a fresh interpreter from the repository root."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_adapters_import_nothing_heavy_and_missing_extra_is_one_line():
    code = BLOCK.format(names="'opentelemetry', 'mlflow'") + (
        "import json, groundjudge\n"
        "import groundjudge.integrations, groundjudge.integrations.otel, groundjudge.integrations.otel_export\n"
        "import groundjudge.integrations.mlflow, groundjudge.integrations.verdicts, groundjudge.integrations.extras\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('opentelemetry', 'mlflow') and sys.modules[m]]\n"
        "from groundjudge.integrations.otel import emit\n"
        "from groundjudge.types import Verdict\n"
        "errors = []\n"
        "try:\n    emit(Verdict(example_id='e', label='grounded', score=1.0, path='local:quip'))\n"
        "except ImportError as err:\n    errors.append(str(err))\n"
        "try:\n    groundjudge.integrations.mlflow.Groundedness\n"
        "except ImportError as err:\n    errors.append(str(err))\n"
        "print(json.dumps({'loaded': loaded, 'errors': errors}))\n")
    result = python(code)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["loaded"] == []
    otel_error, mlflow_error = out["errors"]
    assert "\n" not in otel_error and otel_error.endswith('pip install "groundjudge[otel]"')
    assert "\n" not in mlflow_error and mlflow_error.endswith('pip install "groundjudge[mlflow]"')


def test_run_otel_without_the_extra_fails_before_judging(tmp_path):
    data = write_jsonl(tmp_path / "data.jsonl", [{"id": "a", "context": [CONTEXT], "answer": GROUNDED}])
    code = BLOCK.format(names="'opentelemetry',") + (
        "from groundjudge.cli import main\n"
        f"sys.exit(main(['run', {str(data)!r}, '--judge', 'quip', '--out', {str(tmp_path / 'run')!r}, '--otel']))\n")
    result = python(code)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: --otel: ") and line.endswith('pip install "groundjudge[otel]"')
    assert not (tmp_path / "run" / "records.jsonl").exists()
