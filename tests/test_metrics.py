"""Metrics against values computed by hand."""

from __future__ import annotations

import math

import pytest
from sklearn.metrics import precision_recall_fscore_support

from groundjudge.metrics import (
    bootstrap_ci,
    classification_metrics,
    fit_threshold,
    latency_stats,
    peak_overlap,
    union_seconds,
    mcnemar_p,
)

GOLD = ["grounded"] * 4 + ["ungrounded"] * 6
PRED = ["grounded", "grounded", "grounded", "ungrounded",          # 3 of 4 grounded right
        "ungrounded", "ungrounded", "ungrounded", "grounded", "abstain", "abstain"]  # 3 of 6 right


def test_metrics_by_hand():
    m = classification_metrics(GOLD, PRED)
    # grounded: tp 3, predicted 4 -> P 3/4; recall 3/4.  ungrounded: tp 3, predicted 4 -> P 3/4; recall 3/6.
    assert m["accuracy"] == pytest.approx(6 / 10)
    assert m["balanced_accuracy"] == pytest.approx((3 / 4 + 3 / 6) / 2)
    assert m["macro_precision"] == pytest.approx((3 / 4 + 3 / 4) / 2)
    assert m["macro_recall"] == pytest.approx((3 / 4 + 1 / 2) / 2)
    f1_g = 2 * 0.75 * 0.75 / 1.5
    f1_u = 2 * 0.75 * 0.5 / 1.25
    assert m["macro_f1"] == pytest.approx((f1_g + f1_u) / 2)
    assert m["n"] == 10 and m["n_abstained"] == 2
    assert m["confusion"]["ungrounded"] == {"grounded": 1, "ungrounded": 3, "abstain": 2}
    assert m["confusion"]["grounded"] == {"grounded": 3, "ungrounded": 1, "abstain": 0}


def test_abstentions_are_never_grounded():
    all_abstain = classification_metrics(GOLD, ["abstain"] * 10)
    assert all_abstain["balanced_accuracy"] == 0.0 and all_abstain["macro_f1"] == 0.0
    assert all_abstain["confusion"]["grounded"]["grounded"] == 0


def test_agrees_with_sklearn_when_no_abstentions():
    pred = ["grounded", "ungrounded", "grounded", "grounded", "ungrounded", "ungrounded", "grounded",
            "ungrounded", "ungrounded", "grounded"]
    m = classification_metrics(GOLD, pred)
    p, r, f, _ = precision_recall_fscore_support(GOLD, pred, average="macro", zero_division=0)
    assert (m["macro_precision"], m["macro_recall"], m["macro_f1"]) == pytest.approx((p, r, f))


def test_bootstrap_ci_brackets_the_estimate_and_is_seeded():
    gold = GOLD * 20
    pred = PRED * 20
    ci = bootstrap_ci(gold, pred, n_boot=500, seed=1)
    point = classification_metrics(gold, pred)
    for name in ("balanced_accuracy", "macro_f1"):
        lo, hi = ci[name]
        assert lo < point[name] < hi
        assert hi - lo < 0.25
    assert ci == bootstrap_ci(gold, pred, n_boot=500, seed=1)


def test_mcnemar_exact_by_hand():
    # 6 discordant pairs all favouring a: p = 2 * 0.5**6
    a = [True] * 6 + [True] * 4
    b = [False] * 6 + [True] * 4
    assert mcnemar_p(a, b) == pytest.approx(2 * 0.5 ** 6)
    assert mcnemar_p(a, a) == 1.0
    # 3 vs 1 discordant: two-sided binomial = P(X<=1)+P(X>=3) with n=4 -> (1+4+4+1)/16
    assert mcnemar_p([1, 1, 1, 0, 1], [0, 0, 0, 1, 1]) == pytest.approx(10 / 16)


def test_latency_stats():
    stats = latency_stats([1.0, 2.0, 3.0, 4.0, 100.0])
    assert stats["mean"] == pytest.approx(22.0)
    assert stats["p50"] == 3.0
    assert stats["p95"] == pytest.approx(4 + 0.8 * 96)


def test_fit_threshold_separates_and_takes_the_middle_of_ties():
    scores = [0.9, 0.8, 0.7, 0.3, 0.2, 0.1]
    gold = ["grounded"] * 3 + ["ungrounded"] * 3
    threshold, bal = fit_threshold(scores, gold)
    assert threshold == pytest.approx(0.5) and bal == 1.0
    # an abstention counts as a miss whatever the threshold
    threshold, bal = fit_threshold(scores[:-1] + [None], gold)
    assert 0.2 < threshold < 0.7 and math.isclose(bal, (1 + 2 / 3) / 2)


def test_fit_threshold_needs_scores():
    with pytest.raises(ValueError):
        fit_threshold([None, None], ["grounded", "ungrounded"])


def test_union_and_peak_of_intervals():
    intervals = [(0.0, 2.0), (1.0, 3.0), (5.0, 6.0), (2.0, 2.5)]
    assert union_seconds(intervals) == 4.0          # 0-3 and 5-6; overlaps and the gap counted right
    assert peak_overlap(intervals) == 2
    assert peak_overlap([(0.0, 1.0), (1.0, 2.0)]) == 1  # one ends as the next starts
    assert union_seconds([]) == 0.0 and peak_overlap([]) == 0
