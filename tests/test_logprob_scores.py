"""Token-probability scores over real HTTP (the scripted server returns OpenAI log-probabilities), evidence chunks,
the context-window check, the multi-stage cascade and --calibrate-sample."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys

import pytest
from conftest import cli, qa_rows, write_jsonl

from groundjudge.judges import build_judge
from groundjudge.judges.config import parse_spec
from groundjudge.llm import CallCache, LLMService
from groundjudge.llm.token_scores import score_reply, supports_logprobs, verbal_answer, word_of, yes_probability
from groundjudge.runs.records import ResultRecord, read_records
from groundjudge.runs.summary import cascade_summary
from groundjudge.testing.scripted_server import Reply
from groundjudge.types import Example


def llm(server, name: str, extra: str = "") -> str:
    spec = f"{name}:model=openai/gpt-4o-mini,api_base={server.openai_base},timeout=5"
    return spec + ("," + extra if extra else "")


def run(judge, example: Example):
    return asyncio.run(judge.judge(example))


DOC = ("Section 4 of the Leases Act. A landlord must return a deposit within 21 days after the lease ends. "
       "The Tenancy Board hears disputes about deposits.")
GOOD = Example(id="g", context=(DOC,), answer="A landlord must return a deposit within 21 days after the lease ends.")
HALF = Example(id="h", context=(DOC,), answer="The county court must return a deposit after appeals end.")
BAD = Example(id="b", context=(DOC,), answer="Tenants may withhold rent whenever repairs are delayed by weeks.")


# --- scoring a reply

def test_every_variant_of_each_word_is_summed_and_renormalised():
    top = {"Yes": math.log(0.5), " yes": math.log(0.1), "YES.": math.log(0.1), "No": math.log(0.2),
           "The": math.log(0.1)}
    scored = yes_probability(top)
    assert scored.p_yes == pytest.approx(0.7 / 0.9) and scored.mass == pytest.approx(0.9)
    assert scored.source == "logprobs"
    assert word_of(" No") == "no" and word_of("**yes") == "yes" and word_of("_yes") == "" and word_of("Nope") == "nope"
    assert yes_probability({"The": -0.1, "Answer": -3.0}) is None


def test_without_logprobs_the_word_is_the_verdict():
    assert verbal_answer("No, the deposit ...").p_yes == 0.0
    assert verbal_answer("yes").source == "verbalised"
    assert verbal_answer("Maybe") is None and verbal_answer(None) is None
    # the reply says "Yes" but the first token's probabilities rank: they win
    scored = score_reply("Yes", {"Yes": math.log(0.55), "No": math.log(0.45)})
    assert scored.p_yes == pytest.approx(0.55) and scored.answer == "yes"
    assert score_reply("No", None).p_yes == 0.0


def test_logprob_support_follows_the_provider():
    assert supports_logprobs("openai/qwen") and supports_logprobs("hosted_vllm/llama")
    assert not supports_logprobs("anthropic/claude-haiku-4-5") and not supports_logprobs("ollama/llama3")


# --- the direct judge over HTTP

def test_direct_logprobs_ranks_answers_and_records_the_alternatives(llm_server):
    judge, _ = build_judge(llm(llm_server, "direct", "score=logprobs"))
    results = [run(judge, ex) for ex in (GOOD, HALF, BAD)]
    scores = [r.verdict.score for r in results]
    assert scores[0] > scores[1] > scores[2], scores        # graded, not 0/1
    assert 0 < scores[1] < 1
    assert [r.verdict.label for r in results] == ["grounded", "ungrounded", "ungrounded"]
    assert all(r.verdict.score_source == "logprobs" and r.verdict.threshold == 0.5 for r in results)
    body = llm_server.requests[0].body
    assert body["logprobs"] is True and body["top_logprobs"] == 20 and body["max_tokens"] == 4
    assert "response_format" not in body
    call = results[0].calls[0]
    assert call.template == "direct_yesno" and set(call.logprobs) >= {"Yes", " yes", "No", "no"}
    assert call.parsed["p_yes"] == pytest.approx(scores[0])


def test_cached_logprob_calls_replay_the_same_scores_without_a_request(llm_server, tmp_path):
    service = LLMService(cache=CallCache(tmp_path / "cache"))
    judge, _ = build_judge(llm(llm_server, "direct", "score=logprobs"), service=service)
    first = run(judge, HALF)
    sent = len(llm_server.requests)
    again, _ = build_judge(llm(llm_server, "direct", "score=logprobs"),
                           service=LLMService(cache=CallCache(tmp_path / "cache")))
    second = run(again, HALF)
    assert len(llm_server.requests) == sent
    assert second.calls[0].cached and second.verdict.score == first.verdict.score
    assert second.calls[0].logprobs == first.calls[0].logprobs


CACHED_RUN = """
import asyncio, json, sys
from groundjudge.judges import build_judge
from groundjudge.llm import CallCache, LLMService
from groundjudge.types import Example
example = Example(**json.loads(sys.argv[2]))
out = {}
for spec in json.loads(sys.argv[3]):
    judge, _ = build_judge(spec, service=LLMService(cache=CallCache(sys.argv[1])))
    result = asyncio.run(judge.judge(example))
    out[spec] = [result.verdict.score, all(call.cached for call in result.calls), len(result.calls)]
