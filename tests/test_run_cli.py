"""The run verb end to end: records, summary, calibration, bad input, resume after a kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT, cli, rent_rows, write_jsonl

from groundjudge.runs.records import read_records


def test_run_writes_records_and_summary(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(12))
    out = tmp_path / "run"
    result = cli("run", str(data), "--judge", "quip:n=8", "--judge", "span", "--out", str(out), "--quiet")
    assert "quip:n=8" in result.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["dataset"]) >= {"files", "n", "hash"}
    quip = summary["judges"]["quip:n=8"]
    for key in ("n", "n_abstained", "accuracy", "balanced_accuracy", "macro_precision", "macro_recall", "macro_f1",
                "ci95", "threshold", "latency_s", "cost_usd", "tokens", "llm_calls"):
        assert key in quip
    assert set(quip["ci95"]) == {"balanced_accuracy", "macro_f1"}
    assert set(quip["latency_s"]) == {"mean", "p50", "p95"}
    assert summary["pairwise"][0]["a"] == "quip:n=8" and 0 <= summary["pairwise"][0]["mcnemar_p"] <= 1
    records = read_records(out / "records.jsonl")
    assert len(records.results) == 2 * summary["dataset"]["n"]
    # the altered answers share no 8-grams with the clause: the fitted threshold separates them
    assert quip["balanced_accuracy"] == 1.0


@pytest.mark.slow
def test_calibration_is_fitted_on_dev_and_frozen_for_test(tmp_path):
    rows = rent_rows(10)
    dev = write_jsonl(tmp_path / "dev.jsonl", rows[:10])
    test_rows = rows[10:]
    test = write_jsonl(tmp_path / "test.jsonl", test_rows)
    out = tmp_path / "run"
    cli("run", str(test), "--judge", "quip:n=8", "--calibrate-on", str(dev), "--out", str(out), "--quiet")
    records = read_records(out / "records.jsonl")
    calibration = records.header.judges[0].calibration
    assert calibration.source == str(dev) and calibration.n == 10
    # every test verdict was decided with that frozen threshold
    for record in records.results:
        verdict = record.result.verdict
        assert verdict.threshold == calibration.threshold
        assert verdict.label == ("grounded" if verdict.score >= calibration.threshold else "ungrounded")
    # the test labels play no part in the threshold: flip them all, the threshold stays
    flipped = [{**r, "label": "grounded" if r["label"] == "ungrounded" else "ungrounded"} for r in test_rows]
    test2 = write_jsonl(tmp_path / "test2.jsonl", flipped)
    out2 = tmp_path / "run2"
    cli("run", str(test2), "--judge", "quip:n=8", "--calibrate-on", str(dev), "--out", str(out2), "--quiet")
    assert read_records(out2 / "records.jsonl").header.judges[0].calibration.threshold == calibration.threshold
    # the dev examples were judged and recorded too
    assert len(read_records(out / "calibration.jsonl").results) == 10


def test_dev_split_of_the_data_is_used_and_not_evaluated(tmp_path):
    rows = [{**r, "split": "dev" if i < 8 else "test"} for i, r in enumerate(rent_rows(10))]
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    out = tmp_path / "run"
    cli("run", str(data), "--judge", "quip:n=8", "--out", str(out), "--quiet")
    records = read_records(out / "records.jsonl")
    assert records.header.judges[0].calibration.source == "split:dev"
    assert {r.example.split for r in records.results} == {"test"}
    assert len(records.results) == 12


@pytest.mark.slow
def test_split_test_on_unsplit_data_is_the_part_a_calibrated_run_evaluates(tmp_path):
    """--split test with no calibration needed still evaluates only the --dev-fraction test part."""
    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(30))
    calibrated, fixed = tmp_path / "calibrated", tmp_path / "fixed"
    cli("run", str(data), "--judge", "quip:n=8", "--dev-fraction", "0.6", "--out", str(calibrated), "--quiet")
    cli("run", str(data), "--judge", "quip:n=8,threshold=0.5", "--dev-fraction", "0.6", "--split", "test",
        "--out", str(fixed), "--quiet")
    evaluated = {r.example.id for r in read_records(calibrated / "records.jsonl").results}
    assert 0 < len(evaluated) < 30
    assert {r.example.id for r in read_records(fixed / "records.jsonl").results} == evaluated


@pytest.mark.slow
def test_bad_input_names_file_line_and_field_before_any_work(tmp_path):
    rows = rent_rows(3)
    rows[2]["label"] = "maybe"
    data = write_jsonl(tmp_path / "bad.jsonl", rows)
    out = tmp_path / "run"
    result = cli("run", str(data), "--judge", "quip", "--out", str(out), check=False)
    assert result.returncode == 2
    assert f"{data}:3: field 'label'" in result.stderr
    assert not (out / "records.jsonl").exists()
    # not JSON at all, and a missing field
    text = data.read_text().splitlines()
    text[1] = "{not json"
    text[3] = json.dumps({"id": "x", "context": ["c"]})
    data.write_text("\n".join(text) + "\n")
    result = cli("run", str(data), "--judge", "quip", "--out", str(out), check=False)
    assert f"{data}:2: field '<json>'" in result.stderr and f"{data}:4: field 'answer'" in result.stderr
    # --skip-invalid judges the rest and counts what it skipped
    cli("run", str(data), "--judge", "quip", "--out", str(out), "--skip-invalid", "--dev-fraction", "0", "--quiet")
    records = read_records(out / "records.jsonl")
    assert records.header.dataset.skipped_rows == 3
    assert len(records.results) == 3


@pytest.mark.slow
def test_existing_run_is_never_overwritten(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(3))
    out = tmp_path / "run"
    cli("run", str(data), "--judge", "span", "--out", str(out), "--quiet")
    before = (out / "records.jsonl").read_text()
    result = cli("run", str(data), "--judge", "span", "--out", str(out), check=False)
    assert result.returncode == 2 and "--resume" in result.stderr
    result = cli("run", str(data), "--judge", "quip", "--out", str(out), "--resume", check=False)
    assert result.returncode == 2 and "same --judge" in result.stderr
    assert (out / "records.jsonl").read_text() == before


@pytest.mark.slow
def test_resume_after_kill_neither_loses_nor_duplicates(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(150))
    out = tmp_path / "run"
    records = out / "records.jsonl"
    args = [sys.executable, "-m", "groundjudge.cli", "run", str(data), "--judge", "cosine", "--judge", "span",
            "--dev-fraction", "0", "--concurrency", "4", "--out", str(out), "--quiet"]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "COLUMNS": "200"})
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        if records.exists() and records.read_text().count("\n") > 40:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    kept = records.read_text().count("\n") - 1
    assert 0 < kept < 300
    with open(records, "a") as handle:   # a line torn by the kill
        handle.write('{"kind": "result", "judge": "cos')
    cli("run", str(data), "--judge", "cosine", "--judge", "span", "--dev-fraction", "0", "--out", str(out),
        "--resume", "--quiet")
    results = read_records(records).results
    pairs = [(r.judge, r.example.id) for r in results]
    assert len(pairs) == len(set(pairs)) == 600
    assert {i for _, i in pairs} == {r["id"] for r in rent_rows(150)}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["judges"]["cosine"]["n"] == 300


@pytest.mark.slow
def test_gzipped_records_are_read_like_plain_ones(tmp_path):
    import gzip
    import shutil

    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(4))
    out = tmp_path / "run"
    cli("run", str(data), "--judge", "quip:n=8", "--out", str(out), "--quiet", "--dev-fraction", "0")
    before = json.loads((out / "summary.json").read_text())
    with open(out / "records.jsonl", "rb") as src, gzip.open(out / "records.jsonl.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    (out / "records.jsonl").unlink()
    cli("summarize", str(out))
    after = json.loads((out / "summary.json").read_text())
    assert after["judges"]["quip:n=8"]["balanced_accuracy"] == before["judges"]["quip:n=8"]["balanced_accuracy"]
    assert after["dataset"]["hash"] == before["dataset"]["hash"]
