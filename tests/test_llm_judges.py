"""Every LLM judge end to end through the CLI against the scripted server: records, fallback, cascade,
cache, replay, dry run, and a faulty provider."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import replace

import pytest
from conftest import ROOT, cli, qa_rows, write_jsonl

from groundjudge.judges import build_judge
from groundjudge.judges.error_types import taxonomy_names
from groundjudge.llm import LLMService
from groundjudge.llm.templates import PromptLibrary
from groundjudge.runs.records import read_records
from groundjudge.runs.summary import error_type_summary
from groundjudge.testing.scripted_server import Reply
from groundjudge.types import Claim, ClaimVerdict, Example, JudgeResult, ResultRecord, Verdict


def llm(server, name: str, extra: str = "") -> str:
    spec = f"{name}:model=openai/gpt-4o-mini,api_base={server.openai_base},timeout=5"
    return spec + ("," + extra if extra else "")


@pytest.fixture
def data(tmp_path):
    return write_jsonl(tmp_path / "qa.jsonl", qa_rows(6))


@pytest.mark.slow
@pytest.mark.parametrize("name,extra", [
    ("direct", ""), ("direct", "template=lynx"), ("claims", "threshold=1.0"),
    ("claims", "against=context,threshold=1.0"), ("triplets", ""), ("selfcheck", "samples=2,threshold=0.5"),
    ("error_types", "threshold=1.0"),
])
def test_each_llm_judge_runs_from_the_cli_and_records_every_call(llm_server, data, tmp_path, name, extra):
    spec = llm(llm_server, name, extra)
    out = tmp_path / "run"
    cli("run", str(data), "--judge", spec, "--out", str(out), "--quiet", "--dev-fraction", "0")
    records = read_records(out / "records.jsonl")
    assert len(records.results) == 12
    recorded_calls = sum(len(r.result.calls) for r in records.results)
    assert recorded_calls == len(llm_server.requests)
    summary = json.loads((out / "summary.json").read_text())["judges"][spec]
    assert summary["balanced_accuracy"] == 1.0 and summary["n_abstained"] == 0
    assert summary["cost_usd"] > 0 and summary["tokens"]["input"] > 0 and summary["llm_calls"] == recorded_calls
    call = records.results[0].result.calls[0]
    assert call.template_hash == records.header.template_hashes[call.template]
    assert call.raw_output and call.parsed and call.latency_s > 0
    if name == "error_types":
        assert summary["predicted_error_types"] == {"Factual Inaccuracies": 6}
        assert summary["per_error_type"]["Misattributions"] == {"n": 6, "missed": 0, "abstained": 0, "miss_rate": 0.0}
    if name in ("claims", "error_types") and "context" not in extra:
        facts_calls = [r for r in llm_server.requests if "facts stated in source documents" in r.text]
        assert len(facts_calls) == 6      # once per distinct context, shared by its two answers


def typed_record(i: int, gold: tuple[str, ...], given: str) -> ResultRecord:
    """An ungrounded answer with these gold error types whose one unsupported claim got the type ``given``."""
    claim = ClaimVerdict(claim=Claim(text="c"), label="contradicted", error_type=given)
    example = Example(id=f"t{i}", context=["doc"], answer="a", label="ungrounded", error_types=gold)
    verdict = Verdict(example_id=example.id, label="ungrounded", claims=(claim,), path="llm:m")
    return ResultRecord(judge="error_types", example=example, result=JudgeResult(verdict=verdict))


def test_error_type_match_is_scored_only_on_gold_types_of_the_judges_taxonomy(tmp_path):
    legal = [typed_record(0, ("Factual Inaccuracies",), "Factual Inaccuracies"),
             typed_record(1, ("Misattributions",), "Factual Inaccuracies")]
    edits = [typed_record(2 + i, ("antonym_swap",), "Factual Inaccuracies") for i in range(3)]
    out = error_type_summary(legal + edits, taxonomy_names("error_types:model=m,threshold=1.0"))
    assert out["error_type_accuracy"] == 0.5 and out["error_type_accuracy_n"] == 2
    assert out["error_type_gold_outside_taxonomy"] == 3
    # another scheme's gold types only (SummEdits' edit kinds): no match rate at all, not a 0% one
    assert "error_type_accuracy" not in error_type_summary(edits, taxonomy_names("error_types:model=m"))
    assert out["per_error_type"]["antonym_swap"]["n"] == 3
    # a custom taxonomy, also nested in a cascade spec, is the one the gold types are checked against
    custom = tmp_path / "edits.json"
    custom.write_text(json.dumps([{"name": "antonym_swap", "definition": "swaps a word for its antonym"}]))
    nested = f"cascade:local=quip,llm={{error_types:model=m,taxonomy={custom},threshold=1.0}},band=0.1:0.2"
    assert taxonomy_names(nested) == {"antonym_swap"}
    assert error_type_summary(edits, taxonomy_names(nested))["error_type_accuracy_n"] == 3
    assert taxonomy_names("claims:model=m") is None


def test_answer_without_claims_abstains_and_is_never_scored_one(llm_server):
    judge, _ = build_judge(llm(llm_server, "claims"), service=LLMService())
    llm_server.push(Reply(content=json.dumps({"claims": []})))
    example = Example(id="e", context=["Some text."], answer="Hmm.", label="grounded")
    verdict = asyncio.run(judge.judge(example)).verdict
    assert verdict.label == "abstain" and verdict.abstain_reason == "no_claims" and verdict.score is None


def test_missing_verdict_for_a_claim_is_a_parse_failure_not_supported(llm_server):
    judge, _ = build_judge(llm(llm_server, "claims", "against=context"), service=LLMService())
    two_claims = json.dumps({"claims": ["A is B.", "C is D."]})
    one_verdict = json.dumps({"verdicts": [{"claim": 1, "verdict": "supported", "evidence": "", "reason": ""}]})
    llm_server.push(Reply(content=two_claims), Reply(content=one_verdict), Reply(content=one_verdict))
    result = asyncio.run(judge.judge(Example(id="e", context=["A is B."], answer="A is B. C is D.")))
    assert result.verdict.label == "abstain" and result.verdict.abstain_reason == "parse_failure"
    assert len(result.calls) == 3 and result.calls[-1].raw_output == one_verdict


@pytest.mark.parametrize("facts,verified_against", [
    (["Rent of 100 crowns is due on day 1 of each month.", "A late fee of 2 percent applies after day 5."], "facts"),
    (["<fact_1>", "<fact_2>"], "documents"),                 # a small model copying the reply format's placeholder
    (["Clause 0."], "documents"),                            # a heading, not the clause's content
])
def test_failed_facts_extraction_is_not_trusted(llm_server, facts, verified_against):
    judge, _ = build_judge(llm(llm_server, "claims"), service=LLMService())
    verdict = json.dumps({"verdicts": [{"claim": 1, "verdict": "supported", "reason": "",
                                        "evidence": "Rent of 100 crowns is due on day 1 of each month."}]})
    llm_server.push(Reply(content=json.dumps({"claims": ["Rent is due on day 1."]})),
                    Reply(content=json.dumps({"facts": facts})), Reply(content=verdict))
    context = "Clause 0. Rent of 100 crowns is due on day 1 of each month. A late fee of 2 percent applies after day 5."
    result = asyncio.run(judge.judge(Example(id="e", context=[context], answer="Rent is due on day 1.")))
    assert result.verdict.label == "grounded" and len(result.calls) == 3
    prompt = llm_server.requests[-1].text
    if verified_against == "facts":
        assert "<evidence boundary=" in prompt and facts[1] in prompt and "<document_1 boundary=" not in prompt
    else:
        assert "<evidence boundary=" not in prompt and "‹fact_1›" not in prompt and context in prompt


def test_unparsable_facts_reply_falls_back_to_the_documents(llm_server):
    """A facts reply that never parses (both attempts) must not make the answer abstain: the claims are verified
    against the documents, as for a placeholder list."""
    judge, _ = build_judge(llm(llm_server, "claims"), service=LLMService())
    verdict = json.dumps({"verdicts": [{"claim": 1, "verdict": "contradicted", "evidence": "", "reason": ""}]})
    looping = '{"facts": ["Rent is due.", "Rent is due.", "Rent is due.", "Rent is'
    llm_server.push(Reply(content=json.dumps({"claims": ["Rent is due on day 9."]})),
                    Reply(content=looping), Reply(content=looping), Reply(content=verdict))
    context = "Rent of 100 crowns is due on day 1 of each month."
    result = asyncio.run(judge.judge(Example(id="e", context=[context], answer="Rent is due on day 9.")))
    assert result.verdict.label == "ungrounded" and result.verdict.claims[0].label == "contradicted"
    assert [c.template for c in result.calls] == ["claims_extract", "facts_extract", "facts_extract", "claims_verify"]
    assert all(c.error for c in result.calls[1:3])
    prompt = llm_server.requests[-1].text
    assert "<evidence>" not in prompt and context in prompt


def _schema(request) -> dict:
    return request.body["response_format"]["json_schema"]["schema"]


def test_triplet_replies_are_bounded_in_schema_and_parsing(llm_server):
    """Both replies of the chain are sent as bounded schemas (a grammar-constrained decoder cannot run on); a
    quote over the bound from a free-running model is re-asked, not kept."""
    judge, _ = build_judge(llm(llm_server, "triplets"), service=LLMService())
    context = "Clause 0. Rent of 100 crowns is due on day 1 of each month. " * 20
    check = {"statement": 1, "verdict": "supported"}
    llm_server.push(Reply(content=json.dumps({"triplets": [["Rent", "is due on", "day 1"]]})),
                    Reply(content=json.dumps({"checks": [{**check, "evidence": context.strip()}]})),
                    Reply(content=json.dumps({"checks": [{**check, "evidence": "Rent of 100 crowns is due"}]})))
    result = asyncio.run(judge.judge(Example(id="e", context=[context], answer="Rent is due on day 1.")))
    extract = _schema(llm_server.requests[0])["properties"]["triplets"]
    assert extract["maxItems"] == 24 and (extract["items"]["minItems"], extract["items"]["maxItems"]) == (2, 3)
    assert extract["items"]["items"]["maxLength"] == 200
    checks = _schema(llm_server.requests[1])
    assert (checks["properties"]["checks"]["minItems"], checks["properties"]["checks"]["maxItems"]) == (1, 1)
    entry = checks["$defs"]["TripletCheck"]["properties"]
    assert entry["verdict"]["enum"] == ["supported", "contradicted", "not_mentioned"]
    assert entry["evidence"]["maxLength"] == 300 < len(context.strip())
    assert [c.template for c in result.calls] == ["triplets_extract", "triplets_check", "triplets_check"]
    assert "300" in result.calls[1].error and result.verdict.label == "grounded"
    assert result.verdict.claims[0].evidence.text == "Rent of 100 crowns is due"


def test_every_check_label_is_defined_in_the_prompt_and_mapped_to_a_claim_label(llm_server):
    """The labels the schema allows are the ones the prompt defines (the NLI words "entailment" / "contradiction"
    / "neutral" left the 1.5B model labelling most statements of grounded answers "contradiction");
    "not_mentioned" is an unverifiable claim, which fails the strict rule."""
    judge, _ = build_judge(llm(llm_server, "triplets"), service=LLMService())
    checks = [{"statement": 1, "verdict": "supported", "evidence": "Rent is due on day 1."},
              {"statement": 2, "verdict": "not_mentioned", "evidence": ""}]
    llm_server.push(Reply(content=json.dumps({"triplets": [["Rent", "is due on", "day 1"], ["Rent", "is", "late"]]})),
                    Reply(content=json.dumps({"checks": checks})))
    result = asyncio.run(judge.judge(Example(id="e", context=["Rent is due on day 1."], answer="Rent is due.")))
    system = llm_server.requests[1].body["messages"][0]["content"]
    labels = _schema(llm_server.requests[1])["$defs"]["TripletCheck"]["properties"]["verdict"]["enum"]
    assert all(f'- "{label}":' in system for label in labels)
    assert [c.label for c in result.verdict.claims] == ["supported", "unverifiable"]
    assert result.verdict.label == "ungrounded" and result.verdict.score == 0.5


@pytest.mark.parametrize("template,variables", [
    ("triplets_extract", {"question": None, "answer": "a"}),
    ("triplets_check", {"context": ["d"], "triplets": [["s", "p", "o"]]}),
    ("error_types_classify", {"context": ["d"], "question": None, "claims": ["c"],
                              "taxonomy": [{"name": "Wrong Number", "definition": "a number differs."}]}),
    ("selfcheck_sample", {"context": ["d"], "question": "q"}),
    ("selfcheck_compare", {"sample": "s", "sentences": ["a."]}),
])
def test_reply_formats_have_nothing_a_model_can_copy(template, variables):
    """The reply is described in words: no placeholder ("<subject>", <number>) and no alternatives written as
    a value ("a" | "b"), both of which a small model copied into its replies."""
    system = PromptLibrary().render(template, variables).messages[0]["content"]
    assert "<" not in system and ">" not in system and " | " not in system and "..." not in system


def test_objectless_triplets_are_checked_and_subjectless_ones_dropped(llm_server):
    """A statement without an object ("man | is outside") is still a statement; one without a subject or predicate
    asserts nothing and is not checked (only such triplets: no claims, and no check call)."""
    judge, _ = build_judge(llm(llm_server, "triplets"), service=LLMService())
    extracted = {"triplets": [["Rent", "is due on", "day 1"], ["Rent", "", "late"], ["", "is", "late"],
                              ["Rent", "is payable", " "], ["Rent", "is owed"]]}
    entailed = {"verdict": "supported", "evidence": "Rent is due on day 1."}
    checks = {"checks": [{"statement": i, **entailed} for i in (1, 2, 3)]}
    llm_server.push(Reply(content=json.dumps(extracted)), Reply(content=json.dumps(checks)),
                    Reply(content=json.dumps({"triplets": [["", "is due", ""]]})))
    context = "Rent is due on day 1."
    result = asyncio.run(judge.judge(Example(id="e", context=[context], answer="Rent is due on day 1.")))
    assert result.verdict.label == "grounded" and [c.claim.text for c in result.verdict.claims] == [
        "Rent | is due on | day 1", "Rent | is payable", "Rent | is owed"]
    prompt = llm_server.requests[-1].text
    assert re.search(r'<statements boundary="(\w+)">\n1\. \(Rent \| is due on \| day 1\)\n2\. \(Rent \| is payable\)\n'
                     r'3\. \(Rent \| is owed\)\n</statements boundary="\1">', prompt)
    empty = asyncio.run(judge.judge(Example(id="f", context=[context], answer="It is.")))
    assert empty.verdict.abstain_reason == "no_claims" and len(empty.calls) == 1


def test_error_type_is_one_of_the_taxonomy_names_in_schema_and_parsing(llm_server):
    """The type is an enum of the taxonomy's names and the reason is bounded; a made-up type is re-asked."""
    judge, _ = build_judge(llm(llm_server, "error_types", "against=context,threshold=1.0"), service=LLMService())
    verdict = {"claim": 1, "verdict": "contradicted", "evidence": "day 1", "reason": "another day"}
    label = {"claim": 1, "reason": "The day differs."}
    llm_server.push(Reply(content=json.dumps({"claims": ["Rent is due on day 9."]})),
                    Reply(content=json.dumps({"verdicts": [verdict]})),
                    Reply(content=json.dumps({"labels": [{**label, "error_type": "Wrong Day"}]})),
                    Reply(content=json.dumps({"labels": [{**label, "error_type": "Factual Inaccuracies"}]})))
    example = Example(id="e", context=["Rent is due on day 1."], answer="Rent is due on day 9.")
    result = asyncio.run(judge.judge(example))
    entry = _schema(llm_server.requests[2])["$defs"]["ErrorTypeLabel"]["properties"]
    assert "Factual Inaccuracies" in entry["error_type"]["enum"] and len(entry["error_type"]["enum"]) == 6
    assert entry["reason"]["maxLength"] == 300
    assert result.calls[2].error and result.verdict.claims[0].error_type == "Factual Inaccuracies"


