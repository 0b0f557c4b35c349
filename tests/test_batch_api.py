"""Provider batch APIs end to end: ``groundjudge run --batch`` (or ``batch=true``) against the scripted server's
OpenAI and Anthropic batch endpoints, through the real SDKs over HTTP -- rounds, parity with the online run,
the cache, resuming, failed and expired lines, the dry run, and keys kept out of the run folder."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import qa_rows, write_jsonl

from groundjudge.cli import main
from groundjudge.llm.batch.ledger import BatchLedger, Completed, Submitted
from groundjudge.runs.records import read_records
from groundjudge.testing.scripted_server import BatchPlan

KEY_ENV = "GJ_BATCH_TEST_KEY"
KEY = "sk-test-batch-secret-98765"
MODELS = {"openai": "openai/gpt-4o-mini",
          "anthropic": "anthropic/claude-sonnet-4-20250514,input_cost_per_mtok=3.0,output_cost_per_mtok=15.0"}
SAME = ("n", "n_judged", "n_abstained", "abstain_reasons", "accuracy", "balanced_accuracy", "macro_f1", "confusion",
        "llm_calls", "tokens", "threshold")


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)


@pytest.fixture
def data(tmp_path) -> Path:
    return write_jsonl(tmp_path / "qa.jsonl", qa_rows(6))


def claims(server, provider: str = "openai", extra: str = "") -> str:
    base = server.openai_base if provider == "openai" else server.anthropic_base
    spec = (f"claims:model={MODELS[provider]},api_base={base},api_key_env={KEY_ENV},against=context,"
            "threshold=1.0,timeout=5")
    return spec + ("," + extra if extra else "")


def run(data: Path, out: Path, spec: str, *flags: str, cache: Path | None = None) -> int:
    args = ["run", str(data), "--judge", spec, "--out", str(out), "--quiet", "--dev-fraction", "0",
            "--batch-poll-s", "0.001", *flags]
    return main(args + (["--cache-dir", str(cache)] if cache else []))


def judged(out: Path) -> dict[str, tuple]:
    return {r.example.id: (r.result.verdict.label, r.result.verdict.score, r.result.verdict.abstain_reason)
            for r in read_records(out / "records.jsonl").results}


def summary(out: Path, spec: str) -> dict:
    return json.loads((out / "summary.json").read_text())["judges"][spec]


def online_requests(server) -> list:
    return [r for r in server.requests if r.batch_id is None]


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_two_stage_chain_runs_in_two_batches_and_matches_the_online_run(llm_server, data, tmp_path, provider):
    spec = claims(llm_server, provider)
    assert run(data, tmp_path / "batch", spec, "--batch", cache=tmp_path / "cache-batch") == 0
    creates = [e for e in llm_server.batches.events if e.kind == "create"]
    assert len(creates) == 2 and {e.api for e in creates} == {provider}
    assert not online_requests(llm_server)
    first, second = ([r for r in llm_server.requests if r.batch_id == e.batch_id] for e in creates)
    assert len(first) == len(second) == 12   # stage by stage: every extraction, then every verification
    assert all("atomic claims" in r.text for r in first) and all("You verify claims" in r.text for r in second)

    assert run(data, tmp_path / "online", spec, cache=tmp_path / "cache-online") == 0
    assert len(online_requests(llm_server)) == 24
    assert judged(tmp_path / "batch") == judged(tmp_path / "online")
    batch, online = summary(tmp_path / "batch", spec), summary(tmp_path / "online", spec)
    assert {k: batch[k] for k in SAME} == {k: online[k] for k in SAME}
    assert batch["balanced_accuracy"] == 1.0 and batch["llm_calls"] == 24 and batch["llm_calls_cached"] == 0
    assert batch["cost_usd"] == pytest.approx(online["cost_usd"] / 2) and online["cost_usd"] > 0

    calls = [c for r in read_records(tmp_path / "batch" / "records.jsonl").results for c in r.result.calls]
    assert all(c.batch and c.batch_id in {e.batch_id for e in creates} and not c.cached for c in calls)
    ledger = BatchLedger(tmp_path / "batch")
    assert [e.event for e in ledger.lines() if e.event != "state"] == ["submitted", "completed"] * 2
    for path in (tmp_path / "batch").rglob("*"):   # ledger, request files, records, summary
        if path.is_file():
            assert KEY not in path.read_text(encoding="utf-8"), path
    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in llm_server.requests if r.batch_id)


def test_cached_requests_are_never_sent(llm_server, data, tmp_path):
    spec = claims(llm_server)
    assert run(data, tmp_path / "online", spec) == 0
    sent = len(llm_server.requests)
    assert run(data, tmp_path / "batch", spec, "--batch") == 0
    assert llm_server.batches.events == [] and len(llm_server.requests) == sent
    assert judged(tmp_path / "batch") == judged(tmp_path / "online")
    assert not (tmp_path / "batch" / "batches.jsonl").exists()


def test_a_resumed_run_polls_its_open_batch_and_never_submits_it_again(llm_server, data, tmp_path):
    spec = claims(llm_server, extra="batch=true")   # the judge's own setting, no --batch
    out = tmp_path / "run"
    llm_server.batches.plan = BatchPlan(polls_per_state=3)
    assert run(data, out, spec, "--batch-max-wait-s", "0") == 75   # submitted, polled once, stopped
    (opened,) = BatchLedger(out).open_batches()
    assert llm_server.batches.count("create") == 1 and llm_server.batches.count("poll", opened.batch_id) == 1
    assert read_records(out / "records.jsonl").results == []

    assert run(data, out, spec, "--resume") == 0
    creates = [e.batch_id for e in llm_server.batches.events if e.kind == "create"]
    assert creates[0] == opened.batch_id and len(creates) == 2   # polled to its end; the second is the verifications
    assert llm_server.batches.count("poll", opened.batch_id) > 1
    keys = [r.key for s in BatchLedger(out).submitted().values() for r in BatchLedger(out).read_requests(s)]
    assert len(keys) == len(set(keys)) == 24
    assert summary(out, spec)["balanced_accuracy"] == 1.0 and summary(out, spec)["llm_calls"] == 24


def test_replies_read_back_before_a_stop_are_charged_after_the_resume(llm_server, data, tmp_path):
    spec = claims(llm_server)
    out = tmp_path / "run"
    llm_server.batches.plan = BatchPlan(polls_per_state=0)
    oracle = llm_server.responder

    def slow_down_later_batches(request):   # the first batch ends at its first poll; the next ones take longer
        llm_server.batches.plan = BatchPlan(polls_per_state=5)
        return oracle(request)

    llm_server.set_responder(slow_down_later_batches)
    assert run(data, out, spec, "--batch", "--batch-max-wait-s", "0") == 75
    ledger = BatchLedger(out)
    assert len(ledger.completed()) == 1 and len(ledger.open_batches()) == 1
    assert run(data, out, spec, "--batch", "--resume") == 0
    done = summary(out, spec)
    assert done["llm_calls"] == 24 and done["llm_calls_cached"] == 0 and done["balanced_accuracy"] == 1.0
    assert llm_server.batches.count("create") == 2


@pytest.mark.slow
@pytest.mark.parametrize("failure", ["expired", "failed"])
def test_lines_without_a_reply_are_retried_online_or_abstain(llm_server, data, tmp_path, failure):
    spec = claims(llm_server)
    fails_on = "within 20 days"   # the q0 answers: their extraction and verification lines
    llm_server.batches.plan = (BatchPlan(expire_after=0) if failure == "expired" else
                               BatchPlan(fail=lambda request: fails_on in request.text))
    assert run(data, tmp_path / "retry", spec, "--batch") == 0
    online = online_requests(llm_server)
    if failure == "expired":
        assert len(online) == 24   # every line of both batches
    else:
        assert len(online) == 4 and all(fails_on in r.text for r in online)   # 2 extractions, 2 verifications
    retried = summary(tmp_path / "retry", spec)
    assert retried["balanced_accuracy"] == 1.0 and retried["n_abstained"] == 0 and retried["llm_calls"] == 24

    abstaining = claims(llm_server, extra="batch_failures=abstain")
    before = len(online_requests(llm_server))
    assert run(data, tmp_path / "abstain", abstaining, "--batch", cache=tmp_path / "fresh-cache") == 0
    assert len(online_requests(llm_server)) == before   # nothing retried online
    verdicts = judged(tmp_path / "abstain")
    reason = f"batch_{failure}"
    expected = set(verdicts) if failure == "expired" else {"q0-g", "q0-u"}
    assert {k for k, v in verdicts.items() if v[0] == "abstain"} == expected
    assert all(verdicts[k][2].startswith(reason) for k in expected)
    assert summary(tmp_path / "abstain", abstaining)["abstain_reasons"] == {reason: len(expected)}
    failed = [e for e in BatchLedger(tmp_path / "abstain").lines() if isinstance(e, Completed) and e.failed]
    assert failed and all(f.reason == reason for e in failed for f in e.failed.values())


def test_dry_run_prints_online_and_batch_cost(llm_server, data, tmp_path, capsys):
    code = main(["run", str(data), "--judge", claims(llm_server), "--out", str(tmp_path / "run"), "--dry-run",
                 "--dev-fraction", "0"])
    assert code == 0 and not llm_server.requests and not (tmp_path / "run").exists()
    text = capsys.readouterr().out
    found = re.search(r"estimated total: \$([\d.]+) online, \$([\d.]+) with --batch", text)
    online, batch = float(found.group(1)), float(found.group(2))
    assert online > 0 and batch == pytest.approx(online / 2, abs=1e-4)
    assert "$ batch" in text


def test_a_provider_without_a_batch_api_is_a_clear_error(data, tmp_path, capsys):
    spec = "claims:model=ollama_chat/llama3.1,api_base=http://127.0.0.1:9,against=context,batch=true"
    assert main(["run", str(data), "--judge", spec, "--out", str(tmp_path / "run"), "--quiet"]) == 2
    assert "batch APIs are available for OpenAI" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_the_ledger_records_each_batch_and_its_requests(llm_server, data, tmp_path):
    out = tmp_path / "run"
    assert run(data, out, claims(llm_server, "anthropic"), "--batch", "--no-cache") == 0   # replies kept in memory
    assert summary(out, claims(llm_server, "anthropic"))["balanced_accuracy"] == 1.0
    ledger = BatchLedger(out)
    submitted = [e for e in ledger.lines() if isinstance(e, Submitted)]
    assert [s.round for s in submitted] == [1, 2] and all(s.api_key_env == KEY_ENV for s in submitted)
    request = ledger.read_requests(submitted[0])[0]
    assert request.body["tools"][0]["name"] == "json_tool_call"   # litellm's JSON mode for Anthropic, as online
    assert "system" in request.body and request.parse_params["json_mode"] is True


@pytest.mark.slow
def test_facts_shared_between_answers_are_extracted_once_and_recorded_as_online(llm_server, data, tmp_path):
    spec = claims(llm_server).replace("against=context", "against=facts")   # three stages: claims, facts, verify
    assert run(data, tmp_path / "batch", spec, "--batch", cache=tmp_path / "cache-batch") == 0
    assert llm_server.batches.count("create") == 3
    facts_lines = [r for r in llm_server.requests if r.batch_id and "facts stated in source documents" in r.text]
    assert len(facts_lines) == 6   # one per distinct context, in one batch
    assert run(data, tmp_path / "online", spec, cache=tmp_path / "cache-online") == 0
    assert judged(tmp_path / "batch") == judged(tmp_path / "online")
    batch, online = summary(tmp_path / "batch", spec), summary(tmp_path / "online", spec)
    assert {k: batch[k] for k in SAME} == {k: online[k] for k in SAME} and batch["llm_calls"] == 30
