"""The test part, judged once at the end by the starting judge and the winner: the differences in balanced
accuracy and ROC AUC with paired bootstrap 95% CIs, McNemar's p, and tokens and $ per answer."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from groundjudge.metrics import mcnemar_p, paired_bootstrap_diff
from groundjudge.tune.result import Delta, HeldOutComparison, SideCost
from groundjudge.tune.scoring import Scored
from groundjudge.types import Example

N_BOOT = 1000


def _auc_rows(gold: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """ROC AUC (grounded above ungrounded, ties half) of each row of resampled scores; NaN where a row holds one
    class only."""
    from scipy.stats import rankdata

    ranks = rankdata(scores, axis=1)
    pos = gold == 1
    n_pos = pos.sum(axis=1)
    n_neg = gold.shape[1] - n_pos
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = ((ranks * pos).sum(axis=1) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
    return np.where((n_pos > 0) & (n_neg > 0), auc, np.nan)


def paired_auc_delta(gold: Sequence[str], start: Sequence[float | None], winner: Sequence[float | None],
                     seed: int = 0, n_boot: int = N_BOOT) -> Delta:
    """Winner minus start ROC AUC on the answers both scored, with a paired percentile bootstrap 95% CI."""
    keep = [i for i, (a, b) in enumerate(zip(start, winner)) if a is not None and b is not None]
    t = np.array([1 if gold[i] == "grounded" else 0 for i in keep])
    if len(keep) < 2 or len(set(t.tolist())) < 2:
        return Delta()
    a = np.array([start[i] for i in keep], dtype=float)
    b = np.array([winner[i] for i in keep], dtype=float)
    point_a, point_b = _auc_rows(t[None, :], a[None, :])[0], _auc_rows(t[None, :], b[None, :])[0]
    idx = np.random.default_rng(seed).integers(0, len(keep), size=(n_boot, len(keep)))
    diffs = _auc_rows(t[idx], b[idx]) - _auc_rows(t[idx], a[idx])
    diffs = diffs[~np.isnan(diffs)]
    ci = [float(np.quantile(diffs, 0.025)), float(np.quantile(diffs, 0.975))] if len(diffs) else None
    return Delta(start=float(point_a), winner=float(point_b), delta=float(point_b - point_a), ci95=ci)


def compare_on_test(examples: Sequence[Example], start: Scored, winner: Scored, seed: int = 0) -> HeldOutComparison:
    """Start against winner on the test answers (their verdicts and scores under their calibrations)."""
    gold = [ex.label for ex in examples]
    bal = paired_bootstrap_diff(gold, start.verdicts, winner.verdicts, metrics=("balanced_accuracy",),
                                n_boot=N_BOOT, seed=seed)["balanced_accuracy"]
    right_a = [v == g for v, g in zip(start.verdicts, gold)]
    right_b = [v == g for v, g in zip(winner.verdicts, gold)]
    return HeldOutComparison(
        n=len(examples),
        balanced_accuracy=Delta(start=bal["a"], winner=bal["b"], delta=bal["delta"], ci95=bal["ci95"]),
        roc_auc=paired_auc_delta(gold, start.scores, winner.scores, seed),
        mcnemar_p=mcnemar_p(right_a, right_b),
        start_cost=SideCost(input_tokens=start.input_tokens, output_tokens=start.output_tokens,
                            cost_usd=start.cost_usd),
        winner_cost=SideCost(input_tokens=winner.input_tokens, output_tokens=winner.output_tokens,
                             cost_usd=winner.cost_usd))
