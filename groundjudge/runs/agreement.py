"""What a run says without labels: how often each judge calls answers grounded, and how often two judges agree.

On a team's own corpus there is no gold label, yet the verdicts alone tell a lot: each judge's share of answers
called grounded and of abstentions, and for every two judges their agreement rate, Cohen's kappa (with a bootstrap
95% interval) and the answers on which they disagree — the only answers on which a human label can tell the two
apart (McNemar's discordant pairs).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from groundjudge import metrics

from groundjudge.types import ResultRecord

DECIDED = ("grounded", "ungrounded")
"""The verdict labels that count as a decision (an abstention is not one)."""


def verdict_shares(results: Sequence[ResultRecord]) -> dict[str, Any]:
    """A judge's verdicts without labels: answers judged, the share called grounded among its decisions, and the
    share it abstained on (None when it judged nothing / decided nothing)."""
    labels = [r.result.verdict.label for r in results]
    decided = [label for label in labels if label in DECIDED]
    return {
        "n_decided": len(decided),
        "grounded_share": sum(label == "grounded" for label in decided) / len(decided) if decided else None,
        "abstain_share": sum(label == "abstain" for label in labels) / len(labels) if labels else None,
    }


def kappa_binary(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cohen's kappa of two binary raters along the last axis (rows of resamples allowed); NaN where chance
    agreement is 1 (both raters gave one and the same label throughout)."""
    a, b = a.astype(float), b.astype(float)
    observed = (a == b).mean(axis=-1)
    pa, pb = a.mean(axis=-1), b.mean(axis=-1)
    chance = pa * pb + (1 - pa) * (1 - pb)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(chance < 1, (observed - chance) / (1 - chance), np.nan)


def _bootstrap_kappas(ya: np.ndarray, yb: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """Kappa of ``n_boot`` paired resamples of the answers, drawn in blocks of rows (at most
    :data:`groundjudge.metrics.BOOT_BLOCK` answers at once: memory stays flat however many answers a run has)."""
    rng = np.random.default_rng(seed)
    rows = max(1, metrics.BOOT_BLOCK // len(ya))
    parts = []
    for start in range(0, n_boot, rows):
        index = rng.integers(0, len(ya), size=(min(rows, n_boot - start), len(ya)))
        parts.append(kappa_binary(ya[index], yb[index]))
    return np.concatenate(parts) if parts else np.empty(0)


def pair_agreement(a: Mapping[Hashable, str], b: Mapping[Hashable, str], n_boot: int = 1000,
                   seed: int = 0) -> dict[str, Any]:
    """Agreement of two judges on the answers both decided (keys: answer identity, values: verdict labels).

    Returns ``n_both`` (answers both decided), ``agreement`` (share with the same verdict), ``kappa`` with its
    percentile-bootstrap ``kappa_ci95`` (None where undefined: no answers, or both judges constant and equal),
    ``disagreements`` and their split: ``a_grounded_b_ungrounded`` and ``a_ungrounded_b_grounded``.
    """
    shared = [key for key in a if key in b and a[key] in DECIDED and b[key] in DECIDED]
    out: dict[str, Any] = {"n_both": len(shared), "agreement": None, "kappa": None, "kappa_ci95": None,
                           "disagreements": 0, "a_grounded_b_ungrounded": 0, "a_ungrounded_b_grounded": 0}
    if not shared:
        return out
    ya = np.array([a[key] == "grounded" for key in shared])
    yb = np.array([b[key] == "grounded" for key in shared])
    kappa = float(kappa_binary(ya, yb))
    out.update({
        "agreement": float((ya == yb).mean()),
        "kappa": None if np.isnan(kappa) else kappa,
        "disagreements": int((ya != yb).sum()),
        "a_grounded_b_ungrounded": int((ya & ~yb).sum()),
        "a_ungrounded_b_grounded": int((~ya & yb).sum()),
    })
    if out["kappa"] is not None and len(shared) >= 2:
        boots = _bootstrap_kappas(ya, yb, n_boot, seed)
        boots = boots[~np.isnan(boots)]
        if len(boots):
            out["kappa_ci95"] = [float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5))]
    return out


def verdicts_by_answer(results: Sequence[ResultRecord]) -> dict[str, str]:
    """A judge's verdict label per example id (the last one where an id repeats)."""
    return {r.example.id: r.result.verdict.label for r in results}
