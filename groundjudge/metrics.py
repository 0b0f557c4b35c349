"""Classification metrics for grounding verdicts, bootstrap CIs, McNemar tests, thresholds, and the
threshold-free ranking metrics of the scores (ROC AUC, PR AUC; see :class:`RankingMetrics`).

Abstentions are predictions that match neither class: they lower the recall
of the example's true class (and so balanced accuracy and macro-F1) and are
never counted as grounded.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from scipy.stats import binomtest

CLASSES = ("ungrounded", "grounded")
"""Class order of encoded labels: 0 ungrounded, 1 grounded; -1 is an abstention."""


def encode(labels: Sequence[str]) -> np.ndarray:
    """grounded -> 1, ungrounded -> 0, abstain (or anything else) -> -1."""
    lookup = {"grounded": 1, "ungrounded": 0}
    return np.array([lookup.get(label, -1) for label in labels], dtype=np.int8)


def _per_class(t: np.ndarray, p: np.ndarray) -> dict[str, np.ndarray]:
    """Per-class precision, recall, F1 along the last axis; shape (..., 2)."""
    out = {"precision": [], "recall": [], "f1": []}
    for c in (0, 1):
        tp = ((t == c) & (p == c)).sum(axis=-1)
        predicted = (p == c).sum(axis=-1)
        actual = (t == c).sum(axis=-1)
        precision = np.divide(tp, predicted, out=np.zeros(tp.shape, dtype=float), where=predicted > 0)
        recall = np.divide(tp, actual, out=np.zeros(tp.shape, dtype=float), where=actual > 0)
        denom = precision + recall
        f1 = np.divide(2 * precision * recall, denom, out=np.zeros(tp.shape, dtype=float), where=denom > 0)
        out["precision"].append(precision)
        out["recall"].append(recall)
        out["f1"].append(f1)
    return {k: np.stack(v, axis=-1) for k, v in out.items()}


def _scores(t: np.ndarray, p: np.ndarray) -> dict[str, np.ndarray]:
    per = _per_class(t, p)
    return {
        "accuracy": (t == p).mean(axis=-1),
        "balanced_accuracy": per["recall"].mean(axis=-1),
        "macro_precision": per["precision"].mean(axis=-1),
        "macro_recall": per["recall"].mean(axis=-1),
        "macro_f1": per["f1"].mean(axis=-1),
    }


def classification_metrics(gold: Sequence[str], predicted: Sequence[str]) -> dict:
    """Accuracy, balanced accuracy, macro P/R/F1 and the confusion matrix (rows gold, columns predicted)."""
    t, p = encode(gold), encode(predicted)
    if (t < 0).any():
        raise ValueError("gold labels must be grounded or ungrounded")
    if len(t) == 0:
        raise ValueError("no labelled examples")
    result = {k: float(v) for k, v in _scores(t, p).items()}
    result["n"] = int(len(t))
    result["n_abstained"] = int((p < 0).sum())
    result["confusion"] = {
        gold_name: {pred_name: int(((t == gc) & (p == pc)).sum())
                    for pred_name, pc in (("grounded", 1), ("ungrounded", 0), ("abstain", -1))}
        for gold_name, gc in (("grounded", 1), ("ungrounded", 0))
    }
    return result


BOOT_BLOCK = 5_000_000
"""Resampled answers drawn at once by a bootstrap (40 MB of indices): resamples are drawn in blocks of rows, so a
bootstrap's memory is bounded however many answers there are (the blocks are one stream: the same draws)."""


