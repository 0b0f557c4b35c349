"""The LLM client against a real local HTTP server: retries, parsing, cache, cost, budget, keys."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from pydantic import BaseModel

from groundjudge.llm import Budget, CallCache, LLMService, LLMSettings, ProviderError, redact
from groundjudge.testing.scripted_server import MALFORMED, Reply


class Verdict(BaseModel):
    reasoning: str
    verdict: str
    score: float


GOOD = json.dumps({"reasoning": "fine", "verdict": "grounded", "score": 0.9})
VARIABLES = {"question": "q?", "context": ["The deposit is due in 30 days."], "answer": "30 days."}


def complete(service: LLMService, settings: LLMSettings, **kw):
    calls = []
    parsed = asyncio.run(service.complete(settings, "direct", {**VARIABLES, **kw}, Verdict, calls))
    return parsed, calls


def settings(server, **kw) -> LLMSettings:
    base = {"model": "openai/gpt-4o-mini", "api_base": server.openai_base, "timeout": 5, "max_attempts": 4}
    return LLMSettings(**{**base, **kw})


@pytest.mark.slow
def test_retries_transient_faults_then_succeeds(llm_server):
    llm_server.push(Reply(status=429, headers={"Retry-After": "0"}), Reply(status=500), Reply(fault="drop"),
                    Reply(fault="truncate"))
    llm_server.push(Reply(content=GOOD, prompt_tokens=100, completion_tokens=20))
    parsed, calls = complete(LLMService(), settings(llm_server, max_attempts=6))
    assert parsed.verdict == "grounded"
    assert len(calls) == 1 and calls[0].attempts == 5 and len(llm_server.requests) == 5
    assert (calls[0].input_tokens, calls[0].output_tokens) == (100, 20)
    # priced from litellm's table for gpt-4o-mini
    assert calls[0].cost_usd == pytest.approx(100 * 0.15e-6 + 20 * 0.6e-6)


def test_retry_after_is_honoured(llm_server):
    llm_server.push(Reply(status=429, headers={"Retry-After": "1"}), Reply(content=GOOD))
    start = time.monotonic()
    parsed, _ = complete(LLMService(), settings(llm_server))
    assert parsed is not None and time.monotonic() - start >= 1.0


@pytest.mark.parametrize("status,reason", [(401, "auth_error"), (400, "bad_request"), (404, "provider_error")])
def test_no_retry_on_client_errors(llm_server, status, reason):
    llm_server.push(Reply(status=status, content="nope"))
    with pytest.raises(ProviderError) as info:
        complete(LLMService(), settings(llm_server))
    assert info.value.reason == reason and len(llm_server.requests) == 1


def test_timeouts_are_retried_then_given_up(llm_server):
    llm_server.push(Reply(content=GOOD, delay=1.5), Reply(content=GOOD, delay=1.5))
    calls = []
    with pytest.raises(ProviderError) as info:
        asyncio.run(LLMService().complete(settings(llm_server, timeout=0.3, max_attempts=2), "direct", VARIABLES,
                                          Verdict, calls))
    assert info.value.reason == "retries_exhausted" and len(llm_server.requests) == 2
    assert calls[0].attempts == 2 and calls[0].error.startswith("retries_exhausted")


def test_invalid_reply_is_re_asked_once_with_the_error(llm_server):
    llm_server.push(Reply(content=MALFORMED), Reply(content=GOOD))
    parsed, calls = complete(LLMService(), settings(llm_server))
    assert parsed.score == 0.9 and len(calls) == 2
    assert calls[0].error.startswith("parse_failure") and calls[0].raw_output == MALFORMED
    assert "could not be used" in llm_server.requests[1].text and MALFORMED in llm_server.requests[1].text


def test_wrong_schema_twice_is_a_parse_failure_with_raw_text_kept(llm_server):
    wrong = json.dumps({"verdict": "maybe"})
    llm_server.push(Reply(content=wrong), Reply(content=wrong))
    parsed, calls = complete(LLMService(), settings(llm_server))
    assert parsed is None and [c.raw_output for c in calls] == [wrong, wrong]
    assert "reasoning" in llm_server.requests[1].text.split("could not be used")[1]   # the error was shown


def test_cache_hits_make_no_calls_and_sampling_is_cached_per_index(llm_server, tmp_path):
    llm_server.set_responder(lambda request: Reply(content=GOOD))
    service = LLMService(cache=CallCache(tmp_path / "c"))
    complete(service, settings(llm_server))
    fresh = LLMService(cache=CallCache(tmp_path / "c"))
    parsed, calls = complete(fresh, settings(llm_server, timeout=99, max_attempts=1))   # not part of the key
    assert parsed is not None and calls[0].cached and len(llm_server.requests) == 1
    hot = settings(llm_server, temperature=1.0)
    for index in (0, 1, 0):
        asyncio.run(fresh.complete(hot, "direct", VARIABLES, Verdict, [], sample_index=index))
    assert len(llm_server.requests) == 3


def test_a_cached_reply_keeps_the_latency_of_the_call_that_produced_it(llm_server, tmp_path):
    llm_server.set_responder(lambda request: Reply(content=GOOD, delay=0.3))
    _, first = complete(LLMService(cache=CallCache(tmp_path / "c")), settings(llm_server))
    _, again = complete(LLMService(cache=CallCache(tmp_path / "c")), settings(llm_server))
    assert not first[0].cached and first[0].latency_s >= 0.3 and first[0].source_latency_s is None
    assert again[0].cached and again[0].latency_s == 0.0 and again[0].source_latency_s == first[0].latency_s


def test_budget_stops_new_calls(llm_server):
    llm_server.set_responder(lambda request: Reply(content=GOOD, prompt_tokens=1000, completion_tokens=100))
    service = LLMService(budget=Budget(max_cost=0.0001))
    complete(service, settings(llm_server))
    with pytest.raises(ProviderError) as info:
        complete(service, settings(llm_server), answer="another answer")
    assert info.value.reason == "budget" and len(llm_server.requests) == 1


def test_price_override_and_local_models_cost_nothing(llm_server):
    llm_server.set_responder(lambda request: Reply(content=GOOD, prompt_tokens=1000, completion_tokens=1000))
    _, calls = complete(LLMService(), settings(llm_server, model="openai/my-local-model"))
    assert calls[0].cost_usd == 0.0
    _, calls = complete(LLMService(), settings(llm_server, model="openai/my-local-model", input_cost_per_mtok=2.0,
                                                output_cost_per_mtok=4.0), answer="other")
    assert calls[0].cost_usd == pytest.approx(0.006)


def test_missing_key_is_a_fallback_reason_not_a_call(llm_server):
    with pytest.raises(ProviderError) as info:
        complete(LLMService(), LLMSettings(model="openai/gpt-4o-mini"))
    assert info.value.reason == "no_api_key" and "OPENAI_API_KEY" in str(info.value)


def test_anthropic_wire_format(llm_server, monkeypatch):
    fake_key = "-".join(("sk", "ant", "test", "key", "0123456789"))   # built here: no key-shaped literal in git
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake_key)
    llm_server.push(Reply(content=GOOD, prompt_tokens=200, completion_tokens=50))
    parsed, calls = complete(LLMService(), LLMSettings(model="anthropic/claude-haiku-4-5",
                                                       api_base=llm_server.anthropic_base, timeout=5))
    assert parsed.verdict == "grounded" and llm_server.requests[0].api == "anthropic"
    assert llm_server.requests[0].headers["x-api-key"] == fake_key
    assert calls[0].cost_usd > 0
    assert fake_key not in calls[0].model_dump_json()


def test_keys_never_reach_errors_or_records(llm_server, monkeypatch):
    key = "-".join(("sk", "proj", "SECRET" * 2 + "0123456789"))   # a fake key, assembled at run time
    monkeypatch.setenv("OPENAI_API_KEY", key)
    llm_server.push(Reply(status=401, content=f"Incorrect API key provided: {key}"))
    calls = []
    with pytest.raises(ProviderError) as info:
        asyncio.run(LLMService().complete(settings(llm_server), "direct", VARIABLES, Verdict, calls))
    assert llm_server.requests[0].headers["authorization"] == f"Bearer {key}"   # it was sent ...
    assert key not in str(info.value) and key not in json.dumps([c.model_dump(mode="json") for c in calls])
    assert redact(f"token {key} and Bearer abc.def") == "token [REDACTED] and [REDACTED]"


def test_rate_limit_per_minute_spaces_requests(llm_server):
    llm_server.set_responder(lambda request: Reply(content=GOOD))
    service = LLMService()
    limited = settings(llm_server, rpm=120)   # two per second

    async def burst():
        await asyncio.gather(*(service.complete(limited, "direct", {**VARIABLES, "answer": str(i)}, Verdict, [])
                               for i in range(4)))

    start = time.monotonic()
    asyncio.run(burst())
    assert len(llm_server.requests) == 4 and time.monotonic() - start >= 0.9
