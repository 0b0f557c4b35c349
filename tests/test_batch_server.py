"""The scripted server's batch APIs, through the official openai and anthropic SDKs over HTTP: states over polls,
lines answered by the same responder as online calls, failed and expired lines, cancel, bad input."""

from __future__ import annotations

import json
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import anthropic  # noqa: E402
import openai  # noqa: E402
import pytest  # noqa: E402

from groundjudge.testing.scripted_server import BatchPlan, Reply, ScriptedLLMServer  # noqa: E402

KEY = "sk-test-batch-server-0123"


@pytest.fixture
def server():
    with ScriptedLLMServer(lambda request: Reply(content="echo: " + request.text)) as srv:
        yield srv


def openai_client(server) -> openai.OpenAI:
    return openai.OpenAI(api_key=KEY, base_url=server.openai_base, max_retries=0)


def anthropic_client(server) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=KEY, base_url=server.anthropic_base, max_retries=0)


def openai_batch(client: openai.OpenAI, texts: list[str]):
    lines = "".join(json.dumps({"custom_id": f"c{i}", "method": "POST", "url": "/v1/chat/completions",
                                "body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": t}]}})
                     + "\n" for i, t in enumerate(texts))
    upload = client.files.create(file=("in.jsonl", lines.encode(), "application/jsonl"), purpose="batch")
    return client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h")


def anthropic_batch(client: anthropic.Anthropic, texts: list[str]):
    return client.messages.batches.create(requests=[
        {"custom_id": f"c{i}", "params": {"model": "claude-x", "max_tokens": 10,
                                          "messages": [{"role": "user", "content": t}]}} for i, t in enumerate(texts)])


def file_lines(client: openai.OpenAI, file_id: str | None) -> list[dict]:
    return [] if file_id is None else [json.loads(t) for t in client.files.content(file_id).text.splitlines()]


def test_openai_batch_moves_through_its_states_and_answers_each_line_like_an_online_call(server):
    server.batches.plan = BatchPlan(polls_per_state=2)
    client = openai_client(server)
    batch = openai_batch(client, ["one", "two", "three"])
    assert batch.status == "validating" and not server.requests   # nothing answered before it runs
    seen = [client.batches.retrieve(batch.id).status for _ in range(6)]
    assert seen == ["validating", "in_progress", "in_progress", "finalizing", "finalizing", "completed"]
    done = client.batches.retrieve(batch.id)
    assert (done.request_counts.total, done.request_counts.completed, done.request_counts.failed) == (3, 3, 0)
    assert done.error_file_id is None
    out = {row["custom_id"]: row for row in file_lines(client, done.output_file_id)}
    assert out["c1"]["response"]["status_code"] == 200
    assert out["c1"]["response"]["body"]["choices"][0]["message"]["content"] == "echo: two"
    assert [r.batch_id for r in server.requests] == [batch.id] * 3   # each line seen once, marked with its batch
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert server.batches.count("create") == 1 and server.batches.count("poll", batch.id) == 7
    assert server.batches.count("upload") == 1


def test_openai_failed_and_expired_lines_go_to_the_error_file(server):
    server.batches.plan = BatchPlan(polls_per_state=0, fail=lambda request: "two" in request.text)
    server.push(Reply(status=429, content="slow down"))   # a pushed reply answers the first line, as online
    client = openai_client(server)
    done = client.batches.retrieve(openai_batch(client, ["one", "two", "three"]).id)
    assert done.status == "completed" and done.request_counts.failed == 2
    errors = {row["custom_id"]: row for row in file_lines(client, done.error_file_id)}
    assert errors["c0"]["response"]["status_code"] == 429 and errors["c1"]["response"]["status_code"] == 500
    assert [row["custom_id"] for row in file_lines(client, done.output_file_id)] == ["c2"]

    server.batches.plan = BatchPlan(polls_per_state=0, expire_after=1)
    done = client.batches.retrieve(openai_batch(client, ["a", "b", "c"]).id)
    assert done.status == "expired"
    errors = file_lines(client, done.error_file_id)
    assert [(e["custom_id"], e["error"]["code"]) for e in errors] == [("c1", "batch_expired"), ("c2", "batch_expired")]
    assert len(file_lines(client, done.output_file_id)) == 1


def test_openai_cancel_and_bad_input(server):
    client = openai_client(server)
    batch = openai_batch(client, ["x"])
    assert client.batches.cancel(batch.id).status == "cancelled"
    done = client.batches.retrieve(batch.id)
    assert file_lines(client, done.error_file_id)[0]["error"]["code"] == "batch_cancelled"
    assert not server.requests
    with pytest.raises(openai.BadRequestError):
        client.batches.create(input_file_id="file-missing", endpoint="/v1/chat/completions", completion_window="24h")
    with pytest.raises(openai.NotFoundError):
        client.batches.retrieve("batch_missing")


def test_anthropic_batch_ends_with_succeeded_errored_and_expired_results(server):
    server.batches.plan = BatchPlan(polls_per_state=1, fail=lambda request: "two" in request.text)
    client = anthropic_client(server)
    batch = anthropic_batch(client, ["one", "two", "three"])
    assert batch.processing_status == "in_progress" and batch.request_counts.processing == 3
    done = client.messages.batches.retrieve(batch.id)
    assert done.processing_status == "ended" and done.results_url.endswith(f"/v1/messages/batches/{batch.id}/results")
    assert (done.request_counts.succeeded, done.request_counts.errored) == (2, 1)
    results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
    assert results["c0"].type == "succeeded" and results["c0"].message.content[0].text == "echo: one"
    assert results["c1"].type == "errored" and results["c1"].error.error.type == "api_error"
    assert server.batches.count("results", batch.id) == 1

    server.batches.plan = BatchPlan(polls_per_state=0, expire_after=0)
    expired = anthropic_batch(client, ["a", "b"])
    assert client.messages.batches.retrieve(expired.id).request_counts.expired == 2
    assert {r.result.type for r in client.messages.batches.results(expired.id)} == {"expired"}


def test_anthropic_rejects_bad_custom_ids_and_unknown_batches(server):
    client = anthropic_client(server)
    with pytest.raises(anthropic.BadRequestError):
        client.messages.batches.create(requests=[{"custom_id": "has space", "params": {"model": "m"}}])
    with pytest.raises(anthropic.NotFoundError):
        client.messages.batches.retrieve("msgbatch_missing")
    canceled = anthropic_batch(client, ["x"])
    assert client.messages.batches.cancel(canceled.id).processing_status == "ended"
    assert [r.result.type for r in client.messages.batches.results(canceled.id)] == ["canceled"]
