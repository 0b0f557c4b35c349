"""PNG figures per gold error type: which judge catches which error type (a type × judge heat map of recall,
``error_type_recall.png``) and, for each judge that types errors, the confusion matrix of its typing
(``error_type_confusion_<judge>.png``). Each figure names its data, its judges and the runs' dates.

Called from :func:`groundjudge.report.plots.make_plots`; judges keep their colour and rank number as there
(:mod:`groundjudge.report.figures`).
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from groundjudge.report.compare import Comparison, ranked  # noqa: E402
from groundjudge.report.figures import judge_names, save, short, subtitle  # noqa: E402
from groundjudge.runs.error_type_stats import MIN_TYPE_N  # noqa: E402


def _sizes(comparison: Comparison, keys: list[str], kind: str) -> str:
    sizes = sorted({comparison.judges[k]["error_type_recall"][kind]["n"] for k in keys
                    if kind in comparison.judges[k]["error_type_recall"]})
    return f"n={sizes[0]}" if len(sizes) == 1 else f"n={sizes[0]}–{sizes[-1]}"


def recall_heatmap(comparison: Comparison, out: Path) -> Path | None:
    """Rows gold error types, columns judges (by rank): the share of each type's ungrounded answers the judge
    called ungrounded (abstentions not caught), on a 0..1 colour scale with the value and k/n in each cell; the
    type each judge misses most (of the types with 5 answers or more) is boxed."""
    keys = [k for k in ranked(comparison) if comparison.judges[k].get("error_type_recall")]
    if not keys:
        return None
    names = judge_names(comparison)
    kinds = sorted({kind for k in keys for kind in comparison.judges[k]["error_type_recall"]})
    matrix = np.full((len(kinds), len(keys)), np.nan)
    for j, key in enumerate(keys):
        for i, kind in enumerate(kinds):
            row = comparison.judges[key]["error_type_recall"].get(kind)
            if row and row["rate"] is not None:
                matrix[i, j] = row["rate"]
    fig, ax = plt.subplots(figsize=(max(5.5, 1.05 * len(keys) + 3.8), max(2.8, 0.5 * len(kinds) + 2.0)))
    image = ax.imshow(np.ma.masked_invalid(matrix), cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    for j, key in enumerate(keys):
        recall = comparison.judges[key]["error_type_recall"]
        for i, kind in enumerate(kinds):
            row = recall.get(kind)
            text = "–" if row is None or row["rate"] is None else f"{row['rate']:.2f}\n{row['k']}/{row['n']}"
            ax.text(j, i, text, ha="center", va="center", fontsize=7, color="#1a202c")
        worst = comparison.judges[key].get("most_missed_type")
        if worst in kinds:
            ax.add_patch(Rectangle((j - 0.47, kinds.index(worst) - 0.47), 0.94, 0.94, fill=False, lw=1.8,
                                   edgecolor="#1a202c"))
    ax.set_yticks(range(len(kinds)), [f"{short(kind, 32)} ({_sizes(comparison, keys, kind)})" for kind in kinds],
                  fontsize=7.5)
    ax.set_xticks(range(len(keys)), [short(names[k], 36) for k in keys], rotation=30, ha="right", fontsize=7)
    for tick, key in zip(ax.get_xticklabels(), keys):
        tick.set_color(comparison.colours[key])
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.set_title(f"Recall by gold error type (higher is better)\n{subtitle(comparison, keys)}", fontsize=9,
                 loc="left")
    fig.colorbar(image, ax=ax, fraction=0.035, pad=0.02, label="recall")
    note = ("recall: share of the type's ungrounded answers the judge called ungrounded (abstentions: not caught); "
            "judges (columns) ranked by balanced accuracy; in each cell: recall and caught/n; boxed: the type the "
            f"judge misses most (types with n ≥ {MIN_TYPE_N}); –: no such answers")
    fig.text(0.01, -0.02, textwrap.fill(note, 130), fontsize=7, color="#555", va="top")
    fig.tight_layout()
    return save(fig, out / "error_type_recall.png")


def slug(label: str) -> str:
    """A judge label as a file name part: lower case, runs of other characters as ``_`` (at most 60)."""
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")[:60].rstrip("_") or "judge"


def typing_confusion(comparison: Comparison, key: str, out: Path, name: str) -> Path:
    """One typing judge's confusion matrix: gold error type rows, the judge's type of the answer as columns
    (``none``: judged grounded, abstained or untyped), counts shaded by their share of the gold row; the title
    gives the macro-F1 of the typing."""
    typing = comparison.judges[key]["error_typing"]
    rows, columns = typing["types"], typing["predicted"]
    counts = np.array([[typing["confusion"][g][p] for p in columns] for g in rows], dtype=float)
    share = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    fig, ax = plt.subplots(figsize=(max(5.0, 0.85 * len(columns) + 3.2), max(2.8, 0.45 * len(rows) + 2.2)))
    ax.imshow(share, cmap="Blues", vmin=0, vmax=1, aspect="auto")
    for (i, j), value in np.ndenumerate(counts):
        ax.text(j, i, f"{int(value)}" if value == 0 else f"{int(value)}\n{share[i, j]:.0%}", ha="center",
                va="center", fontsize=7, color="white" if share[i, j] > 0.55 else "#1a202c")
    ax.set_xticks(range(len(columns)), [short(c, 30) for c in columns], rotation=30, ha="right", fontsize=7)
    ax.set_yticks(range(len(rows)), [f"{short(g, 30)} (n={int(counts[i].sum())})" for i, g in enumerate(rows)],
                  fontsize=7)
    ax.set_xlabel("type the judge gave the answer", fontsize=7)
    ax.set_ylabel("gold error type", fontsize=7)
    for spine in ax.spines.values():
        spine.set_visible(False)
    names = judge_names(comparison)
    ax.set_title(f"Error typing of {short(names[key], 60)}: macro-F1 {typing['macro_f1']:.2f}, typed as gold "
                 f"{typing['accuracy']:.2f} (n={typing['n']})\n{subtitle(comparison, [key])}", fontsize=8.5,
                 loc="left", color=comparison.colours[key])
    note = ("shaded by share of the gold row; an answer's type: that of its least-supported typed claim; none: judged "
            "grounded, abstained or typed nothing")
    fig.text(0.01, -0.02, textwrap.fill(note, 120), fontsize=7, color="#555", va="top")
    fig.tight_layout()
    return save(fig, out / f"error_type_confusion_{name}.png")


def typing_confusions(comparison: Comparison, out: Path) -> list[Path]:
    """A confusion-matrix PNG per judge that types errors (by rank), each named after the judge's label."""
    made, taken = [], set()
    for key in ranked(comparison):
        if not comparison.judges[key].get("error_typing"):
            continue
        name, i = slug(comparison.labels[key]), 2
        while name in taken:
            name, i = f"{slug(comparison.labels[key])}_{i}", i + 1
        taken.add(name)
        made.append(typing_confusion(comparison, key, out, name))
    return made


def error_type_figures(comparison: Comparison, out: Path) -> list[Path]:
    """Every per error type figure the data supports: the recall heat map, then one typing confusion matrix per
    typing judge."""
    heatmap = recall_heatmap(comparison, out)
    return ([heatmap] if heatmap else []) + typing_confusions(comparison, out)