def test_selfcheck_sampled_answer_is_bounded(llm_server):
    judge, _ = build_judge(llm(llm_server, "selfcheck", "samples=1"), service=LLMService())
    llm_server.push(Reply(content=json.dumps({"answer": "Rent is due on day 1."})),
                    Reply(content=json.dumps({"results": [{"sentence": 1, "consistent": True}]})))
    example = Example(id="e", question="When is rent due?", context=["Rent is due on day 1."],
                      answer="Rent is due on day 1.")
    result = asyncio.run(judge.judge(example))
    assert _schema(llm_server.requests[0])["properties"]["answer"]["maxLength"] == 1000   # llama.cpp parses it
    assert result.verdict.label == "grounded"


def test_placeholder_only_extraction_abstains_without_a_check_call(llm_server):
    judge, _ = build_judge(llm(llm_server, "claims", "against=context"), service=LLMService())
    llm_server.push(Reply(content=json.dumps({"claims": ["<claim>", "..."]})))
    result = asyncio.run(judge.judge(Example(id="e", context=["Rent is due on day 1."], answer="It is.")))
    assert result.verdict.label == "abstain" and result.verdict.abstain_reason == "no_claims"
    assert len(result.calls) == 1


@pytest.mark.slow
@pytest.mark.parametrize("aggregation,calibrated", [("strict", False), ("majority", False), ("soft", True)])
def test_triplets_are_calibrated_only_when_their_rule_uses_the_threshold(llm_server, data, tmp_path, aggregation,
                                                                         calibrated):
    """Strict and majority triplets never read the threshold, so no dev answer is sent to the LLM for them."""
    spec = llm(llm_server, "triplets", f"aggregation={aggregation}")
    out = tmp_path / "run"
    cli("run", str(data), "--judge", spec, "--out", str(out), "--quiet", "--dev-fraction", "0.5", "--split", "test")
    records = read_records(out / "records.jsonl")
    assert (records.header.judges[0].calibration is not None) == calibrated
    assert (out / "calibration.jsonl").exists() == calibrated
    evaluated_calls = sum(len(r.result.calls) for r in records.results)
    assert 0 < len(records.results) < 12
    assert (len(llm_server.requests) > evaluated_calls) == calibrated
    # the summary shows a threshold only for the rule that reads one
    summary = json.loads((out / "summary.json").read_text())["judges"][spec]
    assert (summary["threshold"] is not None) == calibrated


