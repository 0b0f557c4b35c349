"""``groundjudge serve --engine ray`` on a real Ray cluster started in this process (a head and a worker node): the
command joins it with ``--address`` and deploys the service on Ray Serve -- quip, cosine (the on-disk MiniLM) and an
LLM judge on the scripted server with two replicas. Every route answers as the uvicorn service does (the same
OpenAPI document, the same response models), the two LLM replicas share one ``--max-cost`` budget, and the records
folder holds every verdict answered once the service is stopped. One cluster and one service for the module.
Marked ``ray``; skipped without Ray Serve (pip install -e '.[ray-serve]')."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import signal
import threading

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("ray.serve", reason="Ray Serve is not installed: pip install -e '.[ray-serve]'")

from groundjudge.llm.service_options import LLMOptions  # noqa: E402
from groundjudge.runs.records import read_records  # noqa: E402
from groundjudge.serve.app import ServeSettings, create_app  # noqa: E402
from groundjudge.serve.loading import load_judges  # noqa: E402
from groundjudge.serve.process import ServeProcess  # noqa: E402
from groundjudge.serve.schemas import (BatchResponse, ErrorResponse, FactualConsistencyResponse,  # noqa: E402
                                       HealthResponse, VerdictResponse)
from groundjudge.testing.oracle import oracle_responder  # noqa: E402
from groundjudge.testing.scripted_server import ScriptedLLMServer  # noqa: E402

pytestmark = pytest.mark.ray

NODE = {"num_cpus": 1, "object_store_memory": 100 * 1024 * 1024}
CONTEXT = ("Residential Tenancies Act, Section 12. A landlord must return the security deposit within 30 days "
           "after the tenancy ends. A landlord who fails to do so owes the tenant twice the deposit.")
GROUNDED = "A landlord must return the security deposit within 30 days after the tenancy ends."
MIXED = GROUNDED + " Tenants may also keep the keys for a year after they move out."
CALL_USD = 1.0
"""What one LLM call costs: 1,000 prompt tokens at $1,000 per million."""


@dataclasses.dataclass
class Service:
    """The running service, its records folder, its LLM judge and the verdicts it answered so far."""

    process: ServeProcess
    folder: object
    llm: str
    server: ScriptedLLMServer
    answered: int = 0

    def post(self, path: str, body) -> httpx.Response:
        """POST a JSON body, counting the verdicts answered."""
        response = httpx.post(f"{self.process.url}{path}", json=body, timeout=60)
        if response.status_code == 200:
            self.answered += len(response.json().get("results", [None])) if "batch" in path else 1
        return response


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    """A head and a worker node; the service deployed on them by ``groundjudge serve --engine ray --address``."""
    from ray.cluster_utils import Cluster

    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    folder = tmp_path_factory.mktemp("serve-ray")
    server = ScriptedLLMServer(oracle_responder).start()
    llm = (f"direct:model=openai/gpt-4o-mini,api_base={server.openai_base},timeout=60,concurrency=1,"
           f"max_attempts=1,input_cost_per_mtok=1000,output_cost_per_mtok=0")
    cluster = Cluster(initialize_head=True, head_node_args={**NODE, "include_dashboard": False})
    cluster.add_node(**NODE)
    cluster.wait_for_nodes()
    process = ServeProcess(["--engine", "ray", "--address", cluster.address, "--judge", "quip", "--judge", "cosine",
                            "--judge", llm, "--replicas", "direct=2", "--record", str(folder / "run"),
                            "--max-cost", str(1.5 * CALL_USD), "--no-cache"], log=folder / "serve.log")
    try:
        process.start(ready_within_s=300)
        yield Service(process, folder / "run", llm, server)
    finally:
        process.stop()
        cluster.shutdown()
        server.stop()
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


@pytest.mark.slow
def test_every_route_answers_as_the_uvicorn_service(service):
    local = create_app(load_judges(["quip", "cosine", service.llm], LLMOptions(no_cache=True), None),
                       ServeSettings())
    assert httpx.get(f"{service.process.url}/openapi.json").json() == local.openapi()

    body = service.post("/v1/judge", {"answer": MIXED, "context": CONTEXT}).json()
    verdict = VerdictResponse.model_validate(body)
    assert verdict.judge == "quip" and [c.label for c in verdict.claims] == ["supported", "unverifiable"]
    assert MIXED[verdict.spans[0].start:verdict.spans[0].end] == verdict.spans[0].text
    cosine = VerdictResponse.model_validate(service.post("/v1/judge", {"answer": GROUNDED, "context": [CONTEXT],
                                                                      "judge": "cosine"}).json())
    assert cosine.path.startswith("local:cosine") and cosine.label == "grounded"

    items = [{"answer": GROUNDED, "context": CONTEXT}, {"answer": "The moon is made of cheese.", "context": CONTEXT,
                                                        "judge": "cosine"}]
    batch = BatchResponse.model_validate(service.post("/v1/judge/batch", items).json())
    assert [r.judge for r in batch.results] == ["quip", "cosine"]
    assert [r.label for r in batch.results] == ["grounded", "ungrounded"]

    hhem = service.post("/v1/evaluate_factual_consistency", {"generated_text": GROUNDED, "source_texts": [CONTEXT]})
    assert FactualConsistencyResponse.model_validate(hhem.json()).score == pytest.approx(1.0)

    health = HealthResponse.model_validate(httpx.get(f"{service.process.url}/healthz").json())
    assert health.judges == ["quip", "cosine", service.llm]
    missing = service.post("/v1/judge", {"context": CONTEXT})
    assert missing.status_code == 422
    assert ErrorResponse.model_validate(missing.json()).detail[0]["loc"] == ["body", "answer"]
    unknown = service.post("/v1/judge", {"answer": GROUNDED, "context": CONTEXT, "judge": "nli"})
    assert unknown.status_code == 422 and unknown.json()["detail"][0]["type"] == "unknown_judge"
    metrics = httpx.get(f"{service.process.url}/metrics")
    assert metrics.headers["content-type"].startswith("text/plain")
    assert 'groundjudge_requests_total{route="/v1/judge",status="200"}' in metrics.text


@pytest.mark.slow
def test_two_replicas_of_an_llm_judge_share_one_budget(service):
    """The budget allows two calls ($1.5: a third may not start). Two requests at once reach the server together
    -- each replica holds one request (concurrency=1), so they are in two replicas -- and spend $2; past that,
    every replica refuses to call."""
    both_arrived = threading.Barrier(2)

    def respond(request):
        both_arrived.wait(timeout=120)   # a BrokenBarrierError (500) if only one replica called
        return dataclasses.replace(oracle_responder(request), prompt_tokens=1000, completion_tokens=0)

    service.server.set_responder(respond)
    body = {"answer": GROUNDED, "context": CONTEXT, "judge": "direct"}

    async def at_once():
        async with httpx.AsyncClient(timeout=120) as client:
            return await asyncio.gather(*(client.post(f"{service.process.url}/v1/judge", json=body)
                                          for _ in range(2)))

    first = asyncio.run(at_once())
    service.answered += 2
    service.server.set_responder(lambda request: dataclasses.replace(oracle_responder(request), prompt_tokens=1000,
                                                                     completion_tokens=0))
    verdicts = [VerdictResponse.model_validate(r.json()) for r in first]
    assert [v.abstain_reason for v in verdicts] == [None, None], [v.abstain_reason for v in verdicts]
    assert [v.cost_usd for v in verdicts] == [pytest.approx(CALL_USD)] * 2
    later = [VerdictResponse.model_validate(service.post("/v1/judge", body).json()) for _ in range(4)]
    assert all((v.abstain_reason or "").startswith("budget") and v.cost_usd == 0 for v in later), later
    assert len(service.server.requests) == 2


@pytest.mark.slow
def test_the_records_folder_holds_every_verdict_once_stopped(service):
    service.process.stop()
    assert service.process.process.returncode == 0, service.process.output()[-3000:]
    records = read_records(service.folder / "records.jsonl")
    assert [j.spec for j in records.header.judges] == ["quip", "cosine", service.llm]
    assert len(records.results) == service.answered
    assert len({r.example.id for r in records.results}) == service.answered
    summary = json.loads((service.folder / "summary.json").read_text())
    assert summary
