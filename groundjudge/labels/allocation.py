"""How many labels each stratum of verdict patterns gets when the queue is built for one metric's pair difference
(``groundjudge label RUN --for accuracy|balanced_accuracy [--pair A B]``): a Neyman-style allocation.

The figure asked for is a - b, judge a's metric minus judge b's, over all answers. To first order it is the mean,
over answers, of a per-answer quantity (its influence function), and a stratified sample of ``n_h`` answers from
stratum ``h`` of ``N_h`` estimates it with variance ``sum_h N_h^2 S_h^2 / n_h`` (less the finite-population
correction), ``S_h`` the stratum's standard deviation of that quantity. For a fixed number of labels the variance is
least with ``n_h`` proportional to ``N_h S_h`` (Neyman). Within a stratum every judge gives every answer the same
verdict, so the quantity depends only on whether the answer is grounded (``y``), and ``S_h`` is
``sqrt(p_h (1 - p_h)) |c1_h - c0_h|``, with ``p_h`` the stratum's grounded share and ``c1_h`` / ``c0_h`` the
quantity on a grounded / an ungrounded answer:

- **accuracy**: the quantity is ``correct_a - correct_b``; ``c1 - c0 = dg - du`` with ``dg`` (``du``) = a says
  grounded (ungrounded) minus b says so. Where the two judges agree it is 0: those strata need no label.
- **balanced accuracy**: ``(recall_g + recall_u) / 2``; with ``G`` grounded answers of ``N``, ``U = N - G``,
  ``Rg`` / ``Ru`` the recall differences a - b on each class, the influence of an answer is
  ``(N / 2) [y (dg - Rg) / G + (1 - y) (du - Ru) / U]``. The ``-Rg / G`` and ``-Ru / U`` terms are the class
  totals: an answer on which both judges agree still moves ``G``, and with it both recalls, unless the recall
  differences are 0. So agreement strata get labels in proportion to how much the class totals matter.

**No labels yet: ``S_h`` from a prior.** The queue is drawn before the first label (so every prefix is a
stratified random sample with a fixed design, which is what :mod:`groundjudge.labels.estimates` assumes; the
adaptive queue, :mod:`groundjudge.labels.adaptive`, re-runs the allocation after each batch with the expectation
over the Beta posterior of each ``p_h`` given the labels so far), so ``p_h`` is unknown. The allocation minimises the *prior
expected* variance, ``sum_h N_h^2 E[S_h^2] / n_h``, which is least at ``n_h`` proportional to
``N_h sqrt(E[S_h^2])``; the expectation is over independent Beta(2, 2) grounded shares per stratum
(:data:`PRIOR_SHAPE`), a Monte-Carlo average (seeded; the class totals kept at least one answer so a draw never
divides by 0). Why this prior:

- *Averaged, not plugged in.* Plugging in the prior mean (every ``p_h = 1/2``) makes the recall differences cancel
  by symmetry and gives the agreement strata no label; an agreement stratum without labels leaves the class totals
  (and so a balanced accuracy) as wide as the prior. Averaging over the prior keeps the class totals' share.
- *Symmetric, not trusting the verdicts.* A prior such as "where every judge says grounded, most answers are
  grounded" would assume the judges are good, and the judges compared may be near chance (``quip`` is right on
  51% of SummEdits).
- *Beta(2, 2) rather than the estimator's Jeffreys Beta(1/2, 1/2).* Jeffreys puts much of its mass on strata that
  are all grounded or all ungrounded, so its draws often have extreme class totals, which inflate the agreement
  strata's expected variance. Beta(2, 2) (a stratum's grounded share unknown, rarely all-or-nothing) allocated
  better in every case measured: on the five committed pairs of ``results/labels`` (linearised variance with their
  true strata) and on the synthetic corpora of ``tests/test_label_queue_for.py``; Beta(4, 4) was about the same.
  The prior only sets the allocation; the estimates keep their Jeffreys posterior and stay valid whatever it is.

**All pairs when none is named.** Without ``--pair`` the allocation minimises the sum of the variances of every
pair's difference (``E[S_h^2]`` summed over pairs): in a two-judge run that is the one pair; in a run with more
judges no pair is favoured. ``--pair A B`` aims at one.

**A floor for every stratum.** A share :data:`PROPORTIONAL_FLOOR` of the queue is allocated in proportion to
``N_h`` (as a uniform sample would), so that every stratum gets some labels in a long enough queue and each judge's
own figures (which need the agreement strata) stay estimable; the rest follows the Neyman allocation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

TARGET_METRICS = ("accuracy", "balanced_accuracy")
"""The metrics a queue can be built for (those ``estimate`` gives a pair difference for)."""

PROPORTIONAL_FLOOR = 0.05
"""Share of a metric-targeted queue allocated in proportion to the strata's sizes (see the module)."""