def test_selfcheck_needs_a_question(llm_server):
    judge, _ = build_judge(llm(llm_server, "selfcheck"), service=LLMService())
    verdict = asyncio.run(judge.judge(Example(id="e", context=["x"], answer="y."))).verdict
    assert verdict.abstain_reason == "no_question" and not llm_server.requests


@pytest.mark.slow
def test_fallback_when_key_missing_or_provider_down(data, tmp_path):
    no_key = "fallback:primary=claims:model=openai/gpt-4o-mini,secondary={quip:n=8,threshold=0.5}"
    down = "fallback:primary={direct:model=openai/gpt-4o-mini,api_base=http://127.0.0.1:9/v1,max_attempts=2," \
           "timeout=2},secondary=span"
    out = tmp_path / "run"
    cli("run", str(data), "--judge", no_key, "--judge", down, "--out", str(out), "--quiet", "--dev-fraction", "0")
    records = read_records(out / "records.jsonl")
    for record in records.results:
        verdict = record.result.verdict
        assert verdict.path.startswith("fallback:local:")
        assert record.result.stages[0].label == "abstain"
    reasons = {r.result.stages[0].abstain_reason.split(":")[0] for r in records.results}
    assert reasons == {"no_api_key", "retries_exhausted"}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["judges"][no_key]["fallbacks"] == 12 and summary["judges"][down]["fallbacks"] == 12


