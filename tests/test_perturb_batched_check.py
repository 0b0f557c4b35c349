"""``perturb --check`` with a local judge that has a batch path: the candidates of the answers worked on at once
are judged together in one model call (the service's micro-batcher), and every row, rejection and check verdict is
the one the judge gives each candidate on its own."""

from __future__ import annotations

import pytest
from test_local_chunks import minilm_nli

from groundjudge.perturb import JudgeCheck, perturb
from groundjudge.runs.local_chunks import batch_scorer
from groundjudge.types import Example

CONTEXT = ("Section 12. (1) The landlord shall return the deposit within 21 days after the tenancy ends. "
           "(2) A landlord who fails to do so is liable for twice the deposit. (3) The tenant must give notice "
           "in writing before the lease ends.")
ANSWERS = ("The landlord must return the deposit within 21 days after the tenancy ends.",
           "A landlord who fails to return the deposit is liable for twice the deposit.",
           "The tenant must give notice in writing before the lease ends.",
           "Under section 12 the landlord shall return the deposit within 21 days.")


@pytest.fixture(scope="module")
def nli_spec(tmp_path_factory) -> str:
    """The nli judge on MiniLM with a fresh head: its answer scores here spread over about 0.19-0.22, so the
    threshold keeps some candidates and drops others."""
    model = minilm_nli(tmp_path_factory.mktemp("nli") / "m")
    return f"nli:model={model},device=cpu,dtype=float32,answer_score=entailment,threshold=0.2"


def sources() -> list[Example]:
    return [Example(id=f"a{i}", context=(CONTEXT,), question="What does section 12 say?", answer=answer,
                    label="grounded") for i, answer in enumerate(ANSWERS * 3)]


def test_a_batched_check_keeps_every_row_and_verdict_of_the_one_by_one_check(nli_spec):
    batched = JudgeCheck.build(nli_spec)
    assert batch_scorer(batched.judge) is not None and batched.concurrency > 1
    reference = JudgeCheck.build(nli_spec, batched=False)
    got = perturb(sources(), check=batched, per_answer=2)
    want = perturb(sources(), check=reference, per_answer=2)
    assert [r.id for r in got.examples] == [r.id for r in want.examples]
    assert [r.answer for r in got.examples] == [r.answer for r in want.examples]
    assert [(r.reason, r.text) for r in got.rejections] == [(r.reason, r.text) for r in want.rejections]
    assert {r.reason for r in want.rejections} & {"supported:nli"}, "the check must drop some candidates"
    kept = [r.meta["perturbation"]["check"] for r in got.examples if r.meta["perturbation"]["kind"] == "variant"]
    ref = [r.meta["perturbation"]["check"] for r in want.examples if r.meta["perturbation"]["kind"] == "variant"]
    assert kept and [k["label"] for k in kept] == [k["label"] for k in ref]
    assert [k["score"] for k in kept] == pytest.approx([k["score"] for k in ref], abs=1e-6)
    sizes = batched.batch_sizes
    assert reference.concurrency == 1 and not reference.batch_sizes
    assert sum(sizes) == reference.checked == batched.checked and max(sizes) > 1   # the same candidates, judged several at a time


def test_a_check_is_usable_again_on_a_new_event_loop(nli_spec):
    check = JudgeCheck.build(nli_spec)
    first = perturb(sources()[:4], check=check)
    second = perturb(sources()[:4], check=check)   # its batcher was stopped with the first loop
    assert [r.answer for r in first.examples] == [r.answer for r in second.examples]
    assert check._batcher is None
