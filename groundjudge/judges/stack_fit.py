"""Fitting a stacked judge: a scikit-learn logistic regression over inner judges' dev scores, then its threshold.

Rows are dev examples with a gold label and at least one inner score; a missing
inner score (an abstention) is imputed with that judge's mean score over the rows
(recorded in the fit). The regression is unweighted, so its probability stays a
probability; the threshold that maximises dev balanced accuracy is fitted on the
stacked dev scores, as for any score-based judge (unless the stack sets one).
``C="auto"`` picks the regularisation strength from :data:`C_GRID` by grouped
cross-validation on the dev rows alone (documents never split across folds).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from groundjudge.judges.stack_model import inner_score
from groundjudge.metrics import fit_threshold
from groundjudge.types import Calibration, StackFit

C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
"""The regularisation strengths ``C="auto"`` chooses from."""


def impute(rows: Sequence[Sequence[float | None]]) -> tuple[np.ndarray, tuple[float, ...]]:
    """The rows as a matrix with every missing score replaced by its column's mean (0.5 for a column with no
    score at all), and those means."""
    x = np.array([[np.nan if v is None else v for v in row] for row in rows], dtype=float).reshape(len(rows), -1)
    means = tuple(float(np.nanmean(col)) if np.isfinite(col).any() else 0.5 for col in x.T)
    return np.where(np.isnan(x), np.array(means)[None, :], x), means


def choose_C(x: np.ndarray, y: np.ndarray, groups: Sequence[str], folds: int = 5) -> float:
    """The C of :data:`C_GRID` whose out-of-fold stacked scores rank the rows best (ROC AUC, pooled over grouped
    folds); of equal ones the smallest (the most regularised)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import GroupKFold

    n_splits = min(folds, len(set(groups)))
    if n_splits < 2:
        raise ValueError("C=auto needs dev examples from at least 2 documents (groups)")
    splits = list(GroupKFold(n_splits=n_splits).split(x, y, list(groups)))
    best, best_auc = C_GRID[0], -1.0
    for C in C_GRID:
        oof = np.full(len(y), 0.5)
        for train, held in splits:
            if len(set(y[train].tolist())) == 2:
                model = LogisticRegression(C=C, max_iter=10_000).fit(x[train], y[train])
                oof[held] = model.predict_proba(x[held])[:, 1]
        auc = float(roc_auc_score(y, oof))
        if auc > best_auc + 1e-12:
            best, best_auc = C, auc
    return best


def fit_stack(features: Sequence[str], rows: Sequence[Sequence[float | None]], labels: Sequence[str],
              ids: Sequence[str], source: str, C: float | str = 1.0, threshold: float | None = None,
              groups: Sequence[str] | None = None) -> Calibration:
    """Fit the logistic regression (grounded = 1) on the rows and, unless ``threshold`` is given, the threshold
    maximising balanced accuracy on the fitted scores. Rows with no inner score at all are left out. ``C="auto"``
    chooses C by grouped cross-validation over ``groups`` (each row's document; default: its id)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    keep = [i for i, row in enumerate(rows) if any(v is not None for v in row) and labels[i] in ("grounded",
                                                                                                   "ungrounded")]
    y = np.array([labels[i] == "grounded" for i in keep], dtype=int)
    if len(set(y.tolist())) < 2:
        raise ValueError(f"stack fit on {source!r}: needs grounded and ungrounded dev examples with inner scores, "
                         f"got {int(y.sum())} grounded of {len(y)}")
    x, means = impute([rows[i] for i in keep])
    how = ""
    if C == "auto":
        C = choose_C(x, y, [(groups or ids)[i] for i in keep])
        how = f"; C chosen from {list(C_GRID)} by grouped out-of-fold ROC AUC on the fit data"
    model = LogisticRegression(C=float(C), max_iter=10_000).fit(x, y)
    probs = model.predict_proba(x)[:, 1]
    gold = [labels[i] for i in keep]
    dev_bal = None
    if threshold is None:
        threshold, dev_bal = fit_threshold(probs.tolist(), gold)
    fit = StackFit(features=tuple(features), weights=tuple(float(w) for w in model.coef_[0]),
                   intercept=float(model.intercept_[0]), imputed=means, fitted_on=tuple(ids[i] for i in keep),
                   model=f"sklearn.linear_model.LogisticRegression(C={float(C)}){how}", C=float(C),
                   dev_roc_auc=float(roc_auc_score(y, probs)))
    return Calibration(threshold=threshold, source=source, n=len(keep), dev_balanced_accuracy=dev_bal, fit=fit)


def fit_from_records(judge: Any, results: Sequence[Any], source: str) -> Calibration:
    """Fit a stack judge on its dev records (``ResultRecord``s whose ``stages`` are the inner verdicts)."""
    usable = [r for r in results if len(r.result.stages) == len(judge.features)]
    rows = [[inner_score(v) for v in r.result.stages] for r in usable]
    return fit_stack(judge.features, rows, [r.example.label for r in usable], [r.example.id for r in usable],
                     source, C=judge.C, threshold=judge.threshold, groups=[r.example.group for r in usable])


def save_fit(calibration: Calibration, path: Path) -> Path:
    """Write a fit as the JSON file ``weights=`` loads; returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(calibration.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return path