@pytest.mark.slow
def test_budget_exhausted_run_falls_back(llm_server, data, tmp_path):
    spec = f"fallback:primary={{direct:model=openai/gpt-4o-mini,api_base={llm_server.openai_base}}},secondary=quip:n=8"
    out = tmp_path / "run"
    cli("run", str(data), "--judge", spec, "--out", str(out), "--quiet", "--dev-fraction", "0",
        "--max-cost", "0.0001", "--concurrency", "1")
    paths = [r.result.verdict.path for r in read_records(out / "records.jsonl").results]
    assert paths[0] == "llm:openai/gpt-4o-mini" and paths[-1].startswith("fallback:local:quip")
    assert len(llm_server.requests) < 12


@pytest.mark.slow
def test_cascade_escalates_only_the_uncertain_band(llm_server, data, tmp_path):
    spec = (f"cascade:local={{quip:n=8,threshold=0.95}},llm={{claims:model=openai/gpt-4o-mini,"
            f"api_base={llm_server.openai_base},threshold=1.0}},band=0.0-0.999")
    out = tmp_path / "run"
    cli("run", str(data), "--judge", spec, "--out", str(out), "--quiet", "--dev-fraction", "0")
    summary = json.loads((out / "summary.json").read_text())["judges"][spec]
    cascade = summary["cascade"]
    # the grounded answers quote the context (score 1.0): decided locally; the altered ones are escalated
    assert cascade["escalation_rate"] == pytest.approx(0.5)
    assert cascade["cost_saved_usd_estimate"] > 0
    assert summary["balanced_accuracy"] == 1.0 and "balanced_accuracy_change" in cascade
    assert "latency_s_uncached" not in summary     # every call was made: nothing to add back


