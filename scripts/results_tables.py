"""The Markdown tables of results/README.md, from the committed run directories (nothing typed by hand).

    python scripts/results_tables.py results/local [results/llm ...] [--price-as openai/gpt-4o-mini]

Each argument is a folder of run directories (``<folder>/<data set>/`` or ``<folder>/<data set>/<judge>/``);
every run is summarised again from its records (``records.jsonl.gz``), so the tables cannot drift from the
runs. One table per folder: a row per (data set, judge) with n, balanced accuracy and macro-F1 with their
bootstrap 95% intervals, the ROC AUC of the judge's scores with its interval (``constant`` when every answer got
the same score, ``-`` when the judge gives none), abstentions, the threshold and where it was fitted, latency per response, tokens and
dollars per 1,000 responses, and — for a cascade — its escalation rate and the local judge's own balanced
accuracy on the same answers. Where replies came from the call cache (a cascade reusing the claims run's
calls), the latency is also given as it would have been had every call been made. ``--price-as MODEL`` adds
what each judge's recorded tokens would cost per 1,000 responses at MODEL's list price (litellm's table): a
local model's tokens are free, and this is the bill the same chains would run up on that API, to the extent
that its tokenizer and its replies' lengths match the local model's.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from groundjudge.llm import LLMSettings, price
from groundjudge.runs.records import find_records, read_records
from groundjudge.report.compare import display_name, ranking_value
from groundjudge.runs.summary import summarize
from groundjudge.report.tables import TextTable

HEADERS = ["data set", "eval n", "judge", "bal. acc [95% CI]", "macro-F1 [95% CI]", "ROC AUC [95% CI]", "abstained",
           "threshold (fitted on)", "latency p50 / p95 s", "tokens in / out per response", "$ / 1k responses"]


def _ci(value: float | None, ci: list[float] | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3f} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else f"{value:.3f}"


def _threshold(stats: dict[str, Any]) -> str:
    if stats.get("threshold") is None:
        return "-"
    source = str(stats.get("threshold_source") or "spec").split(" (")[0]
    return f"{stats['threshold']:.3f} ({source})"


def _cost(stats: dict[str, Any]) -> str:
    n = max(stats["n"], 1)
    return f"{1000 * (stats.get('cost_usd') or 0) / n:.2f}"


def _tokens(stats: dict[str, Any]) -> str:
    n = max(stats["n"], 1)
    tokens = stats.get("tokens") or {}
    if not tokens.get("input"):
        return "-"
    return f"{tokens['input'] / n:.0f} / {tokens['output'] / n:.0f}"


def _priced(stats: dict[str, Any], model: str) -> str:
    tokens = stats.get("tokens") or {}
    if not tokens.get("input"):
        return "-"
    total = price(LLMSettings(model=model), tokens["input"], tokens.get("output", 0))
    return f"{1000 * total / max(stats['n'], 1):.2f}"


def _roc_auc(stats: dict[str, Any]) -> str:
    value, text, ci = ranking_value(stats, "roc_auc")
    return text if value is None else _ci(value, ci)


def judge_row(name: str, spec: str, stats: dict[str, Any], price_as: str | None = None) -> list[str]:
    """One table row for one judge of one run (with the tokens priced as ``price_as`` when given)."""
    latency = stats["latency_s"]
    shown = f"{latency['p50']:.3g} / {latency['p95']:.3g}"
    if stats.get("latency_s_uncached"):
        uncached = stats["latency_s_uncached"]
        shown += f" (uncached {uncached['p50']:.3g} / {uncached['p95']:.3g})"
    label = display_name(spec)
    cascade = stats.get("cascade")
    if cascade:
        label += f" (escalated {cascade.get('escalation_rate', 0):.0%}"
        if cascade.get("local_balanced_accuracy") is not None:
            label += f"; local alone {cascade['local_balanced_accuracy']:.3f}"
        label += ")"
    return [name, str(stats["n"]), label, _ci(stats["balanced_accuracy"], stats["ci95"]["balanced_accuracy"]),
            _ci(stats["macro_f1"], stats["ci95"]["macro_f1"]), _roc_auc(stats), str(stats["n_abstained"]),
            _threshold(stats),
            shown, _tokens(stats), _cost(stats)] + ([_priced(stats, price_as)] if price_as else [])


def folder_table(folder: Path, price_as: str | None = None) -> TextTable:
    """The table of every run directory in ``folder`` (sorted by data set name)."""
    rows = []
    runs = sorted({path.parent for path in folder.rglob("records.jsonl*") if "report" not in path.parts})
    for run in runs:
        summary = summarize(read_records(find_records(run)))
        for spec, stats in summary["judges"].items():
            rows.append(judge_row(run.relative_to(folder).parts[0], spec, stats, price_as))
    headers = HEADERS + ([f"$ / 1k responses at {price_as} prices"] if price_as else [])
    return TextTable(title=str(folder), headers=headers, rows=rows)


def main() -> None:
    """Print one Markdown table per folder."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--price-as", metavar="MODEL", help="also price the recorded tokens at this model's list price")
    args = parser.parse_args()
    for folder in args.folders:
        print(folder_table(folder, args.price_as).to_markdown())


if __name__ == "__main__":
    main()
