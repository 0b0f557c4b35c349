"""The report's ranking table: how well each judge's scores rank the answers, whatever the threshold.

Read from each judge's recomputed summary (``ranking``, see :class:`groundjudge.metrics.RankingMetrics`):
ROC AUC and PR AUC (ungrounded answers positive) with bootstrap 95% CIs, the PR AUC of a random ranking, and
how many labelled answers had a score. A judge whose scores are all equal is said to be constant (no AUC).
"""

from __future__ import annotations

from typing import Any

from groundjudge.report.compare import Comparison, ranked

RANKING_NOTE = (
    "Threshold-free: how well the judge's score orders the labelled answers it scored (abstentions and answers "
    "without a score are left out; scored: how many were ranked). ROC AUC: the chance that a grounded answer "
    "scores above an ungrounded one (0.5: no better than chance; the same whichever class is called positive). "
    "PR AUC: average precision at finding ungrounded answers by 1 − score; chance is their share among the "
    "scored answers. Brackets: bootstrap 95% intervals. Constant: every answer got the same score, so the score "
    "ranks nothing. Judges that give no score are not listed."
)

RANKING_HEADERS = ["judge", "scored", "distinct scores", "ROC AUC [95% CI]", "PR AUC (ungrounded) [95% CI]",
                   "PR AUC chance", "note"]
"""Column headings of :func:`ranking_table`'s rows."""


def _auc(value: float | None, ci: list[float] | None, constant: bool) -> str:
    if value is None:
        return "constant" if constant else "-"
    return f"{value:.3f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def ranking_table(comparison: Comparison) -> list[dict[str, Any]]:
    """The ranking table as report table data (id, keys, title, note, headers, rows): one row per judge with a
    ``ranking`` in its summary, in leaderboard order; none when no judge gives scores."""
    keys = [k for k in ranked(comparison) if comparison.judges[k].get("ranking")]
    if not keys:
        return []
    rows = []
    for key in keys:
        stats = comparison.judges[key]
        r = stats["ranking"]
        baseline = r.get("pr_auc_baseline")
        rows.append([comparison.labels[key], f"{r['n_scored']} / {stats['n']}", str(r["distinct_scores"]),
                     _auc(r.get("roc_auc"), r.get("roc_auc_ci95"), r["constant_score"]),
                     _auc(r.get("pr_auc"), r.get("pr_auc_ci95"), r["constant_score"]),
                     "-" if baseline is None else f"{baseline:.3f}", r.get("note") or "-"])
    return [{"id": "ranking", "keys": keys, "title": "Ranking by score (ROC AUC, PR AUC)", "note": RANKING_NOTE,
             "headers": RANKING_HEADERS, "rows": rows}]
