"""Are the views of a multi-view run independent? Per-view rates, Proposition 1's bound and the measured rate.

Gold labels are per answer, so the unit here is the answer: a view *accepts* an
answer when it entails every claim of it, and the answer's support mass M(a) is
the share of views that accept it. For an ungrounded answer each acceptance is a
view error; if the N views erred independently with rate at most alpha, the
share of ungrounded answers with M(a) >= tau would be at most
exp(-N D(tau || alpha)) (Proposition 1 of the evidence-typed generation paper).
The summary puts that bound beside the measured share and the mean pairwise
correlation of the views' errors: a measured rate above the bound, or a high
correlation, says the views are not independent and voting buys little.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from groundjudge.local_nli.views import error_correlation, exponential_bound
from groundjudge.types import ResultRecord


def acceptance_matrix(records: list[ResultRecord]) -> tuple[list[str], list[ResultRecord], np.ndarray]:
    """(view names, the records with per-view votes, answers x views matrix of 1 where the view accepts)."""
    names: list[str] = []
    kept: list[ResultRecord] = []
    rows: list[list[float]] = []
    for record in records:
        claims = [c for c in record.result.verdict.claims if c.views]
        if not claims or record.example.label is None:
            continue
        if not names:
            names = list(claims[0].views or {})
        if any(list(c.views or {}) != names for c in claims):
            continue
        kept.append(record)
        rows.append([float(all((c.views or {})[n] for c in claims)) for n in names])
    return names, kept, np.array(rows, dtype=float).reshape(len(rows), len(names))


def views_diagnostics(records: list[ResultRecord], tau: float) -> dict[str, Any]:
    """Per-view TPR / FPR, the multi-view FPR at ``tau`` against Proposition 1's bound, and error correlation."""
    names, kept, accepts = acceptance_matrix(records)
    if not kept or not names:
        return {}
    grounded = np.array([r.example.label == "grounded" for r in kept])
    errors = np.where(grounded[:, None], 1.0 - accepts, accepts)
    out: dict[str, Any] = {"n_views": len(names), "tau": tau, "n_grounded": int(grounded.sum()),
                           "n_ungrounded": int((~grounded).sum()), "per_view": {},
                           "error_correlation": error_correlation(errors)}
    for i, name in enumerate(names):
        out["per_view"][name] = {
            "tpr": float(accepts[grounded, i].mean()) if grounded.any() else None,
            "fpr": float(accepts[~grounded, i].mean()) if (~grounded).any() else None,
        }
    if (~grounded).any():
        alpha = float(accepts[~grounded].mean())
        mass = accepts[~grounded].mean(axis=1)
        out.update({"alpha": alpha, "multi_view_fpr": float((mass >= tau).mean()),
                    "bound": exponential_bound(len(names), tau, alpha),
                    "error_correlation_ungrounded": error_correlation(accepts[~grounded])})
    return out
