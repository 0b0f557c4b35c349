"""Threshold-free ranking metrics of the judges' scores: ROC AUC and PR AUC (ungrounded positive) with bootstrap
CIs, constant and missing scores, and where they show: summary.json, the run's table, report.md, report.html and
the ROC plot."""

from __future__ import annotations

import html
import json
import re

import numpy as np
import pytest
from conftest import ROOT, cli
from sklearn.metrics import average_precision_score, roc_auc_score

from groundjudge.metrics import _auc_ap, ranking_metrics
from groundjudge.report.html import PLOT_CAPTIONS
from groundjudge.runs.records import read_records

SUMMEDITS = sorted(str(p) for p in (ROOT / "datasets" / "summedits_sample").glob("*.json"))

# grounded answers score 0.9, 0.8, 0.4; ungrounded ones 0.7, 0.4, 0.1: of the 9 (grounded, ungrounded) pairs the
# grounded one scores higher in 7, and one pair ties (0.4, 0.4), which counts half: ROC AUC = 7.5 / 9
GOLD = ["grounded", "grounded", "grounded", "ungrounded", "ungrounded", "ungrounded"]
SCORES = [0.9, 0.8, 0.4, 0.7, 0.4, 0.1]


def test_auc_matches_sklearn_on_a_hand_example():
    r = ranking_metrics(GOLD, SCORES, n_boot=200)
    assert r.roc_auc == pytest.approx(7.5 / 9)
    grounded = [g == "grounded" for g in GOLD]
    assert r.roc_auc == pytest.approx(roc_auc_score(grounded, SCORES))
    # ROC AUC is symmetric: ungrounded positive, ranked by 1 - score, gives the same number
    assert r.roc_auc == pytest.approx(roc_auc_score([not g for g in grounded], [1 - s for s in SCORES]))
    # PR AUC detects ungrounded answers: flagged in the order 0.1, then the tie at 0.4 (one of each), then 0.7
    # precision 1 at recall 1/3, 2/3 at 2/3 (the tie is one step), 3/4 at 1: AP = (1 + 2/3 + 3/4) / 3
    assert r.pr_auc == pytest.approx((1 + 2 / 3 + 3 / 4) / 3)
    assert r.pr_auc == pytest.approx(average_precision_score([not g for g in grounded], [1 - s for s in SCORES]))
    assert r.pr_auc_baseline == pytest.approx(0.5)
    assert (r.n_scored, r.distinct_scores, r.constant_score, r.note) == (6, 5, False, None)


def test_the_bootstrap_counts_formula_is_sklearns_with_weights():
    """Each resample is scored from per-score class counts; that must be sklearn's AUC and AP weighted by them."""
    rng = np.random.default_rng(3)
    for _ in range(100):
        n = int(rng.integers(4, 40))
        gold = np.array([0, 1] + list(rng.integers(0, 2, n - 2)))           # 1 grounded, 0 ungrounded
        scores = np.round(rng.random(n), int(rng.integers(0, 3)))            # rounding makes ties
        weights = rng.integers(1, 4, n).astype(float)
        distinct, bins = np.unique(scores, return_inverse=True)
        pos = np.bincount(bins, weights=weights * (gold == 0), minlength=len(distinct))
        neg = np.bincount(bins, weights=weights * (gold == 1), minlength=len(distinct))
        roc, ap = _auc_ap(pos, neg)
        assert roc == pytest.approx(roc_auc_score(gold, scores, sample_weight=weights))
        assert ap == pytest.approx(average_precision_score(1 - gold, 1 - scores, sample_weight=weights))


def test_the_ci_holds_the_point_and_is_reproducible():
    rng = np.random.default_rng(0)
    gold = ["grounded" if g else "ungrounded" for g in rng.integers(0, 2, 400)]
    scores = [float(np.clip(rng.normal(0.6 if g == "grounded" else 0.4, 0.2), 0, 1)) for g in gold]
    r = ranking_metrics(gold, scores, n_boot=500, seed=1)
    for value, (lo, hi) in ((r.roc_auc, r.roc_auc_ci95), (r.pr_auc, r.pr_auc_ci95)):
        assert lo < value < hi and hi - lo < 0.2
    assert 0.6 < r.roc_auc < 0.9 and r.n_boot_skipped == 0
    assert r == ranking_metrics(gold, scores, n_boot=500, seed=1)
    assert r.roc_auc_ci95 != ranking_metrics(gold, scores, n_boot=500, seed=2).roc_auc_ci95


def test_resamples_with_one_class_are_skipped_and_counted():
    r = ranking_metrics(["grounded", "ungrounded", "grounded"], [0.9, 0.2, 0.6], n_boot=400)
    assert r.roc_auc == 1.0 and 0 < r.n_boot_skipped < 400
    assert r.roc_auc_ci95 == [1.0, 1.0]


def test_a_constant_score_is_said_to_be_constant_never_half():
    r = ranking_metrics(GOLD, [1.0] * len(GOLD))
    assert r.constant_score is True and r.distinct_scores == 1
    assert r.roc_auc is None and r.pr_auc is None and r.roc_auc_ci95 is None and r.pr_auc_ci95 is None
    assert "rank nothing" in r.note and r.n_scored == 6


def test_one_gold_class_gives_a_reason_and_no_number():
    r = ranking_metrics(["grounded"] * 3, [0.2, 0.5, 0.9])
    assert r.roc_auc is None and r.pr_auc is None and not r.constant_score
    assert "all grounded" in r.note and r.pr_auc_baseline == 0.0


