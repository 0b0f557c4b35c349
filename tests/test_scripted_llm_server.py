"""The scripted LLM server speaks the OpenAI and Anthropic wire formats well enough for litellm, for real."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import socket
import threading

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402
import pytest  # noqa: E402
from groundjudge.llm import retry_after_seconds  # noqa: E402
from groundjudge.testing.scripted_server import MALFORMED, Reply, Request, ScriptedLLMServer  # noqa: E402

litellm.suppress_debug_info = True

ANTHROPIC_MODEL = "anthropic/claude-3-5-haiku-20241022"
OPENAI_KEY = "sk-test-openai-0123"
ANTHROPIC_KEY = "sk-ant-test-4567"
MESSAGES = [{"role": "system", "content": "You judge grounding."},
            {"role": "user", "content": "Is the answer grounded in the clause?"}]


@pytest.fixture
def server():
    with ScriptedLLMServer() as srv:
        yield srv
    assert not _server_threads(), "the server left threads behind"


def _server_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("scripted-llm-") or "process_request" in t.name]


def call(server: ScriptedLLMServer, api: str, **kwargs):
    """One litellm.acompletion against the server, without retries."""
    kwargs.setdefault("timeout", 5)
    if api == "openai":
        target = dict(model="openai/judge-model", api_base=server.openai_base, api_key=OPENAI_KEY)
    else:
        target = dict(model=ANTHROPIC_MODEL, api_base=server.anthropic_base, api_key=ANTHROPIC_KEY)
    return asyncio.run(litellm.acompletion(messages=MESSAGES, max_retries=0, **target, **kwargs))


def raised(server: ScriptedLLMServer, api: str, reply: Reply, **kwargs) -> Exception:
    server.push(reply)
    with pytest.raises(Exception) as info:
        call(server, api, **kwargs)
    return info.value


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_content_and_usage_come_back_through_litellm(server, api):
    server.push(Reply(content='{"label": "grounded"}', prompt_tokens=123, completion_tokens=7))
    response = call(server, api)
    assert response.choices[0].message.content == '{"label": "grounded"}'
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (123, 7)
    (request,) = server.requests
    assert request.api == api
    assert request.path == ("/v1/chat/completions" if api == "openai" else "/v1/messages")
    assert "You judge grounding." in request.text and "Is the answer grounded" in request.text


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_default_usage_is_a_rough_count_and_the_responder_sees_the_request(server, api):
    server.set_responder(lambda req: Reply(content="yes" if "clause" in req.text else "no"))
    response = call(server, api)
    assert response.choices[0].message.content == "yes"
    assert response.usage.prompt_tokens == len(server.requests[0].text) // 4
    assert response.usage.completion_tokens == 1


def test_n_choices(server):
    server.push(Reply(content=["a", "b", "c"]), Reply(content="same"))
    assert [c.message.content for c in call(server, "openai", n=3).choices] == ["a", "b", "c"]
    assert [c.message.content for c in call(server, "openai", n=2).choices] == ["same", "same"]


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_api_key_is_in_the_recorded_headers(server, api):
    server.push(Reply(content="ok"))
    call(server, api)
    headers = server.requests[0].headers
    if api == "openai":
        assert headers["authorization"] == f"Bearer {OPENAI_KEY}"
    else:
        assert headers["x-api-key"] == ANTHROPIC_KEY
        assert "anthropic-version" in headers


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_429_is_a_rate_limit_error_with_retry_after_in_litellm_response_headers(server, api):
    err = raised(server, api, Reply(status=429, headers={"Retry-After": "1"}))
    assert type(err) is litellm.RateLimitError, type(err)
    assert err.status_code == 429
    # Retry-After is here (httpx.Headers, case-insensitive); err.response.headers is an empty stand-in up to
    # litellm 1.106 and carries it too from 1.110, so the retry policy reads either
    assert err.litellm_response_headers.get("retry-after") == "1"
    assert err.litellm_response_headers.get("Retry-After") == "1"
    assert retry_after_seconds(err) == 1.0


@pytest.mark.parametrize("api", ["openai", "anthropic"])
@pytest.mark.parametrize("reply, expected, status", [
    (Reply(status=500), litellm.InternalServerError, 500),
    (Reply(status=503), litellm.ServiceUnavailableError, 503),
    (Reply(content='{"label": "grounded"}', fault="drop"), litellm.InternalServerError, 500),
    (Reply(content='{"label": "grounded"}', fault="truncate"), litellm.InternalServerError, 500),
], ids=["500", "503", "drop", "truncate"])
def test_server_errors_and_broken_connections(server, api, reply, expected, status):
    err = raised(server, api, reply)
    assert type(err) is expected, f"{reply.status}/{reply.fault} raised {type(err).__module__}.{type(err).__name__}"
    assert err.status_code == status
    assert len(server.requests) == 1  # max_retries=0: the client did not try again


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_slow_reply_times_out(server, api):
    err = raised(server, api, Reply(content="late", delay=1.5), timeout=0.5)
    assert type(err) is litellm.Timeout, type(err)
    assert err.status_code == 408


def test_the_server_keeps_serving_after_faults_and_errors_out_of_script(server):
    server.push(Reply(fault="drop"), Reply(fault="truncate", content="x" * 50), Reply(content="fine"))
    for _ in range(2):
        with pytest.raises(litellm.InternalServerError):
            call(server, "openai")
    assert call(server, "openai").choices[0].message.content == "fine"
    with pytest.raises(litellm.InternalServerError, match="ran out of script"):
        call(server, "openai")


def test_responder_exceptions_become_500_and_are_kept(server):
    def broken(request: Request) -> Reply:
        raise KeyError("boom")

    server.set_responder(broken)
    with pytest.raises(litellm.InternalServerError, match="responder raised KeyError"):
        call(server, "anthropic")
    assert isinstance(server.errors[0], KeyError)


def _raw(conn: http.client.HTTPConnection, path: str, body: dict | None = None):
    if body is None:
        conn.request("GET", path)
    else:
        conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    return response, response.read()


def test_wire_keep_alive_models_stream_and_error_shapes(server):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        response, data = _raw(conn, "/v1/models")
        assert response.status == 200 and json.loads(data)["data"][0]["id"]
        sock = conn.sock
        server.push(Reply(status=429, headers={"Retry-After": "0"}), Reply(status=500))
        response, data = _raw(conn, "/v1/chat/completions", {"model": "m", "messages": []})
        assert response.status == 429 and response.getheader("Retry-After") == "0"
        assert json.loads(data)["error"]["type"] == "rate_limit_exceeded"
        response, data = _raw(conn, "/v1/messages", {"model": "m", "messages": []})
        assert response.status == 500 and json.loads(data) == {
            "type": "error", "error": {"type": "api_error", "message": "scripted error 500"}}
        response, data = _raw(conn, "/v1/chat/completions", {"model": "m", "messages": [], "stream": True})
        assert response.status == 400 and "stream" in json.loads(data)["error"]["message"]
        assert conn.sock is sock  # one connection for all four: keep-alive works
        # headers and body leave in two writes: with Nagle's algorithm on, the body of every keep-alive reply waits
        # for the client's delayed ACK (~40 ms a call, which no real provider adds)
        served = list(server._connections)
        assert served and all(c.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for c in served)
    finally:
        conn.close()


def test_wire_truncate_announces_more_than_it_sends(server):
    server.push(Reply(content="x" * 200, fault="truncate"))
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request("POST", "/v1/chat/completions", body=json.dumps({"model": "m", "messages": []}))
        response = conn.getresponse()
        assert response.status == 200
        with pytest.raises(http.client.IncompleteRead):
            response.read()
    finally:
        conn.close()


def test_fault_injector_is_deterministic_and_hits_about_the_rate():
    def outcomes(seed: int, rate: float) -> list[str]:
        srv = ScriptedLLMServer(lambda req: Reply(content='{"label": "grounded"}'))
        inject = srv.fault_injector(rate=rate, seed=seed)
        assert srv.responder is inject
        out = []
        for i in range(200):
            reply = inject(Request(path="/v1/chat/completions", headers={}, body={
                "messages": [{"role": "user", "content": f"item {i % 50}"}]}, api="openai"))
            out.append(reply.fault or (str(reply.status) if reply.status != 200 else
                                       "malformed" if reply.content == MALFORMED else "ok"))
        return out

    first = outcomes(seed=7, rate=0.3)
    assert first == outcomes(seed=7, rate=0.3)
    assert first != outcomes(seed=8, rate=0.3)
    assert 30 <= sum(o != "ok" for o in first) <= 90
    assert set(first) == {"ok", "429", "500", "drop", "truncate", "malformed"}
    assert set(outcomes(seed=7, rate=0.0)) == {"ok"}
    assert "ok" not in outcomes(seed=7, rate=1.0)


def test_fault_injector_through_litellm(server):
    server.set_responder(lambda req: Reply(content='{"label": "grounded"}'))
    server.fault_injector(rate=1.0, seed=1, faults=("429",))
    err = raised(server, "openai", Reply(status=429, headers={"Retry-After": "0"}))  # pushed replies come first
    assert err.litellm_response_headers.get("retry-after") == "0"
    with pytest.raises(litellm.RateLimitError):
        call(server, "anthropic")
    server.fault_injector(rate=1.0, seed=1, faults=("malformed",))
    assert call(server, "openai").choices[0].message.content == MALFORMED


def test_stop_closes_the_port_and_idle_keep_alive_connections():
    srv = ScriptedLLMServer(lambda req: Reply(content="ok")).start()
    port = srv.port
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    _raw(conn, "/v1/models")  # leaves an idle keep-alive connection and its handler thread
    srv.push(Reply(content="slow", delay=30))
    slow = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    slow.request("POST", "/v1/messages", body=json.dumps({"model": "m", "messages": []}))
    srv.stop()  # returns at once: the delayed handler is woken and the idle connection is shut
    conn.close()
    slow.close()
    assert not _server_threads()
    with pytest.raises(OSError):
        http.client.HTTPConnection("127.0.0.1", port, timeout=1).request("GET", "/v1/models")
