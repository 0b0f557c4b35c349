"""The stacked judge over the committed runs' scores: does a logistic regression over every judge beat the best one?

For each data set (SummEdits, nli_unseen) the committed records of the LLM judges (``results/llm/<set>/*``) and
the local judges (``results/local/<set>``) are read with the project's record readers and joined on the answers
every judge scored. The stack is fitted with the stacked judge's own fitting code
(:func:`groundjudge.judges.stack_fit.fit_stack`: logistic regression, abstentions imputed with the fit part's
mean, threshold maximising balanced accuracy on the fit part) by grouped cross-fitting: the documents are dealt
into K folds (seeded), each fold is held out once and scored by the stack fitted on the others, so every answer
gets a held-out score and no document is on both sides. Every single judge gets the same treatment (its threshold
fitted on the same fit parts, its abstentions given the fit part's mean). The stack is compared with the best single
judge on the same held-out answers: delta balanced accuracy and delta ROC AUC with paired-bootstrap 95% intervals
(resampling answers, and resampling documents), and McNemar's exact p on the held-out verdicts. The cross-fitting is
repeated over several fold seeds to show how much the numbers move with the split.

    python scripts/tune_stack_committed.py --out results/tune/stack
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from groundjudge.judges.stack import stacked_score
from groundjudge.judges.stack_fit import fit_stack
from groundjudge.metrics import fit_threshold, mcnemar_p
from groundjudge.runs.records import find_records, read_records

ROOT = Path(__file__).resolve().parents[1]
SETS = ("summedits", "nli_unseen")
VARIANTS = {"C=1": 1.0, "C=auto": "auto"}
"""The stacks compared: the judge's default regularisation, and C chosen by grouped CV inside each fit part."""
SKIPPED_RUNS = {"cascade": "a composite of cosine and the claims chain, both already features",
                "report": "not a run"}


@dataclass
class Table:
    """One data set's answers x judges: scores (None: abstained), gold labels, documents."""

    name: str
    judges: list[str]
    ids: list[str]
    scores: list[list[float | None]]
    labels: list[str]
    groups: list[str]
    skipped: dict[str, str]


def short_name(run: str, spec: str) -> str:
    """A judge's column name: the LLM run's folder, or the local judge's kind with its model setting cut."""
    if run != "local":
        return f"{run} (LLM)"
    return spec.split(":model=")[0] + (" (gj-minilm)" if "gj-minilm" in spec else "")


def read_set(name: str) -> Table:
    """The committed scores of every judge on one data set, joined on the answers all of them scored."""
    columns: dict[str, dict[str, float | None]] = {}
    examples = {}
    skipped = {}
    runs = [(p.name, p) for p in sorted((ROOT / "results" / "llm" / name).iterdir())] + \
        [("local", ROOT / "results" / "local" / name)]
    for run, folder in runs:
        if run in SKIPPED_RUNS:
            skipped[run] = SKIPPED_RUNS[run]
            continue
        records = read_records(find_records(folder))
        for record in records.results:
            column = columns.setdefault(short_name(run, record.judge), {})
            verdict = record.result.verdict
            column[record.example.id] = None if verdict.label == "abstain" else verdict.score
            examples[record.example.id] = record.example
    common = sorted(set.intersection(*(set(c) for c in columns.values())))
    judges = []
    for judge, column in columns.items():
        distinct = {column[i] for i in common if column[i] is not None}
        if len(distinct) < 2:
            skipped[judge] = "no score on any answer" if not distinct else "the same score on every answer"
        else:
            judges.append(judge)
    return Table(name=name, judges=judges, ids=common,
                 scores=[[columns[j][i] for j in judges] for i in common],
                 labels=[examples[i].label for i in common], groups=[examples[i].group for i in common],
                 skipped=skipped)


def folds_of(groups: list[str], k: int, seed: int) -> np.ndarray:
    """The fold of every answer: the documents shuffled (seeded) and dealt round-robin into k folds."""
    unique = sorted(set(groups))
    order = np.random.default_rng(seed).permutation(len(unique))
    fold_of_group = {unique[g]: n % k for n, g in enumerate(order)}
    return np.array([fold_of_group[g] for g in groups])


def single_fit(scores: list[float | None], labels: list[str]) -> tuple[float, float]:
    """A single judge fitted like the stack: (its fit-part mean for abstentions, its threshold)."""
    present = [s for s in scores if s is not None]
    mean = float(np.mean(present)) if present else 0.5
    threshold, _ = fit_threshold([mean if s is None else s for s in scores], labels)
    return mean, threshold


