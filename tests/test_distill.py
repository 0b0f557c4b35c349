"""Distilling an LLM judge into a local cross-encoder (`groundjudge train --teacher`), with the scripted server as
the teacher: the student learns the teacher's claim verdicts (never gold labels), the teacher's calls are cached and
capped, and the card says what the teacher cost and how far the student agrees with it on held-out documents."""

from __future__ import annotations

import json

import pytest
from conftest import cli, rent_rows, write_jsonl
from test_train import machine_paths, tiny_base  # noqa: F401  (the fixture)

from groundjudge.local_nli.pairs import Pair
from groundjudge.local_nli.train_loop import pair_target
from groundjudge.runs.distill import sample_answers
from groundjudge.types import Example


def teacher(server, extra: str = "") -> str:
    spec = (f"claims:model=openai/gpt-4o-mini,api_base={server.openai_base},timeout=5,against=context,"
            "threshold=1.0,input_cost_per_mtok=1000,output_cost_per_mtok=1000")
    return spec + ("," + extra if extra else "")


def wrong_gold_rows(n: int = 10) -> list[dict]:
    """rent_rows with every gold label flipped: a student that learnt gold would learn the opposite."""
    rows = rent_rows(n)
    for row in rows:
        row["label"] = "ungrounded" if row["label"] == "grounded" else "grounded"
    return rows


def pairs_of(out) -> list[dict]:
    return [json.loads(line) for line in (out / "pairs" / "train.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_the_student_learns_the_teachers_verdicts_and_the_card_says_what_they_cost(tmp_path, tiny_base, llm_server):
    data = write_jsonl(tmp_path / "d.jsonl", wrong_gold_rows())
    out = tmp_path / "student"
    cli("train", str(data), "--teacher", teacher(llm_server), "--base", str(tiny_base), "--out", str(out),
        "--epochs", "2", "--batch-size", "4", "--dev-fraction", "0.3", "--quiet")
    pairs = pairs_of(out)
    assert pairs and {p["source"] for p in pairs} == {"teacher-claims"}
    by_claim = {p["hypothesis"]: p["label"] for p in pairs}
    # the teacher (the oracle) supports the rent sentences and not the invented ones, whatever gold says
    assert all(label == "supported" for claim, label in by_claim.items() if claim.startswith("Rent of"))
    assert all(label == "unsupported" for claim, label in by_claim.items() if claim.startswith("Tenants may"))
    card = json.loads((out / "groundjudge_card.json").read_text())
    facts = card["teacher"]
    assert facts["spec"].startswith("claims:") and facts["mode"] == "claims"
    assert facts["labelled"] == facts["answers"] > 0 and facts["calls_made"] == facts["calls"] > 0
    assert facts["cost_usd"] > 0 and facts["input_tokens"] > 0
    agree = facts["student_vs_teacher_on_dev"]
    assert agree["n"] == len(facts["dev_ids"]) > 0 and 0.0 <= agree["agreement"] <= 1.0
    assert agree["student_latency_s_per_answer"] > 0
    # dev answers are of documents the student never trained on
    groups = json.loads((out / "pairs" / "groups.json").read_text())
    assert not set(groups["train"]) & set(groups["dev"])
    assert "## Teacher" in (out / "README.md").read_text() and machine_paths(card) == []
    assert (out / "teacher" / "records.jsonl").exists() and (out / "student_on_dev" / "records.jsonl").exists()


@pytest.mark.slow
def test_a_resumed_distillation_makes_no_new_teacher_calls(tmp_path, tiny_base, llm_server):
    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(6))
    out = tmp_path / "student"
    common = ("train", str(data), "--teacher", teacher(llm_server), "--base", str(tiny_base), "--out", str(out),
              "--batch-size", "4", "--quiet")
    cli(*common, "--stop-after", "1")
    sent = len(llm_server.requests)
    assert sent > 0 and not (out / "groundjudge_card.json").exists()
    cli(*common, "--resume")
    assert (out / "groundjudge_card.json").exists()
    student_calls = 0   # the student is local: its run on dev makes no LLM call
    assert len(llm_server.requests) == sent + student_calls
    assert "not empty" in cli(*common, check=False).stderr


@pytest.mark.slow
def test_the_budget_caps_the_teachers_spend(tmp_path, tiny_base, llm_server):
    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(10))
    out = tmp_path / "student"
    cli("train", str(data), "--teacher", teacher(llm_server, "concurrency=1"), "--teacher-budget", "0.5",
        "--base", str(tiny_base), "--out", str(out), "--batch-size", "4", "--quiet", check=False)
    facts = json.loads((out / "pairs" / "meta.json").read_text())["teacher"]
    assert facts["budget_usd"] == 0.5 and facts["abstained"].get("budget", 0) > 0
    assert facts["labelled"] < facts["answers"]


@pytest.mark.slow
def test_soft_mode_keeps_the_teachers_probability(tmp_path, tiny_base, llm_server):
    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(6))
    out = tmp_path / "student"
    cli("train", str(data), "--teacher", teacher(llm_server, "score=logprobs,threshold=0.5"), "--teacher-mode", "soft",
        "--base", str(tiny_base), "--out", str(out), "--epochs", "1", "--batch-size", "4", "--quiet")
    pairs = pairs_of(out)
    assert pairs and all(0.0 < p["support"] < 1.0 for p in pairs)
    assert all((p["support"] >= 0.5) == (p["label"] == "supported") for p in pairs)
    assert len({round(p["support"], 3) for p in pairs}) > 1


def test_a_soft_pair_target_spreads_its_probability_over_the_head():
    pair = Pair(premise="p", hypothesis="h", label="supported", source="teacher-soft", group="g", support=0.8)
    assert pair_target(pair, {0: "unsupported", 1: "supported"}) == pytest.approx([0.2, 0.8])
    assert pair_target(pair, {0: "entailment", 1: "neutral", 2: "contradiction"}) == pytest.approx([0.8, 0.1, 0.1])
    hard = Pair(premise="p", hypothesis="h", label="unsupported", source="diff", group="g")
    assert pair_target(hard, {0: "unsupported", 1: "supported"}) == [1.0, 0.0]


def test_the_teacher_sample_is_seeded_and_proportional():
    train = [Example(id=f"t{i}", context=("c",), answer="a") for i in range(80)]
    dev = [Example(id=f"d{i}", context=("c",), answer="a") for i in range(20)]
    a = sample_answers(train, dev, 10, seed=0)
    assert (len(a[0]), len(a[1])) == (8, 2) and a == sample_answers(train, dev, 10, seed=0)
    assert sample_answers(train, dev, 0, seed=0) == (train, dev)


def test_a_teacher_alone_refuses_a_gold_recipe(tmp_path, llm_server):
    # (--synthetic, --from-documents, --nli-mix or --weight with a teacher make a mixed set: tests/test_train_mix.py)
    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(3))
    result = cli("train", str(data), "--teacher", teacher(llm_server), "--recipe", "diff", "--out",
                 str(tmp_path / "m"), check=False)
    assert result.returncode == 2 and "--teacher alone trains on the teacher's verdicts only" in result.stderr
    assert not (tmp_path / "m").exists()
