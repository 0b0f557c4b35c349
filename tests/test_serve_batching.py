"""The service's micro-batches go through a run's chunk path (:func:`groundjudge.runs.local_chunks.judge_chunk`):
a request whose example raises abstains alone, each request's latency is its share of its batch (the batch's size
recorded, its wait for the batch apart), and every judge kind with a batch path in runs is batched (crossencoder
with its card's input)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time

import pytest

from groundjudge.judges.quip import QuipJudge
from groundjudge.runs.local_chunks import batch_scorer
from groundjudge.runs.micro_batches import BatchSettings, MicroBatcher
from groundjudge.types import Example

CONTEXT = ("Residential Tenancies Act, Section 12. A landlord must return the security deposit within 30 days "
           "after the tenancy ends. A landlord who fails to do so owes the tenant twice the deposit.")
ANSWERS = ["A landlord must return the security deposit within 30 days after the tenancy ends.",
           "The moon is made of cheese. It is far away.", "", "Yes.",
           "A landlord who fails owes twice the deposit. The tenancy ends in spring."]


def examples() -> list[Example]:
    return [Example(id=f"e{i}", context=(CONTEXT, "Section 13. Rent is due monthly."), answer=answer)
            for i, answer in enumerate(ANSWERS)]


@dataclasses.dataclass(frozen=True)
class BatchedQuip(QuipJudge):
    """quip given a batch path (its ``score`` is its ``score_batch`` of one, as a model-backed judge's is): a
    batch holding an answer with "boom" raises, as a model call that one input breaks would."""

    def score_batch(self, batch):
        if any("boom" in example.answer for example in batch):
            raise RuntimeError("boom: this input breaks the model")
        return [QuipJudge.score(self, example) for example in batch]

    def score(self, example):
        return self.score_batch([example])[0]

    def path(self) -> str:
        return f"local:quip(n={self.n})"


WAITING = BatchSettings(max_wait_s=0.05, max_batch=32)
"""Long enough a wait that requests submitted together form one batch."""


def batched(judge, batch, settings=WAITING, scorer=None):
    """Submit ``batch`` to a fresh batcher of ``judge`` all at once; the results and the batcher."""
    async def run():
        batcher = MicroBatcher(judge, scorer or batch_scorer(judge), settings)
        batcher.start()
        results = await asyncio.gather(*(batcher.submit(example) for example in batch))
        await batcher.stop()
        return results, batcher

    return asyncio.run(run())


def test_a_request_whose_example_raises_abstains_alone():
    judge = BatchedQuip()
    assert batch_scorer(judge) is not None
    batch = examples()
    batch.insert(2, Example(id="bad", context=(CONTEXT,), answer="It went boom."))
    results, batcher = batched(judge, batch)
    assert batcher.batches == 1 and batcher.batch_sizes == [len(batch)]   # one batch, scored again one by one
    reasons = {r.verdict.example_id: r.verdict.abstain_reason for r in results}
    assert reasons["bad"] == "judge_error: RuntimeError: boom: this input breaks the model"
    assert [r.verdict.example_id for r in results] == [e.id for e in batch]
    for example, result in zip(batch, results):
        if example.id == "bad":
            continue
        alone = asyncio.run(judge.judge(example)).verdict
        assert (result.verdict.label, result.verdict.score, result.verdict.path) == \
               (alone.label, alone.score, alone.path)
        assert not (result.verdict.abstain_reason or "").startswith("judge_error")


def test_each_request_s_latency_is_its_share_of_the_batch_and_its_wait_is_apart():
    judge = BatchedQuip()
    calls = []

    def slow(batch):
        calls.append(len(batch))
        time.sleep(0.05)   # a model call
        return judge.score_batch(batch)

    batch = examples()[:4]
    results, _ = batched(judge, batch, BatchSettings(max_wait_s=0.05, max_batch=2), scorer=slow)
    assert calls == [2, 2]
    for result in results:
        assert result.batch_size == 2
        assert result.latency_s == pytest.approx(result.timings["chunk_s"] / 2)   # the share, not the batch
        assert result.latency_s < result.timings["chunk_s"]
        assert result.timings["queue_s"] >= 0
    first, second = results[:2], results[2:]
    assert first[0].started_at == first[1].started_at and first[0].finished_at == first[1].finished_at
    # the second batch waited for the first (one batch at a time): its requests' queue_s holds that wait,
    # their latency does not
    assert all(r.timings["queue_s"] >= first[0].timings["chunk_s"] for r in second)
    assert all(r.latency_s < r.timings["queue_s"] for r in second)


@pytest.mark.slow
def test_crossencoder_is_batched_by_the_service_with_its_card_s_input(tmp_path):
    pytest.importorskip("prometheus_client")
    from test_serve import tiny_nli_model

    from groundjudge.judges import build_judge
    from groundjudge.llm.service_options import LLMOptions
    from groundjudge.serve.app import ROUTES
    from groundjudge.serve.judging import Judging
    from groundjudge.serve.loading import load_judges
    from groundjudge.serve.metrics import ServiceMetrics

    model = tiny_nli_model(tmp_path / "card")
    (tmp_path / "card" / "groundjudge_card.json").write_text(json.dumps(
        {"input": {"premise": "top-k sentences"}, "recipe": "pairs", "max_length": 96, "tau": 0.3}))
    spec = f"crossencoder:model={model},dtype=float32"
    judges = load_judges([spec], LLMOptions(), WAITING)
    (served,) = judges.judges
    assert served.batcher is not None
    judging = Judging(judges=judges, metrics=ServiceMetrics(ROUTES), timeout_s=120)
    batch = examples()

    async def run():
        served.batcher.start()
        results = await asyncio.gather(*(judging.judge_example(served, example) for example in batch))
        await served.batcher.stop()
        return results

    results = asyncio.run(run())
    assert served.batcher.batches == 1 and {r.batch_size for r in results} == {len(batch)}
    alone, _ = build_judge(spec)
    for example, result in zip(batch, results):
        own = asyncio.run(alone.judge(example)).verdict
        assert (result.verdict.label, result.verdict.path) == (own.label, own.path)
        assert result.verdict.score == pytest.approx(own.score, abs=1e-5)
        assert result.latency_s == pytest.approx(result.timings["chunk_s"] / len(batch))
