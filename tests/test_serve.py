"""``groundjudge serve`` against a real uvicorn process on 127.0.0.1: every route, every refusal (422 naming the
field, 413, 401, 503 past the queue, 504 past the time limit), the records folder, and SIGTERM under load."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("prometheus_client")

from groundjudge.judges.quip import QuipJudge  # noqa: E402
from groundjudge.serve.process import ServeProcess  # noqa: E402
from groundjudge.testing.oracle import oracle_responder  # noqa: E402

CONTEXT = ("Residential Tenancies Act, Section 12. A landlord must return the security deposit within 30 days "
           "after the tenancy ends. A landlord who fails to do so owes the tenant twice the deposit.")
GROUNDED = "A landlord must return the security deposit within 30 days after the tenancy ends."
MIXED = GROUNDED + " Tenants may also keep the keys for a year after they move out."


@pytest.fixture(scope="module")
def local_service(tmp_path_factory):
    """quip (default) and cosine, verdicts recorded, a 20 kB body cap."""
    folder = tmp_path_factory.mktemp("serve")
    service = ServeProcess(["--judge", "quip", "--judge", "cosine", "--record", str(folder / "run"),
                            "--max-body-bytes", "20000"], log=folder / "serve.log")
    with service:
        yield service, folder / "run"


def post(service: ServeProcess, path: str, body, **kwargs) -> httpx.Response:
    """POST a JSON body to the service."""
    return httpx.post(f"{service.url}{path}", json=body, timeout=30, **kwargs)


def delayed_oracle(delay_s: float):
    """The scripted LLM server's oracle, each reply held back ``delay_s`` seconds."""
    return lambda request: dataclasses.replace(oracle_responder(request), delay=delay_s)


def llm_spec(server, **extra: str) -> str:
    """A direct LLM judge speaking to the scripted server."""
    settings = {"model": "openai/gpt-4o-mini", "api_base": server.openai_base, "timeout": "30",
                "concurrency": "64", "max_attempts": "1", **extra}
    return "direct:" + ",".join(f"{k}={v}" for k, v in settings.items())


# --- routes


@pytest.mark.slow
def test_judge_route_gives_the_verdict_with_claims_and_unsupported_spans(local_service):
    service, _ = local_service
    response = post(service, "/v1/judge", {"answer": MIXED, "context": CONTEXT, "question": "Deposit?"})
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) >= {"label", "score", "threshold", "claims", "spans", "path", "suspected_injection",
                         "latency_s", "cost_usd"}
    assert body["judge"] == "quip" and body["path"].startswith("local:quip")
    assert body["cost_usd"] == 0.0 and body["latency_s"] > 0
    assert [c["label"] for c in body["claims"]] == ["supported", "unverifiable"]
    (span,) = body["spans"]
    assert MIXED[span["start"]:span["end"]] == span["text"] and span["text"].startswith("Tenants may")
    grounded = post(service, "/v1/judge", {"answer": GROUNDED, "context": [CONTEXT, "Another document."]}).json()
    assert grounded["label"] == "grounded" and grounded["spans"] == []


def test_judge_route_picks_a_loaded_judge_by_spec_or_kind(local_service):
    service, _ = local_service
    body = post(service, "/v1/judge", {"answer": GROUNDED, "context": CONTEXT, "judge": "cosine"}).json()
    assert body["judge"] == "cosine" and body["path"].startswith("local:cosine")
    assert body["label"] == "grounded" and body["score"] > 0.9
    assert body["claims"][0]["evidence"]["text"].startswith("A landlord must return")


@pytest.mark.slow
def test_batch_route_answers_in_order_across_judges(local_service):
    service, _ = local_service
    items = [{"answer": GROUNDED, "context": CONTEXT},
             {"answer": "The moon is made of cheese.", "context": CONTEXT, "judge": "cosine"},
             {"answer": MIXED, "context": [CONTEXT], "judge": "quip"}]
    response = post(service, "/v1/judge/batch", items)
    assert response.status_code == 200
    results = response.json()["results"]
    assert [r["judge"] for r in results] == ["quip", "cosine", "quip"]
    assert [r["label"] for r in results] == ["grounded", "ungrounded", "grounded"]
    assert len(results[2]["spans"]) == 1