@pytest.mark.slow
def test_cascade_reusing_cached_claims_reports_the_latency_of_the_calls_it_reused(llm_server, data, tmp_path):
    from groundjudge.testing.oracle import oracle_responder

    llm_server.set_responder(lambda request: replace(oracle_responder(request), delay=0.2))
    inner = f"model=openai/gpt-4o-mini,api_base={llm_server.openai_base},threshold=1.0"
    cli("run", str(data), "--judge", "claims:" + inner, "--out", str(tmp_path / "claims"),
        "--quiet", "--dev-fraction", "0")
    calls = len(llm_server.requests)
    spec = f"cascade:local={{quip:n=8,threshold=0.95}},llm={{claims:{inner}}},band=0.0-0.999"
    cli("run", str(data), "--judge", spec, "--out", str(tmp_path / "cascade"), "--quiet", "--dev-fraction", "0")
    assert len(llm_server.requests) == calls      # the escalated answers reused the claims run's replies
    summary = json.loads((tmp_path / "cascade" / "summary.json").read_text())["judges"][spec]
    assert summary["llm_calls"] == 0 and summary["llm_calls_cached"] > 0
    # two or three calls of >= 0.2 s per escalated answer (facts once per context), half the answers escalated
    assert summary["latency_s_uncached"]["mean"] >= summary["latency_s"]["mean"] + 0.2


