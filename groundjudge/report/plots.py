"""PNG plots of a comparison (matplotlib, Agg backend: no display needed).

Every judge keeps its colour from :data:`groundjudge.report.PALETTE` and its rank number (#1 = best
balanced accuracy) in every plot, as in report.md and on the HTML page. What the figures share (style, names,
subtitle, saving) is in :mod:`groundjudge.report.figures`; the figures per error type in
:mod:`groundjudge.report.error_type_plots`.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from groundjudge.metrics import classification_metrics, roc_points  # noqa: E402
from groundjudge.report.compare import (  # noqa: E402
    Comparison,
    per_response,
    ranked,
    score_based,
    slice_key,
)
from groundjudge.report.figures import (  # noqa: E402, F401  (run_dates re-exported: it was defined here)
    data_label,
    judge_names,
    run_dates,
    save,
    short,
    subtitle,
)
from groundjudge.types import ResultRecord  # noqa: E402

QUALITY = (("macro_f1", "macro-F1"), ("balanced_accuracy", "balanced accuracy"))


def pareto(points: list[tuple[float, float]]) -> list[int]:
    """Indices of the points that no other point beats (x no higher and y no lower, one strictly), by x."""
    keep = [i for i, (x, y) in enumerate(points)
            if not any(x2 <= x and y2 >= y and (x2 < x or y2 > y) for x2, y2 in points)]
    return sorted(keep, key=lambda i: (points[i][0], -points[i][1]))


def _judge_legend(fig: plt.Figure, comparison: Comparison, keys: list[str]) -> None:
    names = judge_names(comparison)
    handles = [Line2D([], [], marker="o", ls="", color=comparison.colours[k], label=short(names[k], 60)) for k in keys]
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 0.93), fontsize=8, frameon=False,
               title="judges (rank by bal. acc)", title_fontsize=8, alignment="left")


def tradeoff(comparison: Comparison, out: Path, cost: bool) -> Path | None:
    """Quality (macro-F1, balanced accuracy) against latency per response (log x) or $ per 1,000 responses,
    with the Pareto frontier marked (judges with labelled examples only)."""
    keys = [k for k in ranked(comparison) if comparison.judges[k].get("balanced_accuracy") is not None]
    if not keys:
        return None
    names = judge_names(comparison)
    if cost:
        xs = [per_response(comparison.judges[k])[0] for k in keys]
    else:
        lat = [comparison.judges[k]["latency_s"]["p50"] for k in keys]
        floor = min([x for x in lat if x > 0], default=1e-4) / 2
        xs = [max(x, floor) for x in lat]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
    for ax, (metric, title) in zip(axes, QUALITY):
        ys = [comparison.judges[k].get(metric) or 0.0 for k in keys]
        for x, y, key in zip(xs, ys, keys):
            ci = comparison.judges[key].get("ci95", {}).get(metric)
            if ci:
                ax.plot([x, x], ci, color=comparison.colours[key], alpha=0.35, lw=3, solid_capstyle="butt")
            ax.scatter([x], [y], s=46, color=comparison.colours[key], zorder=3, edgecolor="white", linewidth=0.6)
            ax.annotate(names[key].split(" ")[0], (x, y), textcoords="offset points", xytext=(5, 3), fontsize=7,
                        color="#333")
        front = pareto(list(zip(xs, ys)))
        ax.plot([xs[i] for i in front], [ys[i] for i in front], "--", color="#444", lw=1, zorder=2,
                drawstyle="steps-post", label="Pareto frontier")
        ax.scatter([xs[i] for i in front], [ys[i] for i in front], s=130, facecolor="none", edgecolor="#444",
                   lw=1, zorder=2)
        if not cost:
            ax.set_xscale("log")
        ax.set_xlabel("$ per 1,000 responses" if cost else "latency per response, median (s, log scale)")
        ax.set_ylabel(title)
        ax.set_ylim(min(0.0, min(ys) - 0.05), 1.02)
        ax.axhline(0.5, color="#999", lw=0.7, ls=":")
        ax.grid(alpha=0.25)
        ax.set_title(f"{title} vs {'cost' if cost else 'latency'}")
        ax.legend(loc="lower right", fontsize=7, frameon=False)
    _judge_legend(fig, comparison, keys)
    fig.text(0.01, -0.02, "bars: bootstrap 95% CI; circled: on the Pareto frontier (no judge is both "
             + ("cheaper" if cost else "faster") + " and better); dotted: chance (0.5)", fontsize=7, color="#555")
    fig.tight_layout()
    return save(fig, out / ("quality_vs_cost.png" if cost else "quality_vs_latency.png"))


def confusions(comparison: Comparison, out: Path) -> Path | None:
    """One confusion matrix per judge: gold rows, predicted columns with abstain; shaded by share of the gold row."""
    keys = [k for k in ranked(comparison) if comparison.judges[k].get("confusion")]
    if not keys:
        return None
    names = judge_names(comparison)
    cols = min(len(keys), 4)
    rows = math.ceil(len(keys) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.3 * cols, 2.7 * rows), squeeze=False)
    predicted = ("grounded", "ungrounded", "abstain")
    for ax, key in zip(axes.flat, keys):
        confusion = comparison.judges[key]["confusion"]
        counts = np.array([[confusion[g][p] for p in predicted] for g in ("grounded", "ungrounded")], dtype=float)
        share = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
        ax.imshow(share, cmap="Blues", vmin=0, vmax=1)
        for (i, j), value in np.ndenumerate(counts):
            ax.text(j, i, f"{int(value)}\n{share[i, j]:.0%}", ha="center", va="center", fontsize=8,
                    color="white" if share[i, j] > 0.55 else "#1a202c")
        ax.set_xticks(range(3), predicted, fontsize=7)
        ax.set_yticks(range(2), ["grounded", "ungrounded"], fontsize=7)
        ax.set_xlabel("predicted", fontsize=7)
        ax.set_ylabel("gold", fontsize=7)
        ax.set_title(short(names[key], 40), fontsize=8, color=comparison.colours[key])
        for spine in ax.spines.values():
            spine.set_visible(False)
    for ax in list(axes.flat)[len(keys):]:
        ax.axis("off")
    fig.tight_layout()
    return save(fig, out / "confusion_matrices.png")


def _sweep_curve(records: list[ResultRecord], grid: np.ndarray) -> np.ndarray | None:
    labelled = [r for r in records if r.example.label is not None]
    if len({r.example.label for r in labelled}) < 2 or len({r.result.verdict.score for r in labelled} - {None}) < 2:
        return None
    return sweep_balanced_accuracy([r.example.label for r in labelled], [r.result.verdict.score for r in labelled],
                                   grid)


def sweep_balanced_accuracy(gold: list[str], scores: list[float | None], grid: np.ndarray) -> np.ndarray:
    """Balanced accuracy at every threshold of ``grid`` (grounded when score >= threshold, an answer without a
    score abstaining): what :func:`~groundjudge.metrics.classification_metrics` gives at each threshold, from the
    sorted scores of each class in O((answers + thresholds) log answers), not answers x thresholds."""
    recalls = []
    for label, caught in (("ungrounded", "below"), ("grounded", "at_or_above")):
        mine = np.sort(np.array([s for g, s in zip(gold, scores) if g == label and s is not None], dtype=float))
        total = sum(g == label for g in gold)
        below = np.searchsorted(mine, grid, side="left")   # scores < threshold
        hits = below if caught == "below" else len(mine) - below
        recalls.append(hits / total if total else np.zeros(len(grid)))
    return np.stack(recalls, axis=-1).mean(axis=-1)


def threshold_sweep(comparison: Comparison, out: Path) -> Path | None:
    """Balanced accuracy against the threshold for each score-based judge, on the dev records (calibration.jsonl)
    and on the evaluated ones, with the threshold the judge used marked."""
    panels = []
    for key in ranked(comparison):
        if comparison.kind(key) in ("cascade", "fallback"):
            continue
        used = score_based(comparison.results[key])
        if used is None:
            continue
        scores = [r.result.verdict.score for r in comparison.results[key] + comparison.dev_results.get(key, [])
                  if r.result.verdict.score is not None]
        grid = np.unique(np.concatenate([np.linspace(0, 1, 201), scores, [used]]))
        curves = {"evaluated": _sweep_curve(comparison.results[key], grid),
                  "dev (calibration)": _sweep_curve(comparison.dev_results.get(key, []), grid)}
        if any(c is not None for c in curves.values()):
            panels.append((key, used, grid, curves))
    if not panels:
        return None
    names = judge_names(comparison)
    cols = min(len(panels), 3)
    rows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.1 * rows), squeeze=False)
    for ax, (key, used, grid, curves) in zip(axes.flat, panels):
        colour = comparison.colours[key]
        for name, curve in curves.items():
            if curve is not None:
                ax.plot(grid, curve, color=colour, lw=1.6 if name == "evaluated" else 1.2,
                        ls="-" if name == "evaluated" else ":", drawstyle="steps-post", label=name)
        source = comparison.judges[key].get("threshold_source") or "records"
        ax.axvline(used, color="#333", lw=1, ls="--", label=f"used: {used:.3f} ({short(source, 24)})")
        ax.axhline(0.5, color="#999", lw=0.7, ls=":")
        ax.set_ylim(0, 1.02)
        ax.set_xlim(min(0.0, grid.min()), max(1.0, grid.max()))
        ax.set_title(short(names[key], 44), fontsize=8, color=colour)
        ax.set_xlabel("threshold (score ≥ t is grounded)", fontsize=7)
        ax.set_ylabel("balanced accuracy", fontsize=7)
        ax.grid(alpha=0.25)
        ax.legend(fontsize=6.5, loc="lower left", frameon=False)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.tight_layout()
    return save(fig, out / "threshold_sweep.png")


def roc_curves(comparison: Comparison, out: Path) -> Path | None:
    """ROC curves of every judge whose scores rank the answers, on one figure: ungrounded answers caught against
    grounded answers flagged as a threshold on the score moves, on the labelled answers each judge scored; the
    diagonal is chance, and the legend gives each judge's ROC AUC with its bootstrap 95% CI and how many answers
    it scored. Judges whose scores are all equal (constant) are named under the plot, not drawn."""
    order = ranked(comparison)
    ranking = {k: comparison.judges[k].get("ranking") or {} for k in order}
    keys = [k for k in order if ranking[k].get("roc_auc") is not None]
    if not keys:
        return None
    names = judge_names(comparison)
    fig, ax = plt.subplots(figsize=(5.0, 5.0))       # square axes; the legend and notes extend the saved figure
    ax.plot([0, 1], [0, 1], ls=":", color="#888", lw=1, label="chance (AUC 0.5)")
    for key in keys:
        labelled = [r for r in comparison.results[key] if r.example.label is not None]
        fpr, tpr = roc_points([r.example.label for r in labelled], [r.result.verdict.score for r in labelled])
        r = ranking[key]
        ci = r.get("roc_auc_ci95")
        label = (f"{short(names[key], 48)}: {r['roc_auc']:.3f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")
                 + f", n={r['n_scored']}")
        ax.plot(fpr, tpr, color=comparison.colours[key], lw=1.6, label=label)
    ax.set_xlim(-0.01, 1.01)
    ax.set_ylim(-0.01, 1.01)
    ax.set_aspect("equal")
    ax.set_xlabel("grounded answers flagged (false positive rate)")
    ax.set_ylabel("ungrounded answers caught (true positive rate)")
    ax.set_title(f"ROC curves of the judges' scores\n{short(data_label(comparison), 90)}", fontsize=9, loc="left")
    ax.grid(alpha=0.25)
    ax.legend(loc="upper left", bbox_to_anchor=(1.03, 1.0), fontsize=7, frameon=False,
              title="judge (rank by bal. acc): ROC AUC [95% CI], answers scored", title_fontsize=7,
              alignment="left")
    notes = ["flagged: 1 − score above a threshold; on each judge's labelled answers with a score"]
    left_out = [f"{names[k]} (constant score)" for k in order if ranking[k].get("constant_score")]
    left_out += [f"{names[k]} ({ranking[k]['note']})" for k in order
                 if ranking[k] and ranking[k].get("roc_auc") is None and not ranking[k].get("constant_score")]
    left_out += [f"{names[k]} (no score)" for k in order if not ranking[k]]
    if left_out:
        notes.append("not drawn: " + "; ".join(short(text, 100) for text in left_out))
    ax.text(0, -0.14, "\n".join(textwrap.fill(note, 110) for note in notes), transform=ax.transAxes, fontsize=7,
            color="#555", va="top")
    return save(fig, out / "roc_curves.png")


def error_types(comparison: Comparison, out: Path) -> Path | None:
    """Per gold error type, the share of ungrounded answers each judge missed (grouped bars; abstentions are not
    misses here, unlike the recall heat map of :func:`groundjudge.report.error_type_plots.recall_heatmap`)."""
    keys = [k for k in ranked(comparison) if comparison.judges[k].get("per_error_type")]
    if not keys:
        return None
    kinds = sorted({kind for k in keys for kind in comparison.judges[k]["per_error_type"]})
    fig, ax = plt.subplots(figsize=(min(13.0, max(7.0, 0.22 * len(kinds) * len(keys) + 2)), 4.2))
    width = 0.8 / len(keys)
    for i, key in enumerate(keys):
        per_type = comparison.judges[key]["per_error_type"]
        heights = np.array([per_type[kind]["miss_rate"] if kind in per_type else np.nan for kind in kinds])
        xs = np.arange(len(kinds)) + (i - (len(keys) - 1) / 2) * width
        ax.bar(xs, heights, width * 0.92, color=comparison.colours[key])
        zero = heights == 0                        # a miss rate of 0 still gets a visible mark
        ax.scatter(xs[zero], heights[zero] + 0.008, marker="_", s=(72 * width * 0.9) ** 2 / 4,
                   color=comparison.colours[key], linewidths=2.5)
    totals = {kind: max(comparison.judges[k]["per_error_type"].get(kind, {}).get("n", 0) for k in keys) for kind in kinds}
    ax.set_xticks(np.arange(len(kinds)), [f"{kind}\n(n={totals[kind]})" for kind in kinds], rotation=25, ha="right",
                  fontsize=7.5)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("missed: share judged grounded")
    ax.text(0, -0.32, "a flat mark on the axis: none missed", transform=ax.transAxes, fontsize=7, color="#555")
    ax.set_title("ungrounded answers missed, by gold error type (lower is better)\n"
                 f"{subtitle(comparison, keys)}", fontsize=9, loc="left")
    ax.grid(axis="y", alpha=0.25)
    _judge_legend(fig, comparison, keys)
    fig.tight_layout()
    return save(fig, out / "error_types.png")


def slices(comparison: Comparison, out: Path) -> Path | None:
    """Balanced accuracy per judge on each value of the examples' domain / source / dataset (a heat map)."""
    found = slice_key(comparison)
    if found is None:
        return None
    field, values = found
    keys = ranked(comparison)
    names = judge_names(comparison)
    matrix = np.full((len(keys), len(values)), np.nan)
    sizes = {v: 0 for v in values}
    for i, key in enumerate(keys):
        for j, value in enumerate(values):
            part = [r for r in comparison.results[key]
                    if r.example.label is not None and str(r.example.meta.get(field)) == value]
            sizes[value] = max(sizes[value], len(part))
            if len({r.example.label for r in part}) == 2:
                matrix[i, j] = classification_metrics([r.example.label for r in part],
                                                      [r.result.verdict.label for r in part])["balanced_accuracy"]
    if np.isnan(matrix).all():
        return None
    fig, ax = plt.subplots(figsize=(max(6.0, 0.75 * len(values) + 3.5), max(2.2, 0.36 * len(keys) + 1.6)))
    image = ax.imshow(np.ma.masked_invalid(matrix), cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    for (i, j), value in np.ndenumerate(matrix):
        ax.text(j, i, "–" if np.isnan(value) else f"{value:.2f}", ha="center", va="center", fontsize=7,
                color="#1a202c")
    ax.set_xticks(range(len(values)), [f"{short(v, 22)}\n(n={sizes[v]})" for v in values], rotation=30, ha="right",
                  fontsize=7)
    ax.set_yticks(range(len(keys)), [short(names[k], 44) for k in keys], fontsize=7)
    for tick, key in zip(ax.get_yticklabels(), keys):
        tick.set_color(comparison.colours[key])
    ax.set_title(f"balanced accuracy by {field} (–: the {field} lacks one of the two classes, or the judge "
                 "did not judge it)", fontsize=8)
    fig.colorbar(image, ax=ax, fraction=0.03, pad=0.02)
    fig.tight_layout()
    return save(fig, out / "slices.png")


def make_plots(comparison: Comparison, out: Path) -> list[Path]:
    """Every plot the data supports, written into ``out`` (the per error type figures from
    :mod:`groundjudge.report.error_type_plots`)."""
    from groundjudge.report.error_type_plots import error_type_figures

    out.mkdir(parents=True, exist_ok=True)
    made = [tradeoff(comparison, out, cost=False), tradeoff(comparison, out, cost=True), confusions(comparison, out),
            threshold_sweep(comparison, out), roc_curves(comparison, out), error_types(comparison, out),
            *error_type_figures(comparison, out), slices(comparison, out)]
    return [p for p in made if p is not None]