def cross_fit(table: Table, k: int, seed: int, C: float | str = 1.0) -> dict[str, np.ndarray]:
    """Held-out scores and verdicts (1 = grounded) of the stack and of every single judge, by grouped k folds."""
    folds = folds_of(table.groups, k, seed)
    n = len(table.ids)
    out = {name: np.zeros(n) for name in ("stack", *table.judges)}
    verdicts = {name: np.zeros(n, dtype=int) for name in out}
    chosen = []
    for fold in range(k):
        fit_idx, held = np.flatnonzero(folds != fold), np.flatnonzero(folds == fold)
        if not len(held):
            continue
        rows = [table.scores[i] for i in fit_idx]
        labels = [table.labels[i] for i in fit_idx]
        calibration = fit_stack(table.judges, rows, labels, [table.ids[i] for i in fit_idx], f"fold {fold}", C=C,
                                groups=[table.groups[i] for i in fit_idx])
        chosen.append(calibration.fit.C)
        for i in held:
            score = stacked_score(calibration.fit, table.scores[i])
            out["stack"][i] = score
            verdicts["stack"][i] = int(score >= calibration.threshold)
        for j, judge in enumerate(table.judges):
            mean, threshold = single_fit([r[j] for r in rows], labels)
            for i in held:
                value = mean if table.scores[i][j] is None else table.scores[i][j]
                out[judge][i], verdicts[judge][i] = value, int(value >= threshold)
    return {"scores": out, "verdicts": verdicts, "C": chosen}


def balanced_accuracy(y: np.ndarray, predicted: np.ndarray) -> float:
    """Mean of the recall on grounded (1) and on ungrounded (0) answers."""
    return float(np.mean([np.mean(predicted[y == c] == c) for c in (0, 1)]))


def paired_deltas(y: np.ndarray, a: tuple, b: tuple, resample: list[np.ndarray]) -> dict[str, list[float]]:
    """Bootstrap distribution of B - A (balanced accuracy, ROC AUC) over the given index resamples; a = (scores,
    verdicts) of A."""
    deltas = {"balanced_accuracy": [], "roc_auc": []}
    for idx in resample:
        t = y[idx]
        if t.min() == t.max():
            continue
        deltas["balanced_accuracy"].append(balanced_accuracy(t, b[1][idx]) - balanced_accuracy(t, a[1][idx]))
        deltas["roc_auc"].append(roc_auc_score(t, b[0][idx]) - roc_auc_score(t, a[0][idx]))
    return deltas


def resamples(groups: list[str], n_boot: int, seed: int, by_group: bool) -> list[np.ndarray]:
    """Bootstrap index sets: answers drawn with replacement, or whole documents drawn with replacement."""
    rng = np.random.default_rng(seed)
    n = len(groups)
    if not by_group:
        return [rng.integers(0, n, n) for _ in range(n_boot)]
    members: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    blocks = list(members.values())
    return [np.concatenate([blocks[b] for b in rng.integers(0, len(blocks), len(blocks))]) for _ in range(n_boot)]


def interval(values: list[float]) -> list[float]:
    """The percentile 95% interval."""
    return [float(np.quantile(values, 0.025)), float(np.quantile(values, 0.975))]


def compare(table: Table, held: dict, n_boot: int, seed: int) -> dict:
    """The stack against the best single judge (by held-out ROC AUC) on the same held-out answers."""
    y = np.array([label == "grounded" for label in table.labels], dtype=int)
    metrics = {name: {"balanced_accuracy": balanced_accuracy(y, held["verdicts"][name]),
                      "roc_auc": float(roc_auc_score(y, held["scores"][name]))} for name in held["scores"]}
    best = max(table.judges, key=lambda j: metrics[j]["roc_auc"])
    a = (held["scores"][best], held["verdicts"][best])
    b = (held["scores"]["stack"], held["verdicts"]["stack"])
    result = {"best_single": best, "metrics": metrics, "delta": {}, "C_per_fold": held["C"]}
    for by_group in (False, True):
        deltas = paired_deltas(y, a, b, resamples(table.groups, n_boot, seed, by_group))
        for metric, values in deltas.items():
            entry = result["delta"].setdefault(metric, {"delta": metrics["stack"][metric] - metrics[best][metric]})
            entry["ci95_answers" if not by_group else "ci95_documents"] = interval(values)
    result["mcnemar_p"] = mcnemar_p(a[1] == y, b[1] == y)
    return result


