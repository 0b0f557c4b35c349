"""Figures a run gives without labels: shares called grounded, agreement, kappa and disagreements (issue 34 item 1)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from groundjudge.runs.agreement import kappa_binary, pair_agreement
from tests.conftest import cli, rent_rows, write_jsonl


def test_kappa_matches_sklearn_on_random_raters():
    rng = np.random.default_rng(3)
    for _ in range(50):
        a = rng.random(60) < 0.6
        b = np.where(rng.random(60) < 0.7, a, ~a)
        assert kappa_binary(a, b) == pytest.approx(cohen_kappa_score(a, b))


def test_pair_agreement_counts_and_interval():
    a = {f"x{i}": "grounded" if i % 4 else "ungrounded" for i in range(40)}
    b = dict(a, x1="ungrounded", x2="ungrounded", x4="grounded", x5="abstain")
    b["only_b"] = "grounded"
    row = pair_agreement(a, b, n_boot=500)
    assert row["n_both"] == 39                     # x5 abstained, only_b judged by one
    assert row["disagreements"] == 3 and row["a_grounded_b_ungrounded"] == 2 and row["a_ungrounded_b_grounded"] == 1
    assert row["agreement"] == pytest.approx(36 / 39)
    keys = [k for k in a if b.get(k) in ("grounded", "ungrounded")]
    expected = cohen_kappa_score([a[k] for k in keys], [b[k] for k in keys])
    assert row["kappa"] == pytest.approx(expected)
    low, high = row["kappa_ci95"]
    assert low < row["kappa"] < high <= 1.0


def test_pair_agreement_undefined_kappa_and_no_overlap():
    same = {f"x{i}": "grounded" for i in range(10)}
    row = pair_agreement(same, dict(same))
    assert row["agreement"] == 1.0 and row["kappa"] is None and row["disagreements"] == 0
    assert pair_agreement({"a": "grounded"}, {"b": "grounded"})["n_both"] == 0


def test_unlabelled_run_reports_agreement(tmp_path):
    rows = rent_rows(8)
    for row in rows:
        row["label"] = None
    data = write_jsonl(tmp_path / "unlabelled.jsonl", rows)
    out = tmp_path / "run"
    result = cli("run", str(data), "--judge", "quip:n=21,threshold=0.5", "--judge", "cosine:threshold=0.9",
                 "--out", str(out), "--quiet")
    summary = json.loads((out / "summary.json").read_text())
    quip, cosine = summary["judges"]["quip:n=21,threshold=0.5"], summary["judges"]["cosine:threshold=0.9"]
    assert quip["n"] == 0 and quip["n_decided"] == 16
    verdicts = {}
    for line in (out / "records.jsonl").read_text().splitlines()[1:]:
        record = json.loads(line)
        verdicts.setdefault(record["judge"], {})[record["example"]["id"]] = record["result"]["verdict"]["label"]
    for spec, stats in (("quip:n=21,threshold=0.5", quip), ("cosine:threshold=0.9", cosine)):
        called = sum(v == "grounded" for v in verdicts[spec].values())
        assert stats["grounded_share"] == pytest.approx(called / 16)
    pair = summary["pairwise"][0]
    a, b = verdicts[pair["a"]], verdicts[pair["b"]]
    assert pair["n"] == 0 and pair["mcnemar_p"] is None          # no labels: no McNemar
    assert pair["n_both"] == 16 and pair["disagreements"] == sum(a[k] != b[k] for k in a)
    assert pair["agreement"] == pytest.approx(sum(a[k] == b[k] for k in a) / 16)
    assert f"{quip['grounded_share']:.0%} (0)" in result.stdout and "(abstain)" in result.stdout
    assert "both decided" in result.stdout
    cli("report", str(out), "--out", str(tmp_path / "report"))
    report = (tmp_path / "report" / "report.md").read_text()
    assert "## Agreement between judges (no labels needed)" in report and "## Verdicts without labels" in report
    assert f"| {pair['disagreements']} |" in report
