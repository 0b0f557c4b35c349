"""PPI++ against the classical interval on committed runs (gold hidden), for ``scripts/label_budget.py --part ppi``.

For each case a judge's accuracy over the whole set is estimated from the first 25, 50, 100 and 200 labels of
seeded uniform queues, three ways: PPI++ with a reference judge's verdicts (``groundjudge.labels.ppi``), the
classical CLT interval from the labels alone, and the design-based posterior of ``groundjudge.labels.estimates``
(post-stratified on the two judges' verdicts). References are the committed runs' own judges, and, to show what a
good reference would buy, *simulated* references: the gold label flipped at random on 20% / 10% of answers (errors
independent of the judge's: an optimistic case, marked as simulated).
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import numpy as np

from groundjudge.labels.estimates import estimate, strata_counts
from groundjudge.labels.ppi import ppi_estimates
from groundjudge.labels.queue import build_queue
from groundjudge.labels.strata import pattern
from groundjudge.metrics import classification_metrics
from committed_runs import verdicts_of

BUDGETS = (25, 50, 100, 200)
"""Labels at which the intervals are taken."""

CASES = [
    {"name": "SummEdits (200): Qwen 1.5B direct P(yes), reference claims",
     "judge": ("results/llm/summedits/direct_logprobs", None), "reference": ("results/llm/summedits/claims", None)},
    {"name": "SummEdits (200): Qwen 1.5B claims, reference direct P(yes)",
     "judge": ("results/llm/summedits/claims", None), "reference": ("results/llm/summedits/direct_logprobs", None)},
    {"name": "ContractNLI (162): Qwen 1.5B direct P(yes), reference claims",
     "judge": ("results/llm/contractnli/direct_logprobs", None), "reference": ("results/llm/contractnli/claims", None)},
    {"name": "SummEdits test: quip, reference cosine", "judge": ("results/baselines/summedits", "quip:n=21"),
     "reference": ("results/baselines/summedits", "cosine")},
    {"name": "SummEdits test: quip, simulated reference 80% right", "judge": ("results/baselines/summedits", "quip:n=21"),
     "reference": 0.8},
    {"name": "SummEdits test: quip, simulated reference 90% right", "judge": ("results/baselines/summedits", "quip:n=21"),
     "reference": 0.9},
    {"name": "ContractNLI test: cosine, simulated reference 80% right",
     "judge": ("results/baselines/contractnli", "cosine"), "reference": 0.8},
    {"name": "ContractNLI test: cosine, simulated reference 90% right",
     "judge": ("results/baselines/contractnli", "cosine"), "reference": 0.9},
]
"""The judges measured and their references: (run folder, judge spec or None = its only judge), or the accuracy of a
simulated reference."""


def _reference(case: dict, gold: dict[str, str], seed: int) -> dict[str, str]:
    if isinstance(case["reference"], float):
        flip = {"grounded": "ungrounded", "ungrounded": "grounded"}
        rng = np.random.default_rng(seed)
        return {i: g if rng.random() < case["reference"] else flip[g] for i, g in sorted(gold.items())}
    return verdicts_of(*case["reference"])[0]


def measure_case(case: dict, seeds: int, draws: int) -> dict:
    """Mean widths and coverage of the three intervals per budget for one case."""
    said, gold = verdicts_of(*case["judge"])
    reference = _reference(case, gold, 1)
    ids = sorted(set(said) & set(reference) & set(gold))
    judges = ("judge", "reference")
    verdicts = {i: {"judge": said[i], "reference": reference[i]} for i in ids}
    truth = classification_metrics([gold[i] for i in ids], [said[i] for i in ids])["accuracy"]
    ref_acc = classification_metrics([gold[i] for i in ids], [reference[i] for i in ids])["accuracy"]
    kinds = ("ppi", "classical", "design")
    widths = {k: {b: [] for b in BUDGETS if b <= len(ids)} for k in kinds}
    covered = {k: {b: [] for b in widths[k]} for k in kinds}
    for seed in range(seeds):
        queue = build_queue({i: pattern(v, judges) for i, v in verdicts.items()}, "uniform", None, seed)
        for budget in widths["ppi"]:
            known = {item.id: gold[item.id] for item in queue[:budget]}
            ppi = ppi_estimates(verdicts, judges, known, queue, "reference").judges.get("judge")
            design = estimate(strata_counts(verdicts, judges, known), judges, draws=draws, seed=seed)
            if ppi is None:
                continue
            intervals = {"ppi": ppi["accuracy"].ci95,
                         "classical": ppi["accuracy"].classical_ci95,
                         "design": design.judges["judge"]["accuracy"].ci95}
            for kind, (low, high) in intervals.items():
                widths[kind][budget].append(high - low)
                covered[kind][budget].append(low <= truth <= high)
    return {"case": case["name"], "n": len(ids), "judge_accuracy": truth, "reference_accuracy": ref_acc,
            "simulated_reference": isinstance(case["reference"], float),
            "agreement": float(np.mean([said[i] == reference[i] for i in ids])),
            "budgets": list(widths["ppi"]),
            **{f"{k}_mean_width": [float(np.mean(widths[k][b])) if widths[k][b] else None for b in widths[k]]
               for k in kinds},
            **{f"{k}_coverage": float(np.mean([c for b in covered[k] for c in covered[k][b]])) for k in kinds},
            "queues_with_ppi": [len(widths["ppi"][b]) for b in widths["ppi"]]}


def plot(results: list[dict], path: Path) -> None:
    """Mean 95% interval width of a judge's accuracy against labels: PPI++, classical, design-based."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, (len(results) + 1) // 2, figsize=(3.4 * ((len(results) + 1) // 2), 6.4), sharey=True)
    for ax, result in zip(np.ravel(axes), results):
        for kind, style in (("ppi", "-"), ("classical", "--"), ("design", ":")):
            ax.plot(result["budgets"], result[f"{kind}_mean_width"], style, marker=".", label=kind)
        ax.set_title(f"{result['case']}\n(reference right on {result['reference_accuracy']:.0%})", fontsize=7)
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(result["budgets"], [str(b) for b in result["budgets"]], fontsize=7)
        ax.set_xlabel("labels (uniform queue)", fontsize=7)
    np.ravel(axes)[0].set_ylabel("95% interval width, accuracy")
    np.ravel(axes)[0].legend(fontsize=7)
    fig.suptitle(f"groundjudge estimate: PPI++ vs classical on committed runs (gold hidden), {date.today()}; "
                 "python scripts/label_budget.py --part ppi", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def run_ppi(out: Path, seeds: int, draws: int) -> None:
    """Measure every case, write ``ppi.json`` and ``ppi_width.png`` under ``out`` and print a summary."""
    results = [measure_case(case, seeds, draws) for case in CASES]
    (out / "ppi.json").write_text(json.dumps({
        "date": str(date.today()), "command": "python scripts/label_budget.py --part ppi --out results/labels",
        "seeds": seeds, "draws": draws, "cases": results}, indent=1) + "\n", encoding="utf-8")
    plot(results, out / "ppi_width.png")
    for r in results:
        ratio = [p / c if p and c else None for p, c in zip(r["ppi_mean_width"], r["classical_mean_width"])]
        print(f"{r['case']}: n={r['n']} judge {r['judge_accuracy']:.3f} ref {r['reference_accuracy']:.3f} "
              f"agree {r['agreement']:.1%}; widths ppi {r['ppi_mean_width']} classical {r['classical_mean_width']} "
              f"design {r['design_mean_width']}; ppi/classical {ratio}; coverage ppi {r['ppi_coverage']:.3f} "
              f"classical {r['classical_coverage']:.3f} design {r['design_coverage']:.3f}")