out["litellm"] = "litellm" in sys.modules
print(json.dumps(out))
"""


@pytest.mark.slow
def test_a_run_from_the_cache_does_not_import_litellm_to_ask_for_logprobs(llm_server, tmp_path):
    """Whether to ask for log-probabilities is part of a call's cache key, and litellm's answer (seconds to import)
    is kept in the call cache: a fresh process that judges from the cache gets the same scores, sends nothing and
    never imports litellm."""
    specs = [llm(llm_server, "direct", "score=logprobs"), llm(llm_server, "claims", "score=logprobs")]
    first = {}
    for spec in specs:
        judge, _ = build_judge(spec, service=LLMService(cache=CallCache(tmp_path / "cache")))
        first[spec] = run(judge, HALF).verdict.score
    sent = len(llm_server.requests)
    done = subprocess.run([sys.executable, "-c", CACHED_RUN, str(tmp_path / "cache"), HALF.model_dump_json(),
                           json.dumps(specs)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    again = json.loads(done.stdout)
    assert len(llm_server.requests) == sent and again.pop("litellm") is False
    for spec in specs:
        score, cached, calls = again[spec]
        assert score == pytest.approx(first[spec]) and cached and calls >= 1


def test_a_provider_without_logprobs_gives_the_word_in_auto_and_abstains_in_logprobs(llm_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "-".join(("sk", "ant", "test", "0123456789")))
    base = f"model=anthropic/claude-haiku-4-5,api_base={llm_server.anthropic_base},timeout=5"
    auto, _ = build_judge(f"direct:{base},score=auto")
    result = run(auto, GOOD)
    assert llm_server.requests[-1].api == "anthropic" and "logprobs" not in llm_server.requests[-1].body
    assert result.verdict.score in (0.0, 1.0) and result.verdict.score_source == "verbalised"
    strict, _ = build_judge(f"direct:{base},score=logprobs")
    refused = run(strict, GOOD)
    assert refused.verdict.label == "abstain" and refused.verdict.abstain_reason.startswith("no_logprobs")


def test_a_reply_that_is_neither_yes_nor_no_is_asked_again(llm_server):
    llm_server.push(Reply(content="The documents say", top_logprobs={"The": -0.01, "It": -5.0}))
    judge, _ = build_judge(llm(llm_server, "direct", "score=logprobs"))
    result = run(judge, GOOD)
    assert len(result.calls) == 2 and result.calls[0].error.startswith("parse_failure")
    assert result.verdict.score_source == "logprobs" and result.verdict.label == "grounded"
    assert "yes or no" in llm_server.requests[1].body["messages"][-1]["content"]


# --- the claims chain, one yes/no call per claim

def test_claims_logprobs_scores_each_claim_and_takes_the_weakest(llm_server):
    two = Example(id="two", context=(DOC,), answer="A landlord must return a deposit within 21 days after the lease "
                                                   "ends. The county court hears disputes about deposits.")
    judge, spec = build_judge(llm(llm_server, "claims", "score=logprobs,against=context"))
    result = run(judge, two)
    claims = result.verdict.claims
    assert len(claims) == 2 and claims[0].score > 0.9 and claims[1].score < claims[0].score
    assert result.verdict.score == pytest.approx(min(c.score for c in claims))
    assert result.verdict.threshold == 0.5 and result.verdict.score_source == "logprobs"
    assert [c.template for c in result.calls] == ["claims_extract", "claim_yesno", "claim_yesno"]
    assert spec.settings["threshold"] == 0.5 and "claim_yesno" in judge.template_names()
    mean, _ = build_judge(llm(llm_server, "claims", "score=logprobs,against=context,aggregate=mean"))
    assert run(mean, two).verdict.score == pytest.approx(sum(c.score for c in claims) / 2)
    typed, _ = build_judge(llm(llm_server, "error_types", "score=logprobs,against=context"))
    assert "claim_yesno" in typed.template_names() and "claims_verify" not in typed.template_names()
    result = run(typed, two)
    assert [c.template for c in result.calls] == ["claims_extract", "claim_yesno", "claim_yesno",
                                                  "error_types_classify"]
    assert result.verdict.claims[0].error_type is None and result.verdict.claims[1].error_type is not None


# --- evidence chunks and the context window

LONG = tuple([" ".join(f"Clause {i}.{j} concerns parking spaces and bicycle storage in block {i}." for j in range(6))
              for i in range(30)]
             + ["A landlord must return a deposit within 21 days after the lease ends."])


def test_chunks_show_the_model_only_the_best_windows_and_record_them(llm_server):
    example = Example(id="long", context=LONG, answer="A landlord must return a deposit within 21 days after the "
                                                     "lease ends.")
    judge, _ = build_judge(llm(llm_server, "direct", "score=logprobs,evidence=chunks,top_k=2,chunk_words=40,"
                                                     "ranker=tfidf"))
    result = run(judge, example)
    assert result.verdict.label == "grounded"
    sent = llm_server.requests[-1].text
    assert "deposit within 21 days" in sent and sent.count("Clause") < 20     # not the whole 31 documents
    chunks = result.verdict.chunks
    assert 1 <= len(chunks) <= 2 and any(c.doc_index == 30 and "deposit" in c.text for c in chunks)
    assert all(LONG[c.doc_index][c.start:c.end] == c.text for c in chunks)

    claims, _ = build_judge(llm(llm_server, "claims", "score=logprobs,evidence=chunks,top_k=1,chunk_words=40,"
                                                      "ranker=tfidf"))
    verdict = run(claims, example).verdict
    assert verdict.label == "grounded" and all(len(c.chunks) == 1 for c in verdict.claims)
    assert "facts_extract" not in claims.template_names()


def test_a_prompt_longer_than_the_window_is_never_sent(llm_server):
    example = Example(id="long", context=LONG, answer="A deposit is returned within 21 days.")
    judge, _ = build_judge(llm(llm_server, "direct", "context_window=1000"))
    result = run(judge, example)
    assert not llm_server.requests
    assert result.verdict.label == "abstain" and result.verdict.abstain_reason.startswith("context_too_long")
    # the same window holds the prompt built from the two best 40-word windows (~350 tokens), not the ~3,500 of all
    chunked, _ = build_judge(llm(llm_server, "direct", "context_window=1000,evidence=chunks,chunk_words=40,top_k=2,"
                                                       "ranker=tfidf"))
    assert run(chunked, example).verdict.label == "grounded" and len(llm_server.requests) == 1


# --- the cascade's LLM band and later stages

def test_cascade_escalates_on_the_llm_probability_to_a_third_stage(llm_server):
    mid = llm(llm_server, "direct", "score=logprobs").split(":", 1)[1]
    spec = (f"cascade:local=quip,band=0-1,llm={{direct:{mid}}},"
            f"then=[{{claims:{mid},score=logprobs,against=context}}],then_bands=[0.2-0.9]")
    judge, header = build_judge(spec)
    assert len(header.settings["then"]) == 1
    good, half = run(judge, GOOD), run(judge, HALF)
    assert len(good.stages) == 2 and good.verdict.path.startswith("llm:")      # the LLM was sure: stop there
    assert len(half.stages) == 3                                                 # in the band: on to the chain
    assert [c.template for c in half.calls][-1] == "claim_yesno"
    records = [ResultRecord(judge="cascade", example=e, result=r) for e, r in ((GOOD, good), (HALF, half))]
    summary = cascade_summary(records)
    assert summary["escalation_rate"] == 1.0 and summary["stage_reach"] == [1.0, 1.0, 0.5]
    with pytest.raises(Exception, match="then_bands"):
        build_judge("cascade:then=[quip]")


def test_list_items_in_braces_are_inner_specs():
    assert parse_spec("cascade:then=[{claims:a=1,b=2}, quip]")[1]["then"] == ["claims:a=1,b=2", "quip"]


# --- the CLI: calibration on a dev sample, summary, replay

@pytest.mark.slow
def test_calibrate_sample_fits_the_threshold_on_that_many_dev_answers(llm_server, tmp_path):
    data = write_jsonl(tmp_path / "qa.jsonl", qa_rows(12))
    out = tmp_path / "run"
    spec = llm(llm_server, "direct", "score=logprobs")
    cli("run", str(data), "--judge", spec, "--out", str(out), "--quiet", "--dev-fraction", "0.5",
        "--calibrate-sample", "4")
    header = read_records(out / "records.jsonl").header
    calibration = header.judges[0].calibration
    assert calibration.n == 4 and calibration.source.startswith("split:dev")
    assert len(read_records(out / "calibration.jsonl").results) == 4
    summary = json.loads((out / "summary.json").read_text())["judges"][spec]
    assert summary["n_abstained"] == 0 and summary["threshold"] == calibration.threshold
    cli("replay", str(out), "--out", str(tmp_path / "again"), "--quiet")
    again = read_records(tmp_path / "again" / "records.jsonl")
    assert [r.result.verdict.score for r in again.results] == \
        [r.result.verdict.score for r in read_records(out / "records.jsonl").results]
