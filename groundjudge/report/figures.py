"""What every figure of a report shares: the Agg backend and style, a judge's ``#rank label``, a short text, saving
a PNG, and the subtitle naming the data and the day the runs started.

Used by :mod:`groundjudge.report.plots` and :mod:`groundjudge.report.error_type_plots`.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from groundjudge.report.compare import Comparison, ranked  # noqa: E402

DPI = 110
"""Resolution of every PNG."""

plt.rcParams.update({"font.size": 9, "axes.spines.top": False, "axes.spines.right": False,
                     "axes.titlesize": 10, "figure.facecolor": "white"})


def short(text: str, width: int = 48) -> str:
    """``text`` cut to ``width`` characters, with an ellipsis where it was cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


def judge_names(comparison: Comparison) -> dict[str, str]:
    """'#rank label' per judge key."""
    return {key: f"#{i} {comparison.labels[key]}" for i, key in enumerate(ranked(comparison), start=1)}


def save(fig: plt.Figure, path: Path) -> Path:
    """Write the figure as a PNG at ``path`` and close it; returns the path."""
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path


def data_label(comparison: Comparison) -> str:
    """The data the runs judged, in a few words: each data folder with its files (``nli_textfooler
    (mnli_mismatched, snli)``, ``summedits (8 files)``, ``legal_qa``) and the evaluated part (split)."""
    folders: dict[str, list[str]] = {}
    for run in comparison.runs:
        for name in run.records.header.dataset.files:
            path = Path(name)
            stems = folders.setdefault(path.parent.name or path.stem, [])
            stem = path.name.split(".")[0]
            if stem not in stems:
                stems.append(stem)
    parts = []
    for folder, stems in folders.items():
        if stems == [folder]:
            parts.append(folder)
        else:
            parts.append(f"{folder} ({', '.join(stems) if len(stems) <= 3 else f'{len(stems)} files'})")
    splits = sorted({run.records.header.eval_split or "all" for run in comparison.runs})
    return f"data: {'; '.join(parts)}; evaluated: {' / '.join(splits)}"


def run_dates(comparison: Comparison, keys: list[str]) -> str:
    """The day (or first – last day) the runs of these judges started, e.g. ``2026-11-23``."""
    runs = {comparison.run_of[k] for k in keys}
    days = sorted({run.records.header.started_at[:10] for run in comparison.runs if run.name in runs})
    if not days:
        return "date unknown"
    return days[0] if len(days) == 1 else f"{days[0]} – {days[-1]}"


def subtitle(comparison: Comparison, keys: list[str]) -> str:
    """A figure's second title line: its data and the day its runs started."""
    return f"{short(data_label(comparison), 90)}; runs started {run_dates(comparison, keys)}"
