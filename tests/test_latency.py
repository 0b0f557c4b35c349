"""Latency that means what it says: service time apart from queueing, the concurrency it was measured at,
and concurrency resolved from what a local server can serve — against real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import BaseModel

from conftest import cli, qa_rows, write_jsonl
from groundjudge.llm import LLMService, LLMSettings
from groundjudge.llm.concurrency import (
    HOSTED_CONCURRENCY,
    UNKNOWN_LOCAL_CONCURRENCY,
    is_local,
    props_url,
    resolve_concurrency_sync,
)
from groundjudge.runs.records import read_records
from groundjudge.testing.oracle import oracle_responder
from groundjudge.testing.scripted_server import Reply

DELAY_S = 0.3
"""How long the scripted server takes per reply in the queueing tests."""

N_EXAMPLES = 4
"""Examples judged at once (the run's --concurrency) against a model limited to one call in flight."""


class _Props(BaseHTTPRequestHandler):
    """llama.cpp's /props: total_slots and the per-slot context."""

    slots = 3

    def do_GET(self):  # noqa: N802 - http.server's naming
        if self.path.rstrip("/") != "/props":
            self.send_error(404)
            return
        body = json.dumps({"total_slots": self.slots, "default_generation_settings": {"n_ctx": 4096}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):  # noqa: A002 - quiet
        pass


@pytest.fixture
def props_server():
    """A server on 127.0.0.1 that answers GET /props like llama.cpp's, with 3 slots."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Props)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_props_probe_resolves_a_local_servers_slots(props_server):
    assert props_url(props_server) == props_server[: -len("/v1")] + "/props"
    assert resolve_concurrency_sync(LLMSettings(model="openai/smol", api_base=props_server)) == 3


def test_a_local_server_without_props_gets_one_call_at_a_time(llm_server):
    settings = LLMSettings(model="openai/smol", api_base=llm_server.openai_base)
    assert is_local(settings.api_base)
    assert resolve_concurrency_sync(settings) == UNKNOWN_LOCAL_CONCURRENCY


def test_hosted_providers_keep_their_default_and_a_number_is_used_as_given(llm_server):
    assert resolve_concurrency_sync(LLMSettings(model="openai/gpt-4o-mini")) == HOSTED_CONCURRENCY
    assert resolve_concurrency_sync(LLMSettings(model="openai/x", api_base="https://api.example.com/v1")) \
        == HOSTED_CONCURRENCY
    explicit = LLMSettings(model="openai/smol", api_base=llm_server.openai_base, concurrency=5)
    assert resolve_concurrency_sync(explicit) == 5


class _Reply(BaseModel):
    verdict: str


def test_the_providers_own_time_is_recorded_as_server_s(llm_server):
    llm_server.push(Reply(content=json.dumps({"verdict": "grounded"}), headers={"openai-processing-ms": "250"}))
    calls = []
    settings = LLMSettings(model="openai/gpt-4o-mini", api_base=llm_server.openai_base, timeout=5)
    variables = {"question": "q?", "context": ["The deposit is due in 30 days."], "answer": "30 days."}
    asyncio.run(LLMService().complete(settings, "direct", variables, _Reply, calls))
    assert calls[-1].server_s == pytest.approx(0.25)
    assert calls[-1].concurrency == UNKNOWN_LOCAL_CONCURRENCY and calls[-1].in_flight == 1


@pytest.fixture
def queued_run(tmp_path, llm_server):
    """The direct judge on N_EXAMPLES answers at once, against a slow local server it sends one call at a time."""
    llm_server.set_responder(lambda request: Reply(content=oracle_responder(request).content, delay=DELAY_S))
    rows = qa_rows(n_groups=N_EXAMPLES // 2)
    data = write_jsonl(tmp_path / "qa.jsonl", rows)
    spec = f"direct:model=openai/gpt-4o-mini,api_base={llm_server.openai_base}"
    out = tmp_path / "run"
    shown = cli("run", str(data), "--judge", spec, "--concurrency", str(N_EXAMPLES), "--dev-fraction", "0",
                "--out", str(out), "--quiet")
    return out, spec, shown.stdout


@pytest.mark.slow
def test_service_time_is_recorded_apart_from_the_queue(queued_run):
    out, spec, _ = queued_run
    results = read_records(out / "records.jsonl").results
    assert len(results) == N_EXAMPLES
    for record in results:
        call = record.result.calls[-1]
        assert call.concurrency == 1 and call.in_flight == 1
        assert call.latency_s >= DELAY_S and record.result.latency_s >= DELAY_S
        assert record.result.queue_s == pytest.approx(sum(c.queue_s for c in record.result.calls), abs=0.05)
        assert record.result.started_at < record.result.finished_at
    # one call at a time: the last answer to get the slot waited for the others to be served
    assert max(r.result.queue_s for r in results) >= (N_EXAMPLES - 2) * DELAY_S


@pytest.mark.slow
def test_the_summary_says_what_the_latency_is_and_where_it_was_measured(queued_run):
    out, spec, shown = queued_run
    summary = json.loads((out / "summary.json").read_text())
    s = summary["judges"][spec]
    assert s["latency_kind"].startswith("service time")
    assert s["latency_concurrency"] == 1 and s["concurrency_limit"] == 1
    assert 0 < s["queue_share"] < 1 and s["queue_s"]["p95"] > 0
    assert s["wall_s_per_answer"] > 0
    assert any("client-side slot" in note for note in s["latency_notes"]) == (s["queue_share"] > 0.5)
    assert "@1" in shown


@pytest.mark.slow
def test_report_latency_columns_name_the_concurrency(queued_run, tmp_path):
    out, _, _ = queued_run
    cli("report", str(out), "--out", str(tmp_path / "report"))
    markdown = (tmp_path / "report" / "report.md").read_text()
    header = next(line for line in markdown.splitlines() if line.startswith("| judge |"))
    assert "latency p50 s @1" in header and "latency p95 s @1" in header
    assert "latency p50 s @1" in (tmp_path / "report" / "report.html").read_text()


@pytest.mark.slow
def test_more_requests_in_flight_than_the_server_serves_is_noted(tmp_path, llm_server):
    """An explicit concurrency above a local server's slots (1 when it does not say) counts the server's queue as
    latency: the summary names the slots and says so; at the default (auto) the note is absent."""
    llm_server.set_responder(lambda request: Reply(content=oracle_responder(request).content, delay=DELAY_S))
    data = write_jsonl(tmp_path / "qa.jsonl", qa_rows(n_groups=N_EXAMPLES // 2))
    notes = {}
    for setting in ("", f",concurrency={N_EXAMPLES}"):
        spec = f"direct:model=openai/gpt-4o-mini,api_base={llm_server.openai_base}{setting}"
        out = tmp_path / f"run{len(notes)}"
        cli("run", str(data), "--judge", spec, "--concurrency", str(N_EXAMPLES), "--dev-fraction", "0",
            "--out", str(out), "--quiet", "--no-cache")
        s = json.loads((out / "summary.json").read_text())["judges"][spec]
        assert s["server_slots"] == UNKNOWN_LOCAL_CONCURRENCY
        notes[setting] = [n for n in s["latency_notes"] if "serves 1 at once" in n]
    assert notes[""] == []
    assert len(notes[f",concurrency={N_EXAMPLES}"]) == 1