def _cli_without_litellm(tmp_path, *args: str) -> subprocess.CompletedProcess:
    """The command in an environment where importing litellm fails: what is answered from the call cache must not
    import it (its import alone takes ~2.5 s of every such run's start)."""
    blocker = tmp_path / "no-litellm"
    blocker.mkdir(exist_ok=True)
    (blocker / "litellm.py").write_text("raise ImportError('litellm was imported')\n", encoding="utf-8")
    env = {**os.environ, "COLUMNS": "200",
           "PYTHONPATH": os.pathsep.join(p for p in (str(blocker), os.environ.get("PYTHONPATH")) if p)}
    done = subprocess.run([sys.executable, "-m", "groundjudge.cli", *args], capture_output=True, text=True,
                          timeout=600, cwd=ROOT, env=env, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.mark.slow
def test_second_run_makes_no_calls_and_replay_needs_no_network(llm_server, data, tmp_path):
    spec = llm(llm_server, "claims", "threshold=1.0")
    first, second = tmp_path / "one", tmp_path / "two"
    cli("run", str(data), "--judge", spec, "--out", str(first), "--quiet", "--dev-fraction", "0")
    calls = len(llm_server.requests)
    _cli_without_litellm(tmp_path, "run", str(data), "--judge", spec, "--out", str(second), "--quiet",
                         "--dev-fraction", "0")
    assert len(llm_server.requests) == calls
    verdicts = [[(r.example.id, r.result.verdict.label, r.result.verdict.score)
                 for r in read_records(d / "records.jsonl").results] for d in (first, second)]
    assert sorted(verdicts[0]) == sorted(verdicts[1])
    assert all(c.cached for r in read_records(second / "records.jsonl").results for c in r.result.calls)
    llm_server.stop()
    result = _cli_without_litellm(tmp_path, "replay", str(first), "--out", str(tmp_path / "replayed"), "--quiet")
    assert "12 identical, 0 differ; 0 new LLM calls" in result.stdout


@pytest.mark.slow
def test_dry_run_estimates_without_calling(llm_server, data, tmp_path):
    result = cli("run", str(data), "--judge", llm(llm_server, "claims", "threshold=1.0"), "--out",
                 str(tmp_path / "run"), "--dry-run", "--dev-fraction", "0")
    assert "estimated total: $" in result.stdout and not llm_server.requests
    assert not (tmp_path / "run" / "records.jsonl").exists()


@pytest.mark.slow
def test_user_prompts_override_and_are_hashed(llm_server, data, tmp_path):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "direct.user.j2").write_text("{{ answer }} -- is it grounded in: {{ context | join(' ') }}? "
                                            "You are a meticulous fact-checker <answer>\n{{ answer }}\n</answer>")
    out = tmp_path / "run"
    # the oracle cannot read this template's layout (it abstains): one attempt each, the hashes are what is tested
    cli("run", str(data), "--judge", llm(llm_server, "direct", "max_attempts=1"), "--prompts", str(prompts),
        "--out", str(out), "--quiet", "--dev-fraction", "0")
    header = read_records(out / "records.jsonl").header
    from groundjudge.llm.templates import PromptLibrary

    assert header.template_hashes["direct"] == PromptLibrary(prompts).template_hash("direct")
    assert header.template_hashes["direct"] != PromptLibrary().template_hash("direct")
    assert "-- is it grounded in:" in llm_server.requests[0].text