def test_hhem_route_is_a_drop_in(local_service):
    service, _ = local_service
    good = post(service, "/v1/evaluate_factual_consistency",
                {"generated_text": GROUNDED, "source_texts": [CONTEXT], "model_parameters": {"model_name": "hhem_v2.3"}})
    assert good.status_code == 200
    assert set(good.json()) == {"score", "p_consistent", "p_inconsistent"}
    assert good.json()["score"] == good.json()["p_consistent"] == pytest.approx(1.0)
    bad = post(service, "/v1/evaluate_factual_consistency",
               {"generated_text": "The moon is made of cheese.", "source_texts": [CONTEXT]}).json()
    assert bad["p_consistent"] < 0.5 and bad["p_inconsistent"] == pytest.approx(1 - bad["score"])


def test_healthz_and_metrics(local_service):
    service, _ = local_service
    health = httpx.get(f"{service.url}/healthz").json()
    assert health["status"] == "ok" and health["judges"] == ["quip", "cosine"]
    post(service, "/v1/judge", {"answer": GROUNDED, "context": CONTEXT})
    post(service, "/v1/judge", {"answer": GROUNDED, "context": CONTEXT, "judge": "cosine"})
    post(service, "/v1/judge", {"context": CONTEXT})
    httpx.get(f"{service.url}/no/such/path")
    response = httpx.get(f"{service.url}/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    text = response.text
    assert 'groundjudge_requests_total{route="/v1/judge",status="200"}' in text
    assert 'groundjudge_errors_total{route="/v1/judge",status="422"}' in text
    assert 'groundjudge_request_seconds_bucket{le="0.1",route="/v1/judge"}' in text
    assert "groundjudge_in_flight 1.0" in text   # this request
    assert 'route="other",status="404"' in text and "/no/such/path" not in text
    assert 'groundjudge_batch_size_count{judge="cosine"}' in text


def test_answers_are_never_html(local_service):
    service, _ = local_service
    script = "<script>alert(1)</script> A landlord must return the security deposit."
    response = post(service, "/v1/judge", {"answer": script, "context": CONTEXT})
    assert response.headers["content-type"] == "application/json"
    assert response.json()["claims"][0]["text"].startswith("<script>")   # data, as given
    assert httpx.get(f"{service.url}/docs").status_code == 404   # no HTML pages at all


# --- bad input


@pytest.mark.parametrize("path, body, loc", [
    ("/v1/judge", {"context": CONTEXT}, ["body", "answer"]),
    ("/v1/judge", {"answer": GROUNDED}, ["body", "context"]),
    ("/v1/judge", {"answer": 3, "context": CONTEXT}, ["body", "answer"]),
    ("/v1/judge", {"answer": GROUNDED, "context": CONTEXT, "question": ["q"]}, ["body", "question"]),
    ("/v1/judge", {"answer": GROUNDED, "context": ["  ", ""]}, ["body", "context"]),
    ("/v1/judge", {"answer": GROUNDED, "context": []}, ["body", "context"]),
    ("/v1/judge", {"answer": GROUNDED, "context": CONTEXT, "judge": "nli"}, ["body", "judge"]),
    ("/v1/judge", {"answer": GROUNDED, "context": CONTEXT, "answr": "typo"}, ["body", "answr"]),
    ("/v1/judge", ["not", "an", "object"], ["body"]),
    ("/v1/judge/batch", [], ["body"]),
    ("/v1/judge/batch", [{"answer": GROUNDED, "context": CONTEXT}, {"answer": GROUNDED}], ["body", 1, "context"]),
    ("/v1/judge/batch", {"answer": GROUNDED, "context": CONTEXT}, ["body"]),
    ("/v1/evaluate_factual_consistency", {"generated_text": GROUNDED}, ["body", "source_texts"]),
    ("/v1/evaluate_factual_consistency", {"generated_text": 1.5, "source_texts": [CONTEXT]},
     ["body", "generated_text"]),
])
def test_bad_input_is_422_naming_the_field(local_service, path, body, loc):
    service, _ = local_service
    response = post(service, path, body)
    assert response.status_code == 422, response.text
    error = response.json()
    assert any(d["loc"][:len(loc)] == loc for d in error["detail"]), error
    assert error["error"].startswith(".".join(map(str, loc)))


def test_bad_json_is_422(local_service):
    service, _ = local_service
    response = httpx.post(f"{service.url}/v1/judge", content=b'{"answer": "x", "context": ',
                          headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert response.json()["detail"][0]["type"] == "json_invalid"
    assert response.json()["detail"][0]["loc"][0] == "body"
    not_text = httpx.post(f"{service.url}/v1/judge", content=b"\xff\xfe\x00{", headers={"content-type": "application/json"})
    assert not_text.status_code == 422 and not_text.json()["detail"][0]["loc"][0] == "body"


def test_body_over_the_cap_is_413_announced_or_streamed(local_service):
    service, _ = local_service
    big = {"answer": GROUNDED, "context": "x" * 30_000}
    assert post(service, "/v1/judge", big).status_code == 413

    def chunks():
        for _ in range(30):
            yield b"x" * 1000

    streamed = httpx.post(f"{service.url}/v1/judge", content=chunks(), headers={"content-type": "application/json"})
    assert streamed.status_code == 413 and "body over" in streamed.json()["error"]
    assert post(service, "/v1/judge", {"answer": GROUNDED, "context": "y" * 15_000}).status_code == 200


# --- token


@pytest.mark.slow
def test_bearer_token_when_set(tmp_path):
    secret = "s3cret-token-value"
    service = ServeProcess(["--judge", "quip", "--token-env", "GJ_TEST_TOKEN", "--log-level", "info"],
                           log=tmp_path / "serve.log", env={"GJ_TEST_TOKEN": secret})
    body = {"answer": GROUNDED, "context": CONTEXT}
    with service:
        assert httpx.get(f"{service.url}/healthz").status_code == 200   # the probe stays open
        missing = post(service, "/v1/judge", body)
        assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
        assert post(service, "/v1/judge", body, headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert post(service, "/v1/judge", body, headers={"Authorization": secret}).status_code == 401
        assert httpx.get(f"{service.url}/metrics").status_code == 401
        good = post(service, "/v1/judge", body, headers={"Authorization": f"Bearer {secret}"})
        assert good.status_code == 200 and good.json()["label"] == "grounded"
    assert secret not in service.output()


def test_token_env_that_is_unset_is_refused(monkeypatch):
    from groundjudge.cli import build_parser
    from groundjudge.cli.serve import serve_settings
    from groundjudge.errors import UsageError

    monkeypatch.delenv("GJ_NO_SUCH_TOKEN_VAR", raising=False)
    args = build_parser().parse_args(["serve", "--judge", "quip", "--token-env", "GJ_NO_SUCH_TOKEN_VAR"])
    with pytest.raises(UsageError, match="not set"):
        serve_settings(args)
    monkeypatch.setenv("GJ_NO_SUCH_TOKEN_VAR", "abc")
    settings = serve_settings(args)
    assert settings.token.get_secret_value() == "abc" and "abc" not in repr(settings)


# --- an LLM judge: real calls to the scripted server, the queue bound and the time limit


@pytest.mark.slow
def test_past_the_queue_is_503_with_retry_after_and_past_the_limit_504(tmp_path, llm_server):
    llm_server.set_responder(delayed_oracle(8.0))
    args = ["--judge", llm_spec(llm_server), "--no-cache", "--max-queue", "2", "--retry-after-s", "3",
            "--timeout-s", "4"]
    with ServeProcess(args, log=tmp_path / "serve.log") as service:
        async def load():
            async with httpx.AsyncClient(base_url=service.url, timeout=30) as client:
                slow = [asyncio.create_task(client.post("/v1/judge", json={"answer": f"{GROUNDED} {i}",
                                                                          "context": CONTEXT})) for i in range(2)]
                deadline = time.monotonic() + 3
                while (await client.get("/healthz")).json()["in_flight"] < 2:   # until both hold their places
                    assert time.monotonic() < deadline, "the slow requests were not admitted"
                    await asyncio.sleep(0.02)
                refused = await client.post("/v1/judge", json={"answer": GROUNDED, "context": CONTEXT})
                batch = await client.post("/v1/judge/batch", json=[{"answer": GROUNDED, "context": CONTEXT}])
                return refused, batch, await asyncio.gather(*slow)

        refused, batch, slow = asyncio.run(load())
        assert refused.status_code == 503 and refused.headers["retry-after"] == "3"
        assert "queue is full" in refused.json()["error"] and batch.status_code == 503
        assert [r.status_code for r in slow] == [504, 504]
        assert "longer than 4 s" in slow[0].json()["error"]
        metrics = httpx.get(f"{service.url}/metrics").text
        assert 'groundjudge_errors_total{route="/v1/judge",status="503"} 1.0' in metrics
        assert 'groundjudge_errors_total{route="/v1/judge",status="504"} 2.0' in metrics


# --- SIGTERM under load


@pytest.mark.slow
def test_sigterm_answers_every_accepted_request_and_leaves_records_whole_llm_and_local(tmp_path, llm_server):
    llm_server.set_responder(delayed_oracle(1.5))
    run = tmp_path / "run"
    args = ["--judge", llm_spec(llm_server), "--judge", "quip", "--no-cache", "--record", str(run)]
    service = ServeProcess(args, log=tmp_path / "serve.log").start()
    n = 24

    async def load():
        async with httpx.AsyncClient(base_url=service.url, timeout=60,
                                     limits=httpx.Limits(max_connections=64)) as client:
            async def one(i: int):
                body = {"answer": f"{GROUNDED} Item {i}.", "context": CONTEXT,
                        "judge": "quip" if i % 4 == 0 else None}
                try:
                    return await client.post("/v1/judge", json=body)
                except httpx.HTTPError as err:   # not accepted: refused or closed before it was read
                    return err
            tasks = [asyncio.create_task(one(i)) for i in range(n)]
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:   # until the LLM requests are in flight
                if (await client.get("/healthz")).json()["in_flight"] >= n - n // 4:
                    break
                await asyncio.sleep(0.02)
            service.terminate()
            late = await one(n)   # after SIGTERM: refused, never half-answered
            return await asyncio.gather(*tasks), late

    try:
        answers, late = asyncio.run(load())
        assert service.wait(60) == 0, service.output()
    finally:
        service.stop()
    ok = [a for a in answers if isinstance(a, httpx.Response) and a.status_code == 200]
    assert len(ok) == n, [getattr(a, "status_code", a) for a in answers]
    llm = [a.json() for i, a in enumerate(answers) if i % 4]
    assert all(v["path"].startswith("llm:") and v["cost_usd"] > 0 for v in llm), llm[0]
    assert len(llm_server.requests) >= len(llm)   # real calls to the scripted server
    assert not isinstance(late, httpx.Response) or late.status_code in (200, 503)
    lines = (run / "records.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]   # every line parses
    assert records[0]["kind"] == "header" and records[0]["eval_split"] == "served"
    results = [r for r in records[1:] if r["kind"] == "result"]
    answered = len(ok) + (isinstance(late, httpx.Response) and late.status_code == 200)
    assert len(results) == len(records) - 1 == answered
    assert {r["judge"] for r in results} == {"quip", llm_spec(llm_server)}
    assert (run / "summary.json").is_file()


def test_records_are_a_run_folder_that_summarize_reads(local_service, tmp_path):
    from groundjudge.runs.records import read_records

    service, run = local_service
    post(service, "/v1/judge", {"answer": GROUNDED, "context": CONTEXT, "question": "When?"})
    records = read_records(run / "records.jsonl")
    assert records.header.dataset.files == ("served",)
    assert [s.spec for s in records.header.judges] == ["quip", "cosine"]
    last = records.results[-1]
    assert last.example.question == "When?" and last.example.context == (CONTEXT,)
    assert last.result.verdict.label == "grounded"


# --- the batch paths and the batcher, in process


def tiny_nli_model(path) -> str:
    """A randomly initialised 2-layer BERT NLI model with the MiniLM tokenizer (probabilities that vary)."""
    from groundjudge.testing.tiny_models import tiny_nli_model as build

    return build(path)


def served_examples():
    from groundjudge.types import Example

    answers = [GROUNDED, MIXED, "The moon is made of cheese. It is far away.", "", "Yes.",
               "A landlord who fails owes twice the deposit. The tenancy ends in spring."]
    return [Example(id=f"e{i}", context=(CONTEXT, "Section 13. Rent is due monthly."), answer=answer)
            for i, answer in enumerate(answers)]


@pytest.mark.parametrize("spec", ["cosine", "nli:model={model},device=cpu,threshold=0.4"])
def test_batch_paths_give_what_the_judge_gives_one_at_a_time(tmp_path, spec):
    from groundjudge.judges.config import JudgeConfig
    from groundjudge.runs.local_chunks import batch_scorer as batch_path   # the service's batch path is the run's

    if "{model}" in spec:
        spec = spec.format(model=tiny_nli_model(tmp_path / "nli"))
    judge = JudgeConfig.from_spec(spec).build()
    examples = served_examples()
    batched = batch_path(judge)(examples)
    if judge.name == "cosine":   # its contexts now cached: once more, from the cache
        again = [s.score for s in batch_path(judge)(examples)]
        assert again == pytest.approx([s.score for s in batched], abs=1e-5)
        judge = JudgeConfig.from_spec(spec).build()   # a fresh cache for the judge's own path
    for example, together in zip(examples, batched):
        alone = judge.score(example)
        assert together.abstain_reason == alone.abstain_reason
        assert together.score == pytest.approx(alone.score, abs=1e-5)
        assert [(c.claim, c.label, c.evidence) for c in together.claims] == \
               [(c.claim, c.label, c.evidence) for c in alone.claims]
        assert [c.score for c in together.claims] == pytest.approx([c.score for c in alone.claims], abs=1e-5)


def test_judges_without_a_batch_path_are_judged_on_their_own(llm_server):
    from groundjudge.judges.config import JudgeConfig
    from groundjudge.llm.service_options import LLMOptions
    from groundjudge.runs.local_chunks import batch_scorer as batch_path
    from groundjudge.runs.micro_batches import BatchSettings
    from groundjudge.serve.loading import load_judges

    judges = load_judges([llm_spec(llm_server), "quip", "span"], LLMOptions(no_cache=True), BatchSettings())
    assert [j.batcher is not None for j in judges.judges] == [False, False, False]   # quip: no model to batch
    assert batch_path(JudgeConfig.from_spec("cosine").build()) is not None
    assert judges.pick("span").kind == "span" and judges.pick(None).kind == "direct"


@dataclasses.dataclass(frozen=True)
class PathedQuip(QuipJudge):
    """quip with the ``path()`` a judge with a batch path has (quip's own has none: it is not batched)."""

    def path(self) -> str:
        return f"local:quip(n={self.n})"


def test_the_batcher_gathers_concurrent_requests_into_one_call():
    from groundjudge.runs.micro_batches import BatchSettings, MicroBatcher

    judge = PathedQuip()
    calls = []

    def counting(examples):
        calls.append(len(examples))
        time.sleep(0.05)   # a model call: the next requests gather meanwhile
        return [judge.score(example) for example in examples]

    async def run():
        batcher = MicroBatcher(judge, counting, BatchSettings(max_wait_s=0.005, max_batch=8))
        batcher.start()
        results = await asyncio.gather(*(batcher.submit(example) for example in served_examples() * 3))
        await batcher.stop()
        return results

    results = asyncio.run(run())
    assert sum(calls) == 18 and max(calls) == 8 and len(calls) <= 4
    assert [r.verdict.example_id for r in results] == [e.id for e in served_examples() * 3]
    assert results[0].verdict.path == "local:quip(n=21)" and results[0].batch_size >= 1
    assert results[3].verdict.label == "abstain"   # the empty answer, as quip's own judge says


def test_a_failing_batch_answers_every_request_with_an_abstention():
    from groundjudge.runs.micro_batches import MicroBatcher

    def broken(examples):
        raise RuntimeError("model fell over")

    async def run():
        batcher = MicroBatcher(PathedQuip(), broken)
        batcher.start()
        results = await asyncio.gather(*(batcher.submit(example) for example in served_examples()[:3]))
        await batcher.stop()
        return results

    results = asyncio.run(run())
    assert {r.verdict.abstain_reason for r in results} == {"judge_error: RuntimeError: model fell over"}


@pytest.mark.slow
def test_concurrent_requests_are_batched_by_the_service(local_service):
    service, _ = local_service

    async def load():
        async with httpx.AsyncClient(base_url=service.url, timeout=60) as client:
            bodies = [{"answer": f"{GROUNDED} Clause {i}.", "context": CONTEXT, "judge": "cosine"} for i in range(24)]
            return await asyncio.gather(*(client.post("/v1/judge", json=body) for body in bodies))

    answers = asyncio.run(load())
    assert {a.status_code for a in answers} == {200}
    metrics = httpx.get(f"{service.url}/metrics").text
    count = float(metrics.split('groundjudge_batch_size_count{judge="cosine"} ')[1].split()[0])
    total = float(metrics.split('groundjudge_batch_size_sum{judge="cosine"} ')[1].split()[0])
    assert total > count   # some batch held more than one request