PRIOR_SHAPE = 2.0
"""Both shape parameters of the symmetric Beta prior on each stratum's grounded share (see the module)."""

PRIOR_DRAWS = 4000
"""Monte-Carlo draws of the strata's grounded shares for the prior expected variance."""


def _says(names: Sequence[str], judge: int, letter: str) -> np.ndarray:
    return np.array([name[judge] == letter for name in names], dtype=float)


def expected_variance(names: Sequence[str], sizes: np.ndarray, metric: str, pair: tuple[int, int],
                      shares: np.ndarray) -> np.ndarray:
    """Mean over draws of each stratum's variance ``S_h^2`` of the per-answer influence on ``a - b``.

    ``names``: the strata (one verdict letter per judge); ``sizes``: their answers; ``pair``: the judges' positions
    in a name; ``shares``: draws x strata of grounded shares."""
    a, b = pair
    dg = _says(names, a, "G") - _says(names, b, "G")
    du = _says(names, a, "U") - _says(names, b, "U")
    spread = shares * (1 - shares)
    if metric == "accuracy":
        return spread.mean(axis=0) * (dg - du) ** 2
    if metric != "balanced_accuracy":
        raise ValueError(f"unknown metric {metric!r}: one of {', '.join(TARGET_METRICS)}")
    total = sizes.sum()
    grounded = np.maximum(shares @ sizes, 1.0)[:, None]
    ungrounded = np.maximum(total - shares @ sizes, 1.0)[:, None]
    recall_g = (shares * sizes) @ dg / grounded[:, 0]
    recall_u = ((1 - shares) * sizes) @ du / ungrounded[:, 0]
    c1 = total / 2 * (dg - recall_g[:, None]) / grounded
    c0 = total / 2 * (du - recall_u[:, None]) / ungrounded
    return (spread * (c1 - c0) ** 2).mean(axis=0)


def neyman_targets(strata_sizes: Mapping[str, int], metric: str, pairs: Sequence[tuple[int, int]],
                   seed: int = 0, floor: float = PROPORTIONAL_FLOOR,
                   labels: Mapping[str, tuple[int, int]] | None = None, draws: int = PRIOR_DRAWS) -> dict[str, float]:
    """Each stratum's target share of the queue: ``(1 - floor)`` by ``N_h sqrt(E[S_h^2])`` summed over ``pairs``
    (judge positions in the strata names), ``floor`` by ``N_h``; see the module's description. ``labels``: per
    stratum (labelled, grounded among them) so far: the expectation is then over the Beta posterior of each
    stratum's grounded share (the adaptive queue's re-plan, :mod:`groundjudge.labels.adaptive`); without it, over
    the prior."""
    if not pairs:
        raise ValueError("a queue for a pair difference needs two judges")
    names = sorted(strata_sizes)
    sizes = np.array([strata_sizes[n] for n in names], dtype=float)
    seen = np.array([(labels or {}).get(n, (0, 0)) for n in names], dtype=float).reshape(len(names), 2)
    rng = np.random.default_rng(seed)
    shares = rng.beta(PRIOR_SHAPE + seen[:, 1], PRIOR_SHAPE + seen[:, 0] - seen[:, 1], size=(draws, len(names)))
    variance = sum(expected_variance(names, sizes, metric, pair, shares) for pair in pairs)
    weight = sizes * np.sqrt(variance)
    neyman = weight / weight.sum() if weight.sum() > 0 else sizes / sizes.sum()
    share = (1 - floor) * neyman + floor * sizes / sizes.sum()
    return {n: float(s) for n, s in zip(names, share)}