def full_fit(table: Table) -> dict:
    """The stack fitted on every answer (for reading its weights only; its numbers are in-sample)."""
    fit = fit_stack(table.judges, table.scores, table.labels, table.ids, "all answers").fit
    return {"weights": dict(zip(table.judges, fit.weights)), "intercept": fit.intercept,
            "imputed": dict(zip(table.judges, fit.imputed))}


def ungrouped_auc(table: Table, k: int, seed: int) -> float:
    """Held-out ROC AUC of the stack with answers (not documents) dealt into folds: for reference only, since a
    document's other edits then sit in the fit part."""
    ungrouped = Table(**{**table.__dict__, "groups": list(table.ids)})
    held = cross_fit(ungrouped, k, seed)
    y = np.array([label == "grounded" for label in table.labels], dtype=int)
    return float(roc_auc_score(y, held["scores"]["stack"]))


def sensitivity(table: Table, k: int) -> list[dict]:
    """The stack's held-out numbers (fold seed 0) for other regularisation strengths: how much C matters. Not a
    selection: choosing C by these would tune on the held-out answers (the judge's default, C = 1, is reported)."""
    y = np.array([label == "grounded" for label in table.labels], dtype=int)
    rows = []
    for C in (0.1, 1.0, 10.0, 100.0):
        held = cross_fit(table, k, 0, C)
        rows.append({"C": C, "stack_roc_auc": float(roc_auc_score(y, held["scores"]["stack"])),
                     "stack_balanced_accuracy": balanced_accuracy(y, held["verdicts"]["stack"])})
    return rows


def analyse(table: Table, k: int, seeds: int, n_boot: int) -> dict:
    """Everything reported for one data set."""
    y = np.array([label == "grounded" for label in table.labels], dtype=int)
    main = {variant: compare(table, cross_fit(table, k, 0, C), n_boot, 0) for variant, C in VARIANTS.items()}
    repeats = []
    for seed in range(seeds):
        row = {"seed": seed}
        for variant, C in VARIANTS.items():
            held = cross_fit(table, k, seed, C)
            row[variant] = {"roc_auc": float(roc_auc_score(y, held["scores"]["stack"])),
                            "balanced_accuracy": balanced_accuracy(y, held["verdicts"]["stack"])}
            row["best_single_roc_auc"] = max(float(roc_auc_score(y, held["scores"][j])) for j in table.judges)
        repeats.append(row)
    return {"data": table.name, "n": len(table.ids), "documents": len(set(table.groups)),
            "grounded": sum(label == "grounded" for label in table.labels), "features": table.judges,
            "skipped": table.skipped, "folds": k, "seed0": main, "repeats": repeats,
            "ungrouped_5fold_roc_auc_seed0": ungrouped_auc(table, 5, 0), "weights_on_all_answers": full_fit(table),
            "sensitivity_C": sensitivity(table, k)}


def _ci(entry: dict, key: str) -> str:
    low, high = entry[key]
    return f"[{low:+.3f}, {high:+.3f}]"


