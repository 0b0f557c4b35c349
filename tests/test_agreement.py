"""Figures a run gives without labels: shares called grounded, agreement, kappa and disagreements (issue 34 item 1)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from groundjudge.runs.agreement import kappa_binary, pair_agreement
from conftest import cli, rent_rows, write_jsonl


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


@pytest.mark.slow
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


def _independent_judges(rng, n: int, accuracies: dict[str, float]) -> tuple[dict, dict]:
    """judge -> answer -> verdict for judges of known accuracy erring independently, and the true labels."""
    truth = rng.random(n) < 0.35
    name = {True: "grounded", False: "ungrounded"}
    verdicts = {judge: {f"x{i}": name[bool(truth[i] if rng.random() < acc else not truth[i])] for i in range(n)}
                for judge, acc in accuracies.items()}
    return verdicts, {f"x{i}": name[bool(truth[i])] for i in range(n)}


def test_dawid_skene_recovers_known_accuracies_and_needs_three_judges():
    from groundjudge.runs.dawid_skene import fit_dawid_skene

    rng = np.random.default_rng(11)
    accuracies = {"strong": 0.92, "good": 0.85, "fair": 0.75, "weak": 0.65}
    verdicts, truth = _independent_judges(rng, 2000, accuracies)
    verdicts["good"]["x0"] = "abstain"                                  # abstentions are left out of the model
    hint = fit_dawid_skene(verdicts)
    assert hint is not None and hint.model_based and "independent" in hint.caveat
    assert hint.grounded_share == pytest.approx(np.mean([t == "grounded" for t in truth.values()]), abs=0.03)
    assert hint.judges["good"].n_decided == 1999
    for judge, figures in hint.judges.items():
        actual = np.mean([verdicts[judge][i] == truth[i] for i in truth if verdicts[judge][i] != "abstain"])
        assert figures.accuracy == pytest.approx(actual, abs=0.03), judge
        assert 0 <= figures.recall_grounded <= 1 and 0 <= figures.recall_ungrounded <= 1
    ranked = sorted(hint.judges, key=lambda j: -hint.judges[j].accuracy)
    assert ranked == list(accuracies)
    assert fit_dawid_skene({j: verdicts[j] for j in ("strong", "good")}) is None     # two judges: no hint


@pytest.mark.slow
def test_dawid_skene_in_the_cli_summary_and_report(tmp_path):
    rows = rent_rows(8)
    for row in rows:
        row["label"] = None
    data = write_jsonl(tmp_path / "unlabelled.jsonl", rows)
    out = tmp_path / "run"
    judges = ["quip:n=21,threshold=0.5", "quip:n=8,threshold=0.7", "quip:n=12,threshold=0.3"]
    result = cli("run", str(data), *[a for j in judges for a in ("--judge", j)], "--out", str(out), "--quiet",
                 "--dawid-skene")
    hint = json.loads((out / "summary.json").read_text())["dawid_skene"]
    assert hint["model_based"] is True and set(hint["judges"]) == set(judges)
    assert hint["shared"] == [judges]                                  # the same kind: warned
    assert "MODEL-BASED" in result.stdout and "Dawid-Skene" in result.stdout
    cli("report", str(out), "--out", str(tmp_path / "report"))
    report = (tmp_path / "report" / "report.md").read_text()
    assert "## Dawid-Skene hint (run): model-based, no labels" in report and "MODEL-BASED, NOT MEASURED" in report
    plain = cli("summarize", str(out))                                  # without the flag: no hint
    assert "dawid_skene" not in json.loads((out / "summary.json").read_text()) and "Dawid" not in plain.stdout
    two = tmp_path / "two"
    cli("run", str(data), "--judge", judges[0], "--judge", judges[1], "--out", str(two), "--quiet")
    result = cli("summarize", str(two), "--dawid-skene")
    assert "dawid_skene" not in json.loads((two / "summary.json").read_text())
    assert "needs 3 judges or more" in result.stdout