def bootstrap_ci(gold: Sequence[str], predicted: Sequence[str], metrics: Sequence[str] = ("balanced_accuracy", "macro_f1"),
                 n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> dict[str, list[float]]:
    """Percentile bootstrap CIs over examples (resampled with replacement), vectorised."""
    t, p = encode(gold), encode(predicted)
    rng = np.random.default_rng(seed)
    result: dict[str, list[list[float]]] = {m: [] for m in metrics}
    chunk = max(1, min(n_boot, BOOT_BLOCK // max(len(t), 1)))
    done = 0
    while done < n_boot:
        size = min(chunk, n_boot - done)
        idx = rng.integers(0, len(t), size=(size, len(t)))
        scores = _scores(t[idx], p[idx])
        for m in metrics:
            result[m].append(scores[m])
        done += size
    alpha = (1 - level) / 2
    return {m: [float(np.quantile(np.concatenate(v), alpha)), float(np.quantile(np.concatenate(v), 1 - alpha))]
            for m, v in result.items()}


def paired_bootstrap_diff(gold: Sequence[str], predicted_a: Sequence[str], predicted_b: Sequence[str],
                          metrics: Sequence[str] = ("balanced_accuracy", "macro_f1"), n_boot: int = 1000,
                          seed: int = 0, level: float = 0.95) -> dict[str, dict[str, float]]:
    """B minus A for each metric on the same examples, with a paired percentile bootstrap CI: every resample
    draws the same examples for both judges, so the CI is that of the difference itself."""
    t, a, b = encode(gold), encode(predicted_a), encode(predicted_b)
    if not len(t):
        return {}
    point_a, point_b = _scores(t, a), _scores(t, b)
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n_boot, BOOT_BLOCK // max(len(t), 1)))
    diffs: dict[str, list[np.ndarray]] = {m: [] for m in metrics}
    done = 0
    while done < n_boot:
        size = min(chunk, n_boot - done)
        idx = rng.integers(0, len(t), size=(size, len(t)))
        sa, sb = _scores(t[idx], a[idx]), _scores(t[idx], b[idx])
        for m in metrics:
            diffs[m].append(sb[m] - sa[m])
        done += size
    alpha = (1 - level) / 2
    out = {}
    for m in metrics:
        values = np.concatenate(diffs[m])
        out[m] = {"a": float(point_a[m]), "b": float(point_b[m]), "delta": float(point_b[m] - point_a[m]),
                  "ci95": [float(np.quantile(values, alpha)), float(np.quantile(values, 1 - alpha))]}
    return out


def mcnemar_p(correct_a: Sequence[bool], correct_b: Sequence[bool]) -> float:
    """Exact McNemar test on paired correctness: binomial test on the discordant pairs."""
    a = np.asarray(correct_a, dtype=bool)
    b = np.asarray(correct_b, dtype=bool)
    only_a = int((a & ~b).sum())
    only_b = int((~a & b).sum())
    if only_a + only_b == 0:
        return 1.0
    return float(binomtest(only_a, only_a + only_b, 0.5).pvalue)


def latency_stats(seconds: Sequence[float]) -> dict[str, float]:
    """Mean, median and 95th percentile of per-response latency."""
    values = np.asarray(seconds, dtype=float)
    if len(values) == 0:
        return {"mean": 0.0, "p50": 0.0, "p95": 0.0}
    return {"mean": float(values.mean()), "p50": float(np.percentile(values, 50)),
            "p95": float(np.percentile(values, 95))}


def union_seconds(intervals: Sequence[tuple[float, float]]) -> float:
    """Total time covered by (start, end) intervals, overlaps counted once (a judge's wall time over its examples,
    gaps between resumed runs left out)."""
    total, reach = 0.0, None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def peak_overlap(intervals: Sequence[tuple[float, float]]) -> int:
    """The most (start, end) intervals open at one time (examples judged at once)."""
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    peak = current = 0
    for _, step in events:  # an end sorts before a start at the same instant
        current += step
        peak = max(peak, current)
    return peak


SCORE_TIE = 1e-6
"""Scores closer than this are one value to :func:`fit_threshold` (float32 noise between batchings)."""


def fit_threshold(scores: Sequence[float | None], gold: Sequence[str]) -> tuple[float, float]:
    """The threshold (score >= t is grounded) that maximises balanced accuracy on dev.

    Candidates are midpoints between consecutive distinct scores plus both ends;
    of equally good candidates the middle one is taken. Scores closer than ``SCORE_TIE`` count as one (a model
    scoring the same text in another batch differs in the last float32 bits, and that must not move the
    threshold). Examples without a score (abstentions) count as misses for every candidate. Returns (threshold,
    dev balanced accuracy).
    """
    s = np.array([np.nan if v is None else v for v in scores], dtype=float)
    t = encode(gold)
    if (t < 0).any() or len(t) == 0:
        raise ValueError("calibration needs gold labels grounded/ungrounded")
    distinct = np.unique(s[~np.isnan(s)])
    if len(distinct) == 0:
        raise ValueError("no scores to calibrate on (every dev example abstained)")
    gaps = np.flatnonzero(np.diff(distinct) >= SCORE_TIE)   # i: a real gap between distinct[i] and distinct[i + 1]
    candidates = np.concatenate([[distinct[0] - 1e-9], (distinct[gaps] + distinct[gaps + 1]) / 2,
                                 [distinct[-1] + 1e-9]])
    scored = ~np.isnan(s)
    predictions = np.where(scored[None, :], (s[None, :] >= candidates[:, None]).astype(np.int8), -1)
    bal = _scores(np.broadcast_to(t, predictions.shape), predictions)["balanced_accuracy"]
    best = np.flatnonzero(np.isclose(bal, bal.max()))
    pick = best[len(best) // 2]
    return float(candidates[pick]), float(bal[pick])


# --- ranking (threshold-free) metrics of the scores ---------------------------------------------

class RankingMetrics(BaseModel):
    """How well a judge's scores rank the answers, whatever the threshold: ROC AUC and PR AUC with percentile
    bootstrap 95% CIs, on the labelled answers that have a score.

    Conventions: ROC AUC is symmetric (the chance that a grounded answer scores above an ungrounded one, ties
    counting half; the same whichever class is called positive). PR AUC (average precision) is for *detecting
    ungrounded answers*: positive = ungrounded, ranked by ``1 - score``; a random ranker gets the ungrounded
    share (``pr_auc_baseline``). Answers without a score (abstentions) are left out, never given one:
    ``n_scored`` says how many were ranked. Scores that are all equal rank nothing: ``constant_score`` is true
    and there is no AUC (never 0.5); with one gold class only there is none either; ``note`` says why.
    """

    model_config = ConfigDict(frozen=True)
    roc_auc: float | None = Field(default=None, description="ROC AUC of the scores (grounded above ungrounded).")
    roc_auc_ci95: list[float] | None = Field(default=None, description="Percentile bootstrap 95% CI of roc_auc.")
    pr_auc: float | None = Field(default=None, description="Average precision at finding ungrounded answers.")
    pr_auc_ci95: list[float] | None = Field(default=None, description="Percentile bootstrap 95% CI of pr_auc.")
    pr_auc_baseline: float | None = Field(default=None, description="Ungrounded share of the scored answers: "
                                                                    "the PR AUC of a random ranking.")
    n_scored: int = Field(description="Labelled answers with a score (the ones ranked).")
    distinct_scores: int = Field(description="Distinct score values among them.")
    constant_score: bool = Field(description="Every scored answer has the same score: the scores rank nothing.")
    note: str | None = Field(default=None, description="Why there is no AUC, when there is none.")
    n_boot_skipped: int = Field(default=0, description="Bootstrap resamples left out for holding one class only.")


def _auc_ap(pos: np.ndarray, neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ROC AUC and average precision from (weighted) counts of ungrounded (``pos``) and grounded (``neg``)
    answers per distinct score, scores ascending, along the last axis (..., K). Ties are handled as
    scikit-learn does (half a pair for ROC AUC, one step of the PR curve per distinct score)."""
    n_pos, n_neg = pos.sum(axis=-1), neg.sum(axis=-1)
    neg_above = n_neg[..., None] - np.cumsum(neg, axis=-1)          # grounded answers scoring higher
    roc = (pos * (neg_above + 0.5 * neg)).sum(axis=-1) / (n_pos * n_neg)
    tp, flagged = np.cumsum(pos, axis=-1), np.cumsum(pos + neg, axis=-1)   # flag score <= s as ungrounded
    precision = np.divide(tp, flagged, out=np.zeros(tp.shape, dtype=float), where=flagged > 0)
    ap = (pos * precision).sum(axis=-1) / n_pos
    return roc, ap


def ranking_metrics(gold: Sequence[str], scores: Sequence[float | None], n_boot: int = 1000, seed: int = 0,
                    level: float = 0.95) -> RankingMetrics:
    """ROC AUC and PR AUC (ungrounded positive) of ``scores`` against ``gold`` (grounded / ungrounded), with
    percentile bootstrap CIs over the scored answers (vectorised; resamples holding one class are skipped and
    counted). Answers whose score is None are left out. See :class:`RankingMetrics` for the conventions."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    t = encode(gold)
    if (t < 0).any():
        raise ValueError("gold labels must be grounded or ungrounded")
    s = np.array([np.nan if v is None else v for v in scores], dtype=float)
    if len(s) != len(t):
        raise ValueError("one score per gold label")
    scored = ~np.isnan(s)
    t, s = t[scored], s[scored]
    distinct, bins = np.unique(s, return_inverse=True)
    base = {"n_scored": len(s), "distinct_scores": len(distinct), "constant_score": len(distinct) == 1}
    if len(s):
        base["pr_auc_baseline"] = float((t == 0).mean())
    if len(s) == 0:
        return RankingMetrics(**base, note="no labelled answer has a score")
    if len(distinct) == 1:
        return RankingMetrics(**base, note=f"every one of the {len(s)} scored answers has the score "
                                           f"{distinct[0]:g}: the scores rank nothing (no AUC)")
    if len(np.unique(t)) < 2:
        only = CLASSES[int(t[0])]
        return RankingMetrics(**base, note=f"the {len(s)} scored answers are all {only}: an AUC needs both "
                                           "grounded and ungrounded answers")
    roc = float(roc_auc_score(t, s))                                 # grounded (1) ranked by the score
    ap = float(average_precision_score(1 - t, -s))   # ungrounded (1) ranked by 1 - score (-score: the same order)
    rocs, aps, skipped = _bootstrap_auc(t, bins, len(distinct), n_boot, seed)
    alpha = (1 - level) / 2

    def ci(values: np.ndarray) -> list[float] | None:
        return [float(np.quantile(values, alpha)), float(np.quantile(values, 1 - alpha))] if len(values) else None

    return RankingMetrics(**base, roc_auc=roc, roc_auc_ci95=ci(rocs), pr_auc=ap, pr_auc_ci95=ci(aps),
                          n_boot_skipped=skipped)


AUC_BLOCK = 500_000
"""Resampled answers drawn at once by the AUC bootstrap (small: the blocks stay in the CPU cache)."""


def _bootstrap_auc(t: np.ndarray, bins: np.ndarray, k: int, n_boot: int, seed: int
                   ) -> tuple[np.ndarray, np.ndarray, int]:
    """ROC AUCs and average precisions of ``n_boot`` resamples of the answers (gold ``t``, distinct-score index
    ``bins`` of ``k``), computed from per-score class counts; resamples holding one class are dropped and
    counted."""
    rng = np.random.default_rng(seed)
    n = len(t)
    code = bins + k * (t == 0)                      # ungrounded answers in the upper half
    chunk = max(1, min(n_boot, AUC_BLOCK // max(n, 2 * k)))     # small blocks: they stay in the CPU cache
    rocs, aps, skipped, done = [], [], 0, 0
    while done < n_boot:
        size = min(chunk, n_boot - done)
        idx = rng.integers(0, n, size=(size, n))
        flat = (code[idx] + (2 * k) * np.arange(size)[:, None]).ravel()
        counts = np.bincount(flat, minlength=size * 2 * k).reshape(size, 2, k)
        neg, pos = counts[:, 0], counts[:, 1]
        both = (pos.sum(axis=1) > 0) & (neg.sum(axis=1) > 0)
        skipped += int((~both).sum())
        roc, ap = _auc_ap(pos[both], neg[both])
        rocs.append(roc)
        aps.append(ap)
        done += size
    empty = [np.empty(0)]
    return np.concatenate(rocs or empty), np.concatenate(aps or empty), skipped


def roc_points(gold: Sequence[str], scores: Sequence[float | None]) -> tuple[np.ndarray, np.ndarray]:
    """The ROC curve of detecting ungrounded answers by ``1 - score`` (scikit-learn's ``roc_curve``), on the
    answers with a score: (false positive rate: share of grounded answers flagged, true positive rate: share
    of ungrounded answers caught)."""
    from sklearn.metrics import roc_curve

    pairs = [(label, score) for label, score in zip(gold, scores, strict=True) if score is not None]
    ungrounded = np.array([label == "ungrounded" for label, _ in pairs], dtype=int)
    fpr, tpr, _ = roc_curve(ungrounded, -np.array([score for _, score in pairs], dtype=float))  # 1 - score order
    return fpr, tpr


def stratified_roc_auc(positive: Sequence[bool], scores: Sequence[float], strata: Sequence[str]) -> dict:
    """ROC AUC of ``scores`` for ``positive`` pooled, without the stratum holding the most negatives, and within
    strata (the pair-weighted mean AUC over the strata that have both classes): how much of a pooled figure is the
    mix of strata with different base rates (e.g. ContractNLI's 17 hypotheses). The stratum left out and its
    negatives are named; a figure that cannot be computed (one class only) is None. ``pooled_stratum_quantiles``:
    the pooled AUC once every score is replaced by its quantile among its own stratum's scores, a normalisation
    that reads no label (what a fixed checklist's per-question normalisation would give)."""
    from scipy.stats import rankdata
    from sklearn.metrics import roc_auc_score

    y, s, groups = np.asarray(positive, dtype=bool), np.asarray(scores, dtype=float), np.asarray(strata)

    def auc(rows: np.ndarray) -> float | None:
        return float(roc_auc_score(y[rows], s[rows])) if len(set(y[rows].tolist())) == 2 else None

    names, negatives = np.unique(groups[~y], return_counts=True)
    top = str(names[np.argmax(negatives)]) if len(names) else None
    top_rows = int(negatives.max()) if len(names) else 0
    within = [(value, int(rows.sum())) for g in np.unique(groups) if (value := auc(rows := groups == g)) is not None]
    quantiles = np.empty(len(s))
    for g in np.unique(groups):
        rows = groups == g
        quantiles[rows] = (rankdata(s[rows]) - 0.5) / rows.sum()
    pooled_quantiles = float(roc_auc_score(y, quantiles)) if len(set(y.tolist())) == 2 else None
    return {"pooled": auc(np.ones(len(y), dtype=bool)), "pooled_stratum_quantiles": pooled_quantiles,
            "most_negative_stratum": top,
            "most_negative_stratum_rows": top_rows,
            "without_most_negative": auc(groups != top) if top is not None else None,
            "within_strata": sum(a * n for a, n in within) / sum(n for _, n in within) if within else None,
            "strata_with_both_classes": len(within)}
