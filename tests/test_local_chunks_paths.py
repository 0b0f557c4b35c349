"""Tune, replay, distillation and ``run --batch`` rounds hand local judges their answers in chunks through the run's
path (:mod:`groundjudge.runs.local_chunks`), with the verdicts and scores of one answer at a time (to 1e-6 in
float32).

The models and answers are those of tests/test_local_chunks.py: every local kind with a batch path.
"""

from __future__ import annotations

import json
import shutil
from types import SimpleNamespace

import pytest
from conftest import rent_rows, write_jsonl
from test_local_chunks import examples, local_specs, models, pinned  # noqa: F401  (models: the fixture)
from test_tune import _Memory

from groundjudge import evaluate
from groundjudge.cli import main
from groundjudge.judges.config import JudgeConfig
from groundjudge.llm import LLMService
from groundjudge.runs import distill
from groundjudge.runs.records import read_records
from groundjudge.tune import evaluate as tune_evaluate
from groundjudge.tune.evaluate import Evaluator


def chunk_sizes(answers: int, size: int) -> list[int]:
    """The sizes of the chunks ``answers`` answers are cut into: full ones and the rest."""
    return [size] * (answers // size) + ([answers % size] if answers % size else [])


def assert_same(a, b, key) -> None:
    """The same label and score (to 1e-6) of two results or verdicts of one answer."""
    assert a.label == b.label, key
    assert (a.score is None) == (b.score is None), key
    if a.score is not None:
        assert a.score == pytest.approx(b.score, abs=1e-6), key


@pytest.mark.slow
def test_tune_judges_local_answers_in_chunks_with_the_scores_of_one_at_a_time(models, monkeypatch):
    sizes: list[int] = []
    real = tune_evaluate.judge_chunk

    def counted(judge, scorer, chunk):
        sizes.append(len(chunk))
        return real(judge, scorer, chunk)

    monkeypatch.setattr(tune_evaluate, "judge_chunk", counted)
    data = examples()
    for spec in local_specs(models):
        config = JudgeConfig.from_spec(spec)
        sizes.clear()
        chunked = Evaluator(LLMService(), _Memory(), local_chunk=3).judge(config, "select", data)
        assert sorted(sizes) == sorted(chunk_sizes(len(data), 3)), spec
        sizes.clear()
        alone = Evaluator(LLMService(), _Memory(), local_chunk=1).judge(config, "select", data)
        assert sizes == [1] * len(data), spec
        assert set(chunked) == set(alone) == {ex.id for ex in data}
        for example in data:
            assert chunked[example.id].label != "abstain" or chunked[example.id].abstain_reason != "budget", spec
            assert_same(chunked[example.id], alone[example.id], (spec, example.id))
        assert len({round(r.score or 0.0, 6) for r in chunked.values()}) > 1, spec   # scores vary: a real check


def test_tune_refuses_a_chunk_size_below_one_in_one_line(tmp_path, capsys):
    tune = tmp_path / "tune.toml"
    tune.write_text('[data]\nfiles = ["d.jsonl"]\n\n[judges.cosine]\nkind = "cosine"\n\n[tune]\njudge = "cosine"\n'
                    'max_calls = 1\n', encoding="utf-8")
    assert main(["tune", str(tune), "--local-chunk", "0", "--out", str(tmp_path / "out")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "--local-chunk" in lines[0] and ">= 1" in lines[0] and "got 0" in lines[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_replay_rejudges_local_judges_in_the_runs_chunks_or_one_at_a_time(models, tmp_path):
    specs, data = local_specs(models), examples()
    run = tmp_path / "run"
    evaluate(data, specs, out=run, local_chunk=3, dev_fraction=0)
    original = {(r.judge, r.example.id): r.result for r in read_records(run / "records.jsonl").results}
    assert main(["replay", str(run), "--out", str(tmp_path / "same"), "--quiet"]) == 0   # nothing differs
    assert main(["replay", str(run), "--out", str(tmp_path / "alone"), "--local-chunk", "1", "--quiet"]) == 0
    for name, sizes in (("same", {2, 3}), ("alone", {1})):
        replayed = {(r.judge, r.example.id): r.result
                    for r in read_records(tmp_path / name / "records.jsonl").results}
        assert set(replayed) == set(original) == {(spec, ex.id) for spec in specs for ex in data}
        for key, result in replayed.items():
            assert_same(result.verdict, original[key].verdict, (name, key))
            assert [c.label for c in result.verdict.claims] == [c.label for c in original[key].verdict.claims]
        assert {result.batch_size for result in replayed.values()} == sizes, name
    assert main(["replay", str(run), "--out", str(tmp_path / "bad"), "--local-chunk", "0", "--quiet"]) == 2



@pytest.mark.slow
def test_batch_rounds_judge_local_answers_in_chunks_with_the_scores_of_one_at_a_time(models, llm_server, tmp_path,
                                                                                      monkeypatch):
    """``run --batch``: the LLM judge goes in provider-batch rounds, the local judges beside it in chunks as in a
    plain run (``batch_size`` recorded), with the verdicts and scores of ``--local-chunk 1``."""
    from test_batch_api import KEY, KEY_ENV, claims

    monkeypatch.setenv(KEY_ENV, KEY)
    data, specs, llm = examples(), local_specs(models), claims(llm_server)
    found = {}
    for name, chunk in (("chunked", 3), ("alone", 1)):
        run = evaluate(data, [llm, *specs], out=tmp_path / name, local_chunk=chunk, dev_fraction=0, batch=True,
                       batch_poll_s=0.001, cache_dir=str(tmp_path / f"cache-{name}"))
        found[name] = {(r.judge, r.example.id): r.result for r in run.records.results}
    assert [e.kind for e in llm_server.batches.events].count("create") == 4   # two stages, two runs: in batches
    assert set(found["chunked"]) == set(found["alone"]) == {(s, ex.id) for s in [llm, *specs] for ex in data}
    for key, result in found["chunked"].items():
        assert_same(result.verdict, found["alone"][key].verdict, key)
    for spec in specs:
        sizes = [found["chunked"][(spec, ex.id)].batch_size for ex in data]
        assert sorted(sizes) == sorted(size for size in chunk_sizes(len(data), 3) for _ in range(size)), spec
        assert {found["alone"][(spec, ex.id)].batch_size for ex in data} == {1}, spec

@pytest.mark.slow
def test_the_students_dev_verdicts_are_those_of_one_answer_at_a_time(models, tmp_path):
    """distill's student evaluation (student_agreement) judges the dev answers as a run, in chunks."""
    data = examples()
    students, agreements = {}, {}
    for name, chunk in (("chunked", 3), ("alone", 1)):
        out = tmp_path / name
        shutil.copytree(models["card"], out)   # the trained student: a cross-encoder with its card
        distill.run_judge(data, pinned("cosine"), out / distill.TEACHER_DIR, quiet=True)   # the teacher's verdicts
        cfg = SimpleNamespace(out=str(out), quiet=True)
        agreements[name] = distill.student_agreement(cfg, {ex.id for ex in data},
                                                     student=f"crossencoder:model={out},dtype=float32",
                                                     local_chunk=chunk)
        students[name] = {r.example.id: r.result
                          for r in read_records(out / distill.STUDENT_DIR / "records.jsonl").results}
    assert set(students["chunked"]) == set(students["alone"]) == {ex.id for ex in data}
    for example in data:
        assert_same(students["chunked"][example.id].verdict, students["alone"][example.id].verdict, example.id)
    assert {r.batch_size for r in students["chunked"].values()} == set(chunk_sizes(len(data), 3))
    assert {r.batch_size for r in students["alone"].values()} == {1}
    latency = "student_latency_s_per_answer"
    assert {k: v for k, v in agreements["chunked"].items() if k != latency} \
        == {k: v for k, v in agreements["alone"].items() if k != latency}
    assert agreements["chunked"]["n"] == len(data)


@pytest.mark.slow
def test_a_tune_of_a_local_judge_picks_the_same_winner_in_chunks_and_one_at_a_time(tmp_path):
    write_jsonl(tmp_path / "d.jsonl", rent_rows(20))
    tune = tmp_path / "tune.toml"
    tune.write_text('[data]\nfiles = ["d.jsonl"]\n\n[judges.cosine]\nkind = "cosine"\n'
                    + ('dtype = "float32"\n' if pinned("cosine") != "cosine" else "")
                    + '\n[tune]\njudge = "cosine"\nmax_calls = 1\nseed = 1\n\n[tune.calibration]\n'
                    'methods = ["none", "threshold", "contextual", "batch"]\n', encoding="utf-8")
    found = {}
    for name, chunk in (("chunked", "4"), ("alone", "1")):
        assert main(["tune", str(tune), "--out", str(tmp_path / name), "--local-chunk", chunk]) == 0
        found[name] = json.loads((tmp_path / name / "tune.json").read_text())
    for key in ("winner", "winner_threshold", "start", "candidates", "rungs", "test", "stopped"):
        assert close(found["chunked"][key], found["alone"][key]), key
    assert found["chunked"]["test"]["n"] > 0 and len(found["chunked"]["candidates"]) == 4


def close(a, b) -> bool:
    """The same JSON value, floats equal to 1e-6 (scores between batchings differ in float32's last digits)."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a - b) <= 1e-6
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    return a == b