@pytest.mark.slow
def test_120_examples_with_20_percent_faults_killed_and_resumed(llm_server, tmp_path):
    """Killed mid-run with 16 calls in flight and a fifth of the replies faulty, then resumed: every answer once.
    120 answers are enough: the kill lands after 40 records, with retries, parse failures and calls in flight."""
    rows = []
    for i in range(60):
        for row in qa_rows(1):
            rows.append({**row, "id": f"{row['id']}-{i}", "context": [row["context"][0] + f" Ref {i}."]})
    data = write_jsonl(tmp_path / "big.jsonl", rows)
    llm_server.fault_injector(rate=0.2, seed=7)
    spec = llm(llm_server, "direct", "max_attempts=4")
    out = tmp_path / "run"
    records = out / "records.jsonl"
    args = [sys.executable, "-m", "groundjudge.cli", "run", str(data), "--judge", spec, "--out", str(out),
            "--quiet", "--dev-fraction", "0", "--concurrency", "16"]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if records.exists() and records.read_text().count("\n") > 40:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    cli("run", str(data), "--judge", spec, "--out", str(out), "--quiet", "--dev-fraction", "0", "--resume",
        "--concurrency", "16")
    results = read_records(records).results
    ids = [r.example.id for r in results]
    assert len(ids) == len(set(ids)) == 120
    for r in results:
        v = r.result.verdict
        assert v.label in ("grounded", "ungrounded") or v.abstain_reason
    faults = sum(c.attempts > 1 or (c.error or "").startswith("parse_failure") for r in results
                 for c in r.result.calls)
    assert faults > 10   # the faults really happened (about 24 expected), and were absorbed


def _max_lengths(schema) -> list[int]:
    if isinstance(schema, dict):
        own = [schema["maxLength"]] if isinstance(schema.get("maxLength"), int) else []
        return own + [n for value in schema.values() for n in _max_lengths(value)]
    if isinstance(schema, list):
        return [n for value in schema for n in _max_lengths(value)]
    return []


def test_reply_string_bounds_stay_within_what_llama_cpp_parses():
    """A string bound becomes a grammar rule repeated that many times; llama.cpp refuses one of 1,500 ("exceeds sane
    defaults") and llama-cpp-python's server dies with it (the selfcheck battery lost its server that way)."""
    import importlib
    import inspect

    from pydantic import BaseModel

    found = {}
    for name in ("claims", "direct", "error_types", "selfcheck", "triplets"):
        module = importlib.import_module(f"groundjudge.judges.{name}")
        for obj in vars(module).values():
            if inspect.isclass(obj) and issubclass(obj, BaseModel) and obj.__module__ == module.__name__:
                found[f"{name}.{obj.__name__}"] = _max_lengths(obj.model_json_schema())
    assert "selfcheck.SampleAnswer" in found or any(k.startswith("selfcheck.") for k in found)
    assert all(n <= 1000 for bounds in found.values() for n in bounds), found
