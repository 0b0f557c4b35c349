"""The stacked judge: a logistic regression over inner judges' scores, fitted on dev and frozen with the run."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import cli, qa_rows, rent_rows, write_jsonl

from groundjudge.judges import SpecError
from groundjudge.judges.config import JudgeConfig
from groundjudge.judges.stack import inner_score, stacked_score
from groundjudge.judges.stack_fit import C_GRID, fit_stack, impute
from groundjudge.runs.calibrate import fit_file_name
from groundjudge.runs.records import read_records

LOCAL_STACK = "stack:judges=[quip:n=8, {quip:n=4,agg=min}]"


@pytest.mark.slow
def test_the_fit_recovers_known_logistic_weights():
    rng = np.random.default_rng(7)
    true_w, true_b = np.array([3.0, -2.0, 1.5]), -0.7
    x = rng.uniform(0, 1, size=(20_000, 3))
    y = rng.uniform(size=len(x)) < 1 / (1 + np.exp(-(x @ true_w + true_b)))
    labels = ["grounded" if v else "ungrounded" for v in y]
    ids = [f"e{i}" for i in range(len(x))]
    fit = fit_stack(["a", "b", "c"], x.tolist(), labels, ids, "synthetic").fit
    assert np.allclose(fit.weights, true_w, atol=0.25), fit.weights
    assert abs(fit.intercept - true_b) < 0.25, fit.intercept
    assert fit.features == ("a", "b", "c") and fit.fitted_on == tuple(ids)
    # the judge's score is the regression's probability
    row = x[0].tolist()
    expected = 1 / (1 + math.exp(-(fit.intercept + sum(w * v for w, v in zip(fit.weights, row)))))
    assert stacked_score(fit, row) == pytest.approx(expected)


def test_C_auto_is_chosen_by_grouped_cross_validation_on_the_fit_data():
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, size=(400, 2))
    labels = ["grounded" if v else "ungrounded" for v in rng.uniform(size=400) < 1 / (1 + np.exp(-(4 * x[:, 0] - 2)))]
    ids, groups = [f"e{i}" for i in range(400)], [f"doc{i // 8}" for i in range(400)]
    fit = fit_stack(["a", "b"], x.tolist(), labels, ids, "dev", C="auto", groups=groups).fit
    assert fit.C in C_GRID and "chosen" in fit.model and fit.weights[0] > 1
    with pytest.raises(ValueError, match="at least 2 documents"):
        fit_stack(["a", "b"], x.tolist(), labels, ids, "dev", C="auto", groups=["one"] * 400)


def test_an_abstaining_inner_judge_gets_its_dev_mean_and_all_abstaining_abstains():
    matrix, means = impute([[0.2, None], [0.4, 0.9], [None, 0.5]])
    assert means == pytest.approx((0.3, 0.7)) and matrix[0, 1] == pytest.approx(0.7)
    fit = fit_stack(["a", "b"], [[0.9, None], [0.1, 0.2], [0.8, 0.7], [0.2, None], [None, None]],
                    ["grounded", "ungrounded", "grounded", "ungrounded", "grounded"], list("vwxyz"), "dev").fit
    assert fit.fitted_on == tuple("vwxy")          # a row with no inner score is left out of the fit
    assert fit.imputed == pytest.approx((0.5, 0.45))
    assert stacked_score(fit, [None, None]) is None
    assert stacked_score(fit, [0.9, None]) == stacked_score(fit, [0.9, 0.45])


@pytest.mark.slow
def test_a_run_fits_the_stack_on_dev_only_and_freezes_it_in_the_header(tmp_path):
    rows = rent_rows(12)
    dev = write_jsonl(tmp_path / "dev.jsonl", rows[:12])
    test = write_jsonl(tmp_path / "test.jsonl", rows[12:])
    out = tmp_path / "run"
    cli("run", str(test), "--judge", LOCAL_STACK, "--calibrate-on", str(dev), "--out", str(out), "--quiet")
    records = read_records(out / "records.jsonl")
    calibration = records.header.judges[0].calibration
    fit = calibration.fit
    dev_ids, test_ids = {r["id"] for r in rows[:12]}, {r["id"] for r in rows[12:]}
    assert set(fit.fitted_on) == dev_ids and not set(fit.fitted_on) & test_ids
    assert fit.features == ("quip:n=8", "quip:n=4,agg=min") and len(fit.weights) == 2
    assert calibration.n == 12 and calibration.dev_balanced_accuracy == 1.0
    # every test verdict is the frozen regression over its inner verdicts, decided with the frozen threshold
    assert {r.example.id for r in records.results} == test_ids
    for record in records.results:
        verdict = record.result.verdict
        score = stacked_score(fit, [inner_score(v) for v in record.result.stages])
        assert verdict.score == pytest.approx(score) and verdict.threshold == calibration.threshold
        assert verdict.label == ("grounded" if score >= calibration.threshold else "ungrounded")
    # the fit is also saved as a file, and the summary keeps it
    saved = json.loads((out / fit_file_name(LOCAL_STACK)).read_text())
    assert saved == json.loads(calibration.model_dump_json())
    summary = json.loads((out / "summary.json").read_text())
    assert summary["judges"][LOCAL_STACK]["balanced_accuracy"] == 1.0


@pytest.mark.slow
def test_a_saved_fit_is_a_judge_anywhere_without_refitting(tmp_path):
    import groundjudge

    rows = rent_rows(12)
    dev = write_jsonl(tmp_path / "dev.jsonl", rows[:12])
    test = write_jsonl(tmp_path / "test.jsonl", rows[12:])
    cli("run", str(test), "--judge", LOCAL_STACK, "--calibrate-on", str(dev), "--out", str(tmp_path / "fit"), "--quiet")
    weights = tmp_path / "fit" / fit_file_name(LOCAL_STACK)
    fitted = read_records(tmp_path / "fit" / "records.jsonl")
    # a run with weights=FILE fits nothing (no calibration records) and gives the same verdicts
    spec = f"stack:judges=[quip:n=8, {{quip:n=4,agg=min}}],weights={weights}"
    cli("run", str(test), "--judge", spec, "--out", str(tmp_path / "reuse"), "--quiet")
    assert not (tmp_path / "reuse" / "calibration.jsonl").exists()
    reused = read_records(tmp_path / "reuse" / "records.jsonl")
    assert reused.header.judges[0].calibration.fit == fitted.header.judges[0].calibration.fit
    assert reused.header.judges[0].calibration.source.startswith("weights ")
    assert {r.example.id: (r.result.verdict.label, r.result.verdict.score) for r in reused.results} == \
        {r.example.id: (r.result.verdict.label, r.result.verdict.score) for r in fitted.results}
    # a threshold given beside the weights wins over the file's, in the judge and in the header
    mine = JudgeConfig.from_spec(spec + ",threshold=0.9").build()
    assert mine.threshold == mine.frozen_calibration.threshold == 0.9 and mine.fit == reused.header.judges[0].calibration.fit
    # the Python API and an experiment file (weights relative to it) take it too
    verdict = groundjudge.judge(rows[13]["answer"], rows[13]["context"], spec)
    assert verdict.label == "ungrounded" and verdict.path == "stack"
    (tmp_path / "exp.toml").write_text(f'[data]\nfiles = ["test.jsonl"]\n\n[judges.stacked]\nkind = "stack"\n'
                                       f'judges = ["quip:n=8", "quip:n=4,agg=min"]\nweights = "fit/{weights.name}"\n',
                                       encoding="utf-8")
    cli("run", str(tmp_path / "exp.toml"), "--out", str(tmp_path / "exp"), "--quiet")
    assert json.loads((tmp_path / "exp" / "summary.json").read_text())["judges"]["stacked"]["balanced_accuracy"] == 1


@pytest.mark.slow
def test_a_stack_without_dev_data_or_with_a_mismatched_fit_is_a_clear_error(tmp_path):
    test = write_jsonl(tmp_path / "test.jsonl", rent_rows(4))
    result = cli("run", str(test), "--judge", "stack:judges=[quip:n=8]", "--dev-fraction", "0",
                 "--out", str(tmp_path / "run"), "--quiet", check=False)
    assert result.returncode != 0 and "is fitted on dev data" in result.stderr
    only_grounded = write_jsonl(tmp_path / "dev.jsonl", [r for r in rent_rows(4) if r["label"] == "grounded"])
    result = cli("run", str(test), "--judge", "stack:judges=[quip:n=8]", "--calibrate-on", str(only_grounded),
                 "--out", str(tmp_path / "run2"), "--quiet", check=False)
    assert result.returncode == 2 and "needs grounded and ungrounded" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    fit = fit_stack(["quip:n=8"], [[0.9], [0.1]], ["grounded", "ungrounded"], ["a", "b"], "dev")
    (tmp_path / "fit.json").write_text(fit.model_dump_json(), encoding="utf-8")
    with pytest.raises(SpecError, match=r"fit\.json:1:fit\.features"):
        JudgeConfig.from_spec(f"stack:judges=[cosine],weights={tmp_path / 'fit.json'}").build()
    # unfitted, it judges nothing: an abstention saying how to fit it
    import groundjudge

    verdict = groundjudge.judge("Rent is due.", "Rent is due.", "stack:judges=[quip:n=8]")
    assert verdict.label == "abstain" and verdict.abstain_reason.startswith("not_fitted")


def test_a_stack_over_an_llm_and_a_local_judge_runs_end_to_end_and_replays_offline(llm_server, tmp_path, capsys):
    from groundjudge.cli import main    # in process: the verbs as the command runs them, without a fresh interpreter

    rows = qa_rows(10)
    dev = write_jsonl(tmp_path / "dev.jsonl", rows[:8])
    test = write_jsonl(tmp_path / "test.jsonl", rows[8:])
    llm = f"direct:model=openai/gpt-4o-mini,api_base={llm_server.openai_base},timeout=5,score=logprobs"
    spec = f"stack:judges=[{{{llm}}}, quip:n=8]"
    out = tmp_path / "run"
    assert main(["run", str(test), "--judge", spec, "--calibrate-on", str(dev), "--out", str(out), "--quiet",
                 "--cache-dir", str(tmp_path / "cache")]) == 0
    records = read_records(out / "records.jsonl")
    fit = records.header.judges[0].calibration.fit
    assert fit.features == (llm, "quip:n=8") and set(fit.fitted_on) == {r["id"] for r in rows[:8]}
    assert records.header.judges[0].templates      # the inner LLM judge's prompt is in the header
    assert len(llm_server.requests) == len(rows)   # one call per answer, dev and test
    for record in records.results:
        assert len(record.result.calls) == 1 and record.result.stages[0].path.startswith("llm:")
        assert record.result.verdict.label == record.example.label    # the scripted oracle is right
    # the dev records keep the inner verdicts the fit was made from
    dev_records = read_records(out / "calibration.jsonl").results
    assert all(len(r.result.stages) == 2 for r in dev_records)
    # a replay answers from the recorded calls alone: no new call, the same verdicts
    llm_server.requests.clear()
    capsys.readouterr()
    assert main(["replay", str(out), "--out", str(tmp_path / "replay"), "--quiet"]) == 0
    assert f"{len(rows) - 8} identical, 0 differ; 0 new LLM calls" in capsys.readouterr().out
    assert not llm_server.requests
    assert read_records(tmp_path / "replay" / "records.jsonl").header.judges[0].calibration.fit == fit
