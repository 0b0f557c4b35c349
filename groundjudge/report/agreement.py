"""The report's tables that need no labels: each judge's verdict shares, and agreement between every two judges."""

from __future__ import annotations

from typing import Any

from groundjudge.report.compare import Comparison
from groundjudge.report.compare import ranked

SHARES_NOTE = ("Without gold labels the verdicts still say how each judge leans: the share of its decisions that "
               "say grounded, and how often it abstained.")
AGREEMENT_NOTE = ("On every answer both judges decided (labelled or not): the share with the same verdict and "
                  "Cohen's kappa (percentile-bootstrap 95% interval). Only the answers on which two judges "
                  "disagree can show which of them is right: those are the ones to label first.")


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def verdict_shares_table(comparison: Comparison) -> dict[str, Any]:
    """Per judge: answers judged, decided, the share called grounded and the share abstained."""
    order = ranked(comparison)
    rows = [[comparison.labels[key], str(s["n_judged"]), str(s.get("n_decided", "-")),
             _share(s.get("grounded_share")), _share(s.get("abstain_share"))]
            for key in order for s in [comparison.judges[key]]]
    return {"id": "verdict-shares", "keys": order, "title": "Verdicts without labels", "note": SHARES_NOTE,
            "headers": ["judge", "judged", "decided", "called grounded", "abstained"], "rows": rows}


def agreement_table(comparison: Comparison) -> list[dict[str, Any]]:
    """Every two judges: answers both decided, agreement, kappa [95% CI] and the disagreements, split by side;
    none when the report has one judge."""
    if len(comparison.judges) < 2:
        return []
    rows = []
    for pair in comparison.pairwise:
        kappa = "-" if pair.get("kappa") is None else f"{pair['kappa']:.3f}" + (
            f" [{pair['kappa_ci95'][0]:.2f}, {pair['kappa_ci95'][1]:.2f}]" if pair.get("kappa_ci95") else "")
        rows.append([comparison.labels[pair["a"]], comparison.labels[pair["b"]], str(pair.get("n_both", 0)),
                     _share(pair.get("agreement")), kappa, str(pair.get("disagreements", 0)),
                     str(pair.get("a_grounded_b_ungrounded", 0)), str(pair.get("a_ungrounded_b_grounded", 0))])
    return [{"id": "agreement", "title": "Agreement between judges (no labels needed)", "note": AGREEMENT_NOTE,
             "headers": ["a", "b", "both decided", "agree", "kappa [95% CI]", "disagree",
                         "a grounded, b not", "b grounded, a not"], "rows": rows}]
