"""Showing runs: comparison of judges (``compare``), Markdown, the self-contained HTML page, plots and tables.

The comparison helpers are re-exported here; the Markdown, HTML and plot writers are imported from their
modules (``groundjudge.report.markdown``, ``.html``, ``.plots``) so that reading a run does not load matplotlib.
"""

from groundjudge.report.compare import (
    LEADERBOARD_COLUMNS,
    Comparison,
    compare,
    comparison_table,
    display_name,
    example_key,
    leaderboard,
    pairwise_table,
    ranked,
)

__all__ = [
    "LEADERBOARD_COLUMNS", "Comparison", "compare", "comparison_table", "display_name", "example_key",
    "leaderboard", "pairwise_table", "ranked",
]
