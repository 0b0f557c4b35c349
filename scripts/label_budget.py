"""How many human labels separate two judges: the stratified queue against a uniform one, on committed runs.

For each pair of judges, the gold labels of the committed runs are hidden and given back one at a time in queue
order, as a person labelling the queue would give them. After each step of labels the pair's difference in accuracy
and in balanced accuracy is estimated (``groundjudge.labels.estimates``); over many seeded queues the script
reports the labels each strategy needs before the 95% interval excludes 0 and before its half-width reaches 0.05,
the ratio of labels uniform needs for the interval width the stratified queue reaches, and draws the mean
interval width against labels (``ci_width.png``). Beside the old stratified queue and uniform it measures the
queues built for one metric (``groundjudge label RUN --for accuracy|balanced_accuracy``: Neyman allocation,
``groundjudge.labels.allocation``), named ``neyman:accuracy`` and ``neyman:balanced_accuracy``, and the adaptive
queues (``groundjudge label RUN [--for METRIC]``, the default: re-planned from the labels after each batch of 10,
``groundjudge.labels.adaptive``), named ``adaptive:accuracy`` and ``adaptive:balanced_accuracy``: a person labels
the queue in order and it is re-planned whenever a batch is done, as ``groundjudge label`` does.

    python scripts/label_budget.py --out results/labels

``--part ppi`` (part of the default ``all``) measures the prediction-powered intervals (``groundjudge.labels.ppi``)
instead: on seeded *uniform* queues, a judge's accuracy over the whole set from the first 25, 50, 100 and 200
labels, with a reference judge's verdicts as predictions, against the classical (labels-only) interval and the
design-based one; written to ``ppi.json`` and ``ppi_width.png``.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from groundjudge.labels.adaptive import adaptive_queue, replan_due  # noqa: E402
from groundjudge.labels.estimates import estimate, strata_counts  # noqa: E402
from groundjudge.labels.queue import build_metric_queue, build_queue  # noqa: E402
from groundjudge.labels.strata import pattern  # noqa: E402
from committed_runs import verdicts_of  # noqa: E402  (scripts/ is on the path: run as a script)

PAIRS = [
    {"name": "SummEdits test: quip vs cosine", "a": ("results/baselines/summedits", "quip:n=21"),
     "b": ("results/baselines/summedits", "cosine")},
    {"name": "SummEdits test: nli vs cross-encoder (MiniLM)", "a": ("results/local/summedits", "nli:model=models/gj-minilm,answer_score=entailment"),
     "b": ("results/local/summedits", "crossencoder:model=models/gj-minilm,answer_score=entailment")},
    {"name": "ContractNLI test: quip vs cosine", "a": ("results/baselines/contractnli", "quip:n=21"),
     "b": ("results/baselines/contractnli", "cosine")},
    {"name": "SummEdits test (200): Qwen 1.5B direct P(yes) vs claims", "a": ("results/llm/summedits/direct_logprobs", None),
     "b": ("results/llm/summedits/claims", None)},
    {"name": "ContractNLI test (200): Qwen 1.5B direct P(yes) vs claims", "a": ("results/llm/contractnli/direct_logprobs", None),
     "b": ("results/llm/contractnli/claims", None)},
]
"""The pairs measured: (run folder, judge spec; None = the run's only judge) for each side."""


STRATEGIES = ("stratified", "uniform", "neyman:accuracy", "neyman:balanced_accuracy", "adaptive:accuracy",
              "adaptive:balanced_accuracy")
"""The queues compared: the old stratified one, uniform, the two built for one metric and fixed (--for METRIC
--batch 0), and the two adaptive ones (--for METRIC; adaptive:balanced_accuracy is the default queue)."""


def adaptive_order(strata: dict, judges, metric: str, gold: dict, seed: int) -> list:
    """The items of the adaptive queue in the order a person labelling it in order gives them, re-planned
    whenever a batch is done."""
    given: dict[str, str] = {}
    queue = adaptive_queue(strata, judges, metric, given, (), {"seed": seed})
    order = []
    while len(given) < len(queue):
        item = next(item for item in queue if item.id not in given)
        given[item.id] = gold[item.id]
        order.append(item)
        if replan_due(queue, given):
            queue = adaptive_queue(strata, judges, metric, given, queue, {"seed": seed})
    return order


def steps_for(n: int) -> list[int]:
    """Label counts at which the estimate is taken: every 5 up to 100, then every 10 up to 400, then every 25."""
    grid = list(range(5, min(n, 100) + 1, 5)) + list(range(110, min(n, 400) + 1, 10)) + list(range(425, n + 1, 25))
    return grid if grid and grid[-1] == n else grid + [n]


def trace(verdicts: dict, gold: dict, strategy: str, seed: int, draws: int) -> list[dict]:
    """Interval of a - b after each step of labels of one seeded queue."""
    judges = ("a", "b")
    strata = {i: pattern(v, judges) for i, v in verdicts.items()}
    if strategy.startswith("adaptive:"):
        queue = adaptive_order(strata, judges, strategy.split(":", 1)[1], gold, seed)
    elif strategy.startswith("neyman:"):
        queue = build_metric_queue(strata, judges, strategy.split(":", 1)[1], None, None, seed)
    else:
        queue = build_queue(strata, strategy, None, seed)
    points = []
    for k in steps_for(len(queue)):
        known = {item.id: gold[item.id] for item in queue[:k]}
        result = estimate(strata_counts(verdicts, judges, known), judges, draws=draws, seed=seed)
        points.append({"labels": k, **{p.metric: {"estimate": p.estimate, "ci95": list(p.ci95)} for p in result.pairs}})
    return points


def first(points: list[dict], metric: str, test) -> int | None:
    """Labels at the first step where ``test(ci95, estimate)`` holds and keeps holding to the end."""
    found = None
    for point in points:
        ok = test(point[metric]["ci95"])
        found = (found or point["labels"]) if ok else None
    return found


def measure(pair: dict, seeds: int, draws: int) -> dict:
    """Every figure of one pair, over ``seeds`` queues per strategy."""
    va, gold = verdicts_of(*pair["a"])
    vb, _ = verdicts_of(*pair["b"])
    ids = sorted(set(va) & set(vb) & set(gold))
    verdicts = {i: {"a": va[i], "b": vb[i]} for i in ids}
    truth = {}
    from groundjudge.metrics import classification_metrics
    for metric in ("accuracy", "balanced_accuracy"):
        scores = [classification_metrics([gold[i] for i in ids], [verdicts[i][j] for i in ids])[metric] for j in "ab"]
        truth[metric] = scores[0] - scores[1]
    disagree = sum(v["a"] != v["b"] for v in verdicts.values()) / len(ids)
    out = {"pair": pair["name"], "a": pair["a"][1] or pair["a"][0], "b": pair["b"][1] or pair["b"][0], "n": len(ids),
           "disagreement_share": disagree, "expected_gain": 1 / disagree if disagree else None,
           "true_difference": truth, "strategies": {}}
    for strategy in STRATEGIES:
        traces = [trace(verdicts, gold, strategy, seed, draws) for seed in range(seeds)]
        labels = [p["labels"] for p in traces[0]]
        per_metric = {}
        for metric in ("accuracy", "balanced_accuracy"):
            widths = np.array([[p[metric]["ci95"][1] - p[metric]["ci95"][0] for p in t] for t in traces])
            excl = [first(t, metric, lambda ci: ci[0] > 0 or ci[1] < 0) for t in traces]
            tight = [first(t, metric, lambda ci: (ci[1] - ci[0]) / 2 <= 0.05) for t in traces]
            covered = np.mean([[p[metric]["ci95"][0] <= truth[metric] <= p[metric]["ci95"][1] for p in t]
                               for t in traces])
            per_metric[metric] = {
                "mean_width": widths.mean(axis=0).tolist(),
                "labels_to_exclude_0_median": _median(excl), "excluded_0_in_share_of_queues": np.mean([e is not None for e in excl]),
                "labels_to_half_width_0.05_median": _median(tight),
                "coverage_of_true_difference": float(covered)}
        out["strategies"][strategy] = {"labels": labels, **per_metric}
    out["measured_gain"] = {m: label_ratio(out, m) for m in ("accuracy", "balanced_accuracy")}
    out["measured_gain_by_queue"] = {s: {m: label_ratio(out, m, s) for m in ("accuracy", "balanced_accuracy")}
                                     for s in STRATEGIES if s != "uniform"}
    return out


def _median(values: list[int | None]) -> float | None:
    found = [v for v in values if v is not None]
    return float(np.median(found)) if len(found) * 2 >= len(values) else None


def label_ratio(result: dict, metric: str, strategy: str = "stratified") -> dict:
    """Labels uniform needs for the mean interval width that ``strategy``'s queue reaches at a few budgets."""
    strat, unif = result["strategies"][strategy], result["strategies"]["uniform"]
    labels = np.array(strat["labels"], dtype=float)
    ratios = {}
    for budget in (25, 50, 100, 200):
        if budget > labels[-1]:
            continue
        width = float(np.interp(budget, labels, strat[metric]["mean_width"]))
        widths_u = np.array(unif[metric]["mean_width"])
        reached = np.nonzero(widths_u <= width)[0]
        ratios[str(budget)] = float(unif["labels"][reached[0]] / budget) if len(reached) else None
    return ratios


def plot(results: list[dict], path: Path) -> None:
    """Mean 95% interval width of a - b (accuracy, then balanced accuracy) against labels, per pair and queue."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(results), figsize=(4.2 * len(results), 7.0), sharey="row", squeeze=False)
    styles = {"stratified": "-", "uniform": "--", "neyman:accuracy": "-.", "neyman:balanced_accuracy": ":",
              "adaptive:accuracy": (0, (5, 1, 1, 1, 1, 1)), "adaptive:balanced_accuracy": (0, (1, 1))}
    for row, metric in enumerate(("accuracy", "balanced_accuracy")):
        for ax, result in zip(axes[row], results):
            for strategy in STRATEGIES:
                s = result["strategies"][strategy]
                ax.plot(s["labels"], s[metric]["mean_width"], linestyle=styles[strategy], label=strategy)
            ax.axhline(0.10, color="grey", lw=0.8, ls=":")
            ax.set_title(f"{result['pair']}\n(disagree on {result['disagreement_share']:.0%})", fontsize=8)
            ax.set_xlabel("labels")
            ax.set_xscale("log")
        axes[row][0].set_ylabel(f"95% interval width, {metric.replace('_', ' ')} a - b")
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"groundjudge label / estimate on committed runs (gold hidden), {date.today()}; "
                 "python scripts/label_budget.py", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results/labels")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--part", choices=("all", "budget", "ppi"), default="all",
                        help="budget: stratified vs uniform queues; ppi: PPI++ vs classical intervals; all: both")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.part in ("all", "ppi"):
        from label_budget_ppi import run_ppi

        run_ppi(out, args.seeds, args.draws)
    if args.part == "ppi":
        return 0
    results = [measure(pair, args.seeds, args.draws) for pair in PAIRS]
    (out / "label_budget.json").write_text(json.dumps({
        "date": str(date.today()), "command": "python scripts/label_budget.py --out results/labels",
        "seeds": args.seeds, "draws": args.draws, "pairs": results}, indent=1) + "\n", encoding="utf-8")
    plot(results, out / "ci_width.png")
    for r in results:
        s, u = r["strategies"]["stratified"], r["strategies"]["uniform"]
        print(f"{r['pair']}: n={r['n']}, disagree {r['disagreement_share']:.1%} (1/d = {r['expected_gain']:.1f}); "
              f"true diff acc {r['true_difference']['accuracy']:+.3f}")
        for m in ("accuracy", "balanced_accuracy"):
            print(f"   {m}: excl0 strat {s[m]['labels_to_exclude_0_median']} unif {u[m]['labels_to_exclude_0_median']}; "
                  f"hw.05 strat {s[m]['labels_to_half_width_0.05_median']} unif {u[m]['labels_to_half_width_0.05_median']}; "
                  f"gain {r['measured_gain'][m]}; coverage {s[m]['coverage_of_true_difference']:.3f}/"
                  f"{u[m]['coverage_of_true_difference']:.3f}")
            for kind in ("neyman", "adaptive"):
                n = r["strategies"][f"{kind}:{m}"]
                print(f"   {m} {kind}:{m}: excl0 {n[m]['labels_to_exclude_0_median']}; hw.05 "
                      f"{n[m]['labels_to_half_width_0.05_median']}; gain "
                      f"{r['measured_gain_by_queue'][f'{kind}:{m}'][m]}; "
                      f"coverage {n[m]['coverage_of_true_difference']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
