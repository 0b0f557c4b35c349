"""The stacked judge's model, apart from the judge and its fitting: an inner verdict as a feature
(:func:`inner_score`) and the fitted probability of grounded from the features (:func:`stacked_score`).

Used by :mod:`groundjudge.judges.stack` (judging) and :mod:`groundjudge.judges.stack_fit` (fitting on dev records);
both names are importable from ``groundjudge.judges.stack`` as before.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from groundjudge.types import StackFit, Verdict


def stacked_score(fit: StackFit, scores: Sequence[float | None]) -> float | None:
    """The fitted probability of grounded from the inner scores (an abstention is given its imputed score);
    None when every inner judge abstained."""
    if all(s is None for s in scores):
        return None
    values = [fit.imputed[i] if s is None else s for i, s in enumerate(scores)]
    z = fit.intercept + sum(w * v for w, v in zip(fit.weights, values))
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


def inner_score(verdict: Verdict) -> float | None:
    """An inner judge's score as a feature: None when it abstained or gave no score."""
    return None if verdict.label == "abstain" else verdict.score