def test_abstentions_are_left_out_not_scored():
    gold = GOLD + ["ungrounded", "grounded"]
    scores = SCORES + [None, None]                  # two abstentions
    r = ranking_metrics(gold, scores, n_boot=200)
    assert r.n_scored == 6 and r.roc_auc == pytest.approx(7.5 / 9)
    assert r == ranking_metrics(GOLD, SCORES, n_boot=200)
    empty = ranking_metrics(["grounded", "ungrounded"], [None, None])
    assert empty.n_scored == 0 and empty.roc_auc is None and "no labelled answer has a score" in empty.note


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Two local judges on the bundled SummEdits samples: quip (scores) and span (no score)."""
    out = tmp_path_factory.mktemp("ranking") / "run"
    printed = cli("run", *SUMMEDITS, "--judge", "quip:n=8", "--judge", "span", "--out", str(out), "--quiet").stdout
    return out, printed


def test_summary_carries_ranking_from_the_records(run):
    out, printed = run
    summary = json.loads((out / "summary.json").read_text())["judges"]
    records = read_records(out / "records.jsonl").results
    quip = [r for r in records if r.judge == "quip:n=8" and r.example.label is not None]
    ranking = summary["quip:n=8"]["ranking"]
    grounded = [r.example.label == "grounded" for r in quip]
    scores = [r.result.verdict.score for r in quip]
    assert ranking["roc_auc"] == pytest.approx(roc_auc_score(grounded, scores))
    assert ranking["pr_auc"] == pytest.approx(average_precision_score([not g for g in grounded],
                                                                      [1 - s for s in scores]))
    lo, hi = ranking["roc_auc_ci95"]
    assert lo <= ranking["roc_auc"] <= hi
    assert ranking["n_scored"] == len(quip) == summary["quip:n=8"]["n"]
    assert ranking["pr_auc_baseline"] == pytest.approx(1 - np.mean(grounded))
    assert ranking["constant_score"] is False and ranking["note"] is None
    # span gives no score: no ranking, and the run's table says "-"
    span = [r for r in records if r.judge == "span"]
    assert all(r.result.verdict.score is None for r in span) and "ranking" not in summary["span"]
    assert "ROC AUC" in printed
    row = next(line for line in printed.splitlines() if "quip:n=8" in line)
    assert f"{ranking['roc_auc']:.3f} [{lo:.2f}, {hi:.2f}]" in row


@pytest.mark.slow
def test_report_has_the_roc_plot_and_the_columns(run, tmp_path):
    out, _ = run
    # the same run with quip's scores all set to 1.0: a constant judge, reported as such
    constant = tmp_path / "constant"
    constant.mkdir()
    lines = (out / "records.jsonl").read_text().splitlines()
    changed = []
    for number, line in enumerate(lines):
        obj = json.loads(line)
        if number and obj["judge"] == "quip:n=8":
            obj["result"]["verdict"]["score"] = 1.0
        changed.append(json.dumps(obj))
    (constant / "records.jsonl").write_text("\n".join(changed) + "\n")
    report = tmp_path / "report"
    cli("report", str(out), str(constant), "--out", str(report))

    markdown = (report / "report.md").read_text()
    header = next(line for line in markdown.splitlines() if line.startswith("| judge | bal. acc"))
    headings = [h.strip() for h in header.strip("|").split("|")]
    roc_col, pr_col = headings.index("ROC AUC [95% CI]"), headings.index("PR AUC (ungrounded)")
    board = markdown.split("## Leaderboard\n", 1)[1].split("\n## ", 1)[0]
    rows = {cells[0]: cells for cells in ([c.strip() for c in line.strip("|").split("|")]
                                         for line in board.splitlines() if line.startswith("| "))}
    ranking = json.loads((out / "summary.json").read_text())["judges"]["quip:n=8"]["ranking"]
    lo, hi = ranking["roc_auc_ci95"]
    assert rows["run/quip:n=8"][roc_col] == f"{ranking['roc_auc']:.3f} [{lo:.2f}, {hi:.2f}]"
    assert rows["run/quip:n=8"][pr_col] == f"{ranking['pr_auc']:.3f} (chance {ranking['pr_auc_baseline']:.2f})"
    assert rows["constant/quip:n=8"][roc_col] == rows["constant/quip:n=8"][pr_col] == "constant"
    assert rows["run/span"][roc_col] == rows["run/span"][pr_col] == "-"
    assert "## Ranking by score (ROC AUC, PR AUC)" in markdown and "rank nothing" in markdown

    # the ROC plot: made, linked from report.md, embedded in report.html with its caption
    assert (report / "roc_curves.png").stat().st_size > 10_000
    assert "(roc_curves.png)" in markdown
    page = (report / "report.html").read_text()
    assert 'id="plot-roc_curves"' in page and html.escape(PLOT_CAPTIONS["roc_curves"]) in page
    data = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.DOTALL)[1])
    assert ["roc_auc", "ROC AUC [95% CI]"] in data["columns"]
    cells = {row["label"]: row["cells"]["roc_auc"] for row in data["leaderboard"]}
    assert cells["run/quip:n=8"]["value"] == ranking["roc_auc"] and cells["run/quip:n=8"]["ci"] == [lo, hi]
    assert cells["constant/quip:n=8"] == {"value": None, "text": "constant", "ci": None}


def test_only_the_judges_with_an_auc_are_drawn(run, tmp_path):
    from groundjudge.report.compare import compare
    from groundjudge.report.plots import roc_curves

    out, _ = run
    comparison = compare([out])
    assert roc_curves(comparison, tmp_path) == tmp_path / "roc_curves.png"
    for key in comparison.judges:
        if key != "quip:n=8":
            comparison.judges[key].pop("ranking", None)
    comparison.judges["quip:n=8"]["ranking"] = {**comparison.judges["quip:n=8"]["ranking"], "roc_auc": None,
                                                "constant_score": True}
    assert roc_curves(comparison, tmp_path / "none") is None
