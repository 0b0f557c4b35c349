"""How many more labels would likely separate two judges: a projection from the current per-stratum variances along
the rest of the labelling queue.

A difference between two judges is, draw by draw, a function of each stratum's grounded count
(:mod:`groundjudge.labels.estimates`); its sensitivity to each stratum is the least-squares slope of the posterior
draws of the difference on the draws of the counts (exact for accuracy, a linearisation for balanced accuracy).
A stratum's count of grounded answers among its unlabelled ones has, under the Jeffreys posterior with ``n``
labels, the beta-binomial variance ``M p(1 - p)(n + 1 + M)/(n + 2)`` with ``M = N - n`` answers still unlabelled.
The projection keeps each stratum's grounded share and the difference where they are now, walks the rest of the
queue in order (each next item adds a label to its stratum) and returns the first number of labels at which
``1.96`` standard deviations fall below the difference's size. It knows that a stratum labelled to its end has no
variance left (the finite-population cliff), which a 1/sqrt(n) rule does not. It is a projection, not a promise:
the difference itself moves as labels come in. The same walk gives the labels before the interval's half-width
would reach a target (``estimate`` reports ±0.05).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Z95 = 1.959964
"""The normal quantile of a two-sided 95% interval."""


def stratum_variance(size: np.ndarray, labelled: np.ndarray, grounded: np.ndarray,
                     future: np.ndarray) -> np.ndarray:
    """Posterior variance of each stratum's grounded count with ``future`` labels (rows: steps), keeping the
    current grounded share (Jeffreys)."""
    share = (grounded + 0.5) / (labelled + 1)
    left = size - future
    return left * share * (1 - share) * (future + 1 + left) / (future + 2)


def project_more_labels(difference: float, diff_draws: np.ndarray, count_draws: np.ndarray,
                        strata: Sequence, names: Sequence[str], upcoming: Sequence[str]) -> int | None:
    """Labels to add, in queue order (``upcoming``: the strata of the queue's unlabelled items, in order), before
    the 95% interval of ``difference`` would likely exclude 0; None when the difference is 0 or not even the
    whole rest of the queue would do. ``diff_draws``: posterior draws of the difference; ``count_draws``: the draws
    of each stratum's grounded count (draws x strata, in ``names`` order)."""
    if abs(difference) < 1e-9:
        return None
    spread = _spread_along(diff_draws, count_draws, strata, names, upcoming)
    enough = np.nonzero(Z95 * spread < abs(difference))[0]
    if not len(enough):
        return None
    return max(1, int(enough[0]))


def project_labels_to_half_width(half_width: float, diff_draws: np.ndarray, count_draws: np.ndarray,
                                 strata: Sequence, names: Sequence[str], upcoming: Sequence[str]) -> int | None:
    """Labels to add, in queue order, before the 95% interval's half-width would likely be ``half_width`` or less
    (0 when it already is by this projection); None when not even the whole rest of the queue would do. The
    arguments as :func:`project_more_labels`'s."""
    spread = _spread_along(diff_draws, count_draws, strata, names, upcoming)
    enough = np.nonzero(Z95 * spread <= half_width)[0]
    return int(enough[0]) if len(enough) else None


def _spread_along(diff_draws: np.ndarray, count_draws: np.ndarray, strata: Sequence, names: Sequence[str],
                  upcoming: Sequence[str]) -> np.ndarray:
    """Projected standard deviation of the difference now (row 0) and after each further label in queue order."""
    centred = count_draws - count_draws.mean(axis=0)
    slopes = np.linalg.lstsq(centred, diff_draws - diff_draws.mean(), rcond=None)[0]
    size = np.array([s.size for s in strata], dtype=float)
    labelled = np.array([s.labelled for s in strata], dtype=float)
    grounded = np.array([s.grounded for s in strata], dtype=float)
    column = {name: k for k, name in enumerate(names)}
    steps = np.zeros((len(upcoming) + 1, len(names)))
    for k, name in enumerate(upcoming, start=1):
        steps[k, column[name]] = 1
    future = labelled + np.cumsum(steps, axis=0)
    return np.sqrt(stratum_variance(size, labelled, grounded, np.minimum(future, size)) @ slopes**2)