def tables(results: dict) -> str:
    """The Markdown tables of results.md, from summary.json's content."""
    lines = ["# Stacked judge over the committed runs' scores: the tables", "",
             "Made by `python scripts/tune_stack_committed.py --out results/tune/stack` from `summary.json` "
             "(see README.md). Held-out = grouped 5-fold cross-fitting, fold seed 0.", "",
             "## Stack against the best single judge (same held-out answers)", "",
             "| data | stack | held-out ROC AUC | best single judge (its AUC) | delta ROC AUC [95% CI answers] "
             "[95% CI documents] | held-out bal. acc | best single's bal. acc | delta bal. acc [95% CI answers] "
             "[95% CI documents] | McNemar p | C per fold |",
             "|---|---|---:|---|---|---:|---:|---|---:|---|"]
    for name, r in results.items():
        for variant, main in r["seed0"].items():
            m, d, best = main["metrics"], main["delta"], main["best_single"]
            auc, bal = d["roc_auc"], d["balanced_accuracy"]
            lines.append(
                f"| {name} ({r['n']} answers, {r['documents']} documents) | {variant} | {m['stack']['roc_auc']:.3f} | "
                f"{best} ({m[best]['roc_auc']:.3f}) | {auc['delta']:+.3f} {_ci(auc, 'ci95_answers')} "
                f"{_ci(auc, 'ci95_documents')} | {m['stack']['balanced_accuracy']:.3f} | "
                f"{m[best]['balanced_accuracy']:.3f} | {bal['delta']:+.3f} {_ci(bal, 'ci95_answers')} "
                f"{_ci(bal, 'ci95_documents')} | {main['mcnemar_p']:.3g} | "
                f"{', '.join(f'{c:g}' for c in main['C_per_fold'])} |")
    lines += ["", "## Repeated cross-fitting (other fold seeds): the stack's held-out numbers", "",
              "| data | stack | fold seeds | ROC AUC mean (min-max) | bal. acc mean (min-max) | best single ROC AUC |",
              "|---|---|---:|---|---|---:|"]
    for name, r in results.items():
        for variant in r["seed0"]:
            aucs = [x[variant]["roc_auc"] for x in r["repeats"]]
            bals = [x[variant]["balanced_accuracy"] for x in r["repeats"]]
            lines.append(f"| {name} | {variant} | {len(aucs)} | "
                         f"{np.mean(aucs):.3f} ({min(aucs):.3f}-{max(aucs):.3f}) | "
                         f"{np.mean(bals):.3f} ({min(bals):.3f}-{max(bals):.3f}) | "
                         f"{r['repeats'][0]['best_single_roc_auc']:.3f} |")
    lines += ["", "## Every judge on the held-out answers (fold seed 0; thresholds fitted on the fit parts)", ""]
    for name, r in results.items():
        metrics = r["seed0"]["C=1"]["metrics"] | {"stack C=auto": r["seed0"]["C=auto"]["metrics"]["stack"]}
        lines += [f"**{name}** — left out: " + "; ".join(f"{k} ({v})" for k, v in r["skipped"].items()
                                                         if k != "report"), "",
                  "| judge | ROC AUC | bal. acc | weight in a fit on all answers (C=1) |", "|---|---:|---:|---:|"]
        weights = r["weights_on_all_answers"]["weights"]
        for judge, m in sorted(metrics.items(), key=lambda kv: -kv[1]["roc_auc"]):
            label = "stack C=1" if judge == "stack" else judge
            weight = f"{weights[judge]:+.2f}" if judge in weights else "-"
            lines.append(f"| {label} | {m['roc_auc']:.3f} | {m['balanced_accuracy']:.3f} | {weight} |")
        lines.append("")
    lines += ["## Sensitivity to C (fold seed 0; not a selection)", "", "| data | C | ROC AUC | bal. acc |",
              "|---|---:|---:|---:|"]
    for name, r in results.items():
        lines += [f"| {name} | {x['C']:g} | {x['stack_roc_auc']:.3f} | {x['stack_balanced_accuracy']:.3f} |"
                  for x in r["sensitivity_C"]]
    lines += ["", "Ungrouped 5-fold (answers, not documents, dealt into folds; a document's other edits sit in the "
              "fit part), stack C=1, ROC AUC: " + ", ".join(f"{name} {r['ungrouped_5fold_roc_auc_seed0']:.3f}"
                                                            for name, r in results.items()), ""]
    return "\n".join(lines)


def main() -> None:
    """Analyse every set and write summary.json and results.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results/tune/stack")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=10, help="fold seeds of the repeated cross-fitting")
    parser.add_argument("--n-boot", type=int, default=2000)
    parser.add_argument("--tables-only", action="store_true", help="rewrite results.md from OUT/summary.json")
    args = parser.parse_args()
    out = Path(args.out)
    if args.tables_only:
        results = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    else:
        results = {name: analyse(read_set(name), args.folds, args.seeds, args.n_boot) for name in SETS}
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    (out / "results.md").write_text(tables(results), encoding="utf-8")
    for name, r in results.items():
        for variant, main in r["seed0"].items():
            m, d, best = main["metrics"], main["delta"], main["best_single"]
            print(f"{name} {variant}: n={r['n']} docs={r['documents']} stack AUC {m['stack']['roc_auc']:.3f} "
                  f"BA {m['stack']['balanced_accuracy']:.3f}; best {best} AUC {m[best]['roc_auc']:.3f} "
                  f"BA {m[best]['balanced_accuracy']:.3f}; dAUC {d['roc_auc']} dBA {d['balanced_accuracy']} "
                  f"McNemar p {main['mcnemar_p']:.3g}")
        print(f"{name}: ungrouped 5-fold AUC {r['ungrouped_5fold_roc_auc_seed0']:.3f}")


if __name__ == "__main__":
    main()
