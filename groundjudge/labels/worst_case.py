"""Whether any further label can still change which of two judges is ahead: the least and the most a - b can be
over every way the answers not labelled yet could turn out.

Within a stratum of verdict patterns every judge gives every answer the same verdict, so a - b is a function of
the strata's grounded counts ``x_h``, each anywhere from its grounded labels ``g_h`` to ``g_h`` plus its unlabelled
answers. For accuracy a - b is linear in the counts. For balanced accuracy it is
``(1/2) [sum_h x_h dg_h / G + sum_h (N_h - x_h) du_h / U]`` (``dg_h`` / ``du_h``: a says grounded / ungrounded
minus b says so; ``G`` the grounded total, ``U = N - G``), linear in the counts once ``G`` is fixed. So for each
possible total ``G`` the extreme is a fractional knapsack: fill the ``G - sum g_h`` grounded answers still to place
into the strata with the largest (smallest) coefficient first, each up to its unlabelled answers. The bound is the
extreme over every ``G``: exact, not a sample, and it assumes nothing about the unlabelled answers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

CHUNK = 2048
"""Grounded totals evaluated at once (bounds the memory: chunk x strata)."""


def _fill(low: np.ndarray, free: np.ndarray, placed: np.ndarray, coef: np.ndarray, largest: bool) -> np.ndarray:
    """Counts (rows: totals) that put ``placed`` more grounded answers into the strata by coefficient, largest
    (or smallest) first, each stratum at most ``free`` more."""
    order = np.argsort(-coef if largest else coef, axis=1, kind="stable")
    room = free[order]
    before = np.cumsum(room, axis=1) - room
    take = np.clip(placed[:, None] - before, 0, room)
    counts = np.empty_like(take)
    np.put_along_axis(counts, order, take, axis=1)
    return low + counts


def difference_range(size: np.ndarray, labelled: np.ndarray, grounded: np.ndarray, gain: np.ndarray,
                     metric: str, difference: Callable[[np.ndarray], np.ndarray]) -> tuple[float, float]:
    """The least and the most of a - b on ``metric`` (accuracy or balanced_accuracy) over every labelling of the
    unlabelled answers. Per stratum: ``size``, ``labelled`` (grounded or ungrounded labels), ``grounded`` among
    them, ``gain`` = (dg, du) rows (:func:`pair_gain`); ``difference``: a - b from counts (rows x strata)."""
    low = grounded.astype(float)
    free = (size - labelled).astype(float)
    total = float(size.sum())
    dg, du = gain
    least, most = np.inf, -np.inf
    for start in range(int(low.sum()), int(low.sum() + free.sum()) + 1, CHUNK):
        totals = np.arange(start, min(start + CHUNK, int(low.sum() + free.sum()) + 1), dtype=float)
        inv_g = np.divide(1.0, totals, out=np.zeros_like(totals), where=totals > 0)[:, None]
        inv_u = np.divide(1.0, total - totals, out=np.zeros_like(totals), where=total - totals > 0)[:, None]
        coef = (np.broadcast_to(dg - du, (len(totals), len(dg))) if metric == "accuracy"
                else dg[None, :] * inv_g - du[None, :] * inv_u)
        placed = totals - low.sum()
        for largest in (True, False):
            values = difference(_fill(low, free, placed, coef, largest))
            least, most = min(least, float(values.min())), max(most, float(values.max()))
    return least, most


def pair_gain(verdicts: Sequence[Sequence[str]], a: int, b: int) -> np.ndarray:
    """(dg, du) per stratum: whether a says grounded minus whether b does, and the same for ungrounded."""
    says = np.array([[v[a] == "grounded", v[b] == "grounded", v[a] == "ungrounded", v[b] == "ungrounded"]
                     for v in verdicts], dtype=float).reshape(len(verdicts), 4)
    return np.stack([says[:, 0] - says[:, 1], says[:, 2] - says[:, 3]])
