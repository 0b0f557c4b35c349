"""Human-readable views of runs: the terminal comparison table, and the merged comparison that
``groundjudge report`` renders (report_md, plots, report_html).

Everything here is computed from the records: each run's summary is recomputed with
:func:`groundjudge.runs.summary.summarize`, never read from ``summary.json``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from groundjudge.metrics import mcnemar_p
from groundjudge.report.compare_notes import (
    common_note,
    data_notes,
    latency_caption,
    latency_notes,
)
from groundjudge.runs.agreement import pair_agreement
from groundjudge.runs.latency import at_concurrency
from groundjudge.runs.records import RunRecords, find_records, read_records
from groundjudge.runs.summary import summarize
from groundjudge.types import Example, JudgeSpec, ResultRecord


def _ci(value: float | None, ci: list[float] | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def ranking_value(stats: dict[str, Any], metric: str) -> tuple[float | None, str, list[float] | None]:
    """A judge's ROC AUC or PR AUC (``metric``: ``roc_auc`` / ``pr_auc``) from its summary's ``ranking``:
    (value, text, 95% CI). The text is ``constant`` for a judge whose scores are all equal, ``-`` for one without
    scores or without an AUC (one gold class); a PR AUC's text carries its chance level, ``0.712 (chance 0.48)``."""
    ranking = stats.get("ranking") or {}
    value = ranking.get(metric)
    if value is None:
        return None, "constant" if ranking.get("constant_score") else "-", None
    text = f"{value:.3f}"
    if metric == "pr_auc" and ranking.get("pr_auc_baseline") is not None:
        text += f" (chance {ranking['pr_auc_baseline']:.2f})"
    return value, text, ranking.get(f"{metric}_ci95")


def comparison_table(summary: dict[str, Any]) -> Table:
    """One row per judge: quality with 95% CIs, ROC AUC, abstentions, threshold, latency, cost."""
    data = summary["dataset"]
    table = Table(title=f"groundjudge — {data['n']} examples ({data.get('eval_split') or 'all'}) "
                        f"from {', '.join(data['files'])}")
    shared = shared_concurrency(summary["judges"].values())
    for column in ("judge", "bal. acc [95% CI]", "macro-F1 [95% CI]", "ROC AUC [95% CI]", "macro P", "macro R", "acc",
                   "grounded (abstain)", "threshold", f"latency p50/p95 s {shared or '@concurrency'}", "queue share",
                   "wall s / answer", "$", "tokens in/out"):
        table.add_column(column, justify="left" if column == "judge" else "right")
    for spec, s in summary["judges"].items():
        wall = s.get("wall_s_per_answer")
        ci = s.get("ci95", {})
        threshold = "-" if s.get("threshold") is None else f"{s['threshold']:.3f} ({s['threshold_source']})"
        roc, roc_text, roc_ci = ranking_value(s, "roc_auc")
        table.add_row(
            Text(spec),   # a name like claims[prompts=strict] is text, not rich markup
            _ci(s.get("balanced_accuracy"), ci.get("balanced_accuracy")),
            _ci(s.get("macro_f1"), ci.get("macro_f1")),
            roc_text if roc is None else _ci(roc, roc_ci),
            _ci(s.get("macro_precision"), None),
            _ci(s.get("macro_recall"), None),
            _ci(s.get("accuracy"), None),
            ("-" if s.get("grounded_share") is None else f"{s['grounded_share']:.0%}") + f" ({s['n_abstained']})",
            threshold,
            f"{s['latency_s']['p50']:.4f}/{s['latency_s']['p95']:.4f}" + ("" if shared else f" {at_concurrency(s)}"),
            f"{s.get('queue_share', 0.0):.0%}",
            "-" if wall is None else f"{wall:.4f}",
            f"{s['cost_usd']:.4f}",
            f"{s['tokens']['input']}/{s['tokens']['output']}",
        )
    caption = latency_caption(summary["judges"])
    if caption is not None:
        table.caption = caption
        table.caption_justify = "left"
    return table


def shared_concurrency(summaries) -> str | None:
    """``@N`` when every judge's latency was measured at the same concurrency N, else None (then each latency
    cell carries its own ``@N``)."""
    ats = {at_concurrency(s) for s in summaries}
    return ats.pop() if len(ats) == 1 else None


def pairwise_table(summary: dict[str, Any]) -> Table:
    """Every two judges: agreement and Cohen's kappa on the answers both decided (no labels needed), the
    disagreements, and McNemar's exact p on the labelled answers both judged."""
    table = Table(title="Between judges: agreement on every answer both decided (no labels needed); McNemar (exact) "
                        "on the labelled answers both judged")
    for column in ("a", "b", "both decided", "agree", "kappa [95% CI]", "disagree (a g / b u, a u / b g)",
                   "labelled n", "McNemar p"):
        table.add_column(column, justify="left" if column in ("a", "b") else "right")
    for row in summary["pairwise"]:
        kappa = "-" if row.get("kappa") is None else _ci(row["kappa"], row.get("kappa_ci95"))
        agree = "-" if row.get("agreement") is None else f"{row['agreement']:.1%}"
        split = f"{row.get('a_grounded_b_ungrounded', 0)} / {row.get('a_ungrounded_b_grounded', 0)}"
        p = row.get("mcnemar_p")
        table.add_row(Text(row["a"]), Text(row["b"]), str(row.get("n_both", "-")), agree, kappa,
                      f"{row.get('disagreements', 0)} ({split})", str(row["n"]), "-" if p is None else f"{p:.4g}")
    return table


# --- the comparison behind `groundjudge report` -------------------------------------------------

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#393b79", "#e7ba52", "#637939", "#de9ed6", "#843c39", "#6baed6",
           "#fd8d3c", "#74c476", "#9e9ac8", "#252525")
"""One colour per judge, the same in every plot and on the HTML page."""

CONNECTION_SETTINGS = ("api_base", "api_key_env", "timeout", "max_attempts", "concurrency", "rpm", "tpm")
"""Settings that say how to reach a model, not how it judges: left out of display names."""

_CONNECTION = re.compile(r"[,;]?\b(?:" + "|".join(CONNECTION_SETTINGS) + r")=[^,;]*")


def display_name(spec: str) -> str:
    """A judge spec without its connection settings (``claims:model=m,api_base=http://...`` -> ``claims:model=m``)."""
    short = _CONNECTION.sub("", spec)
    short = re.sub(r":[,;]", ":", short).rstrip(":,;")
    return short or spec


def example_key(example: Example) -> str:
    """An example's identity across runs: its id, plus its content so that equal ids on other data stay apart."""
    content = json.dumps([example.question, list(example.context), example.answer, example.label], sort_keys=True)
    return f"{example.id}#{hashlib.sha256(content.encode('utf-8')).hexdigest()[:10]}"


@dataclass
class LoadedRun:
    """A run directory read back: its records, calibration records and recomputed summary."""

    path: Path
    records: RunRecords
    summary: dict[str, Any]
    calibration: RunRecords | None = None

    @property
    def name(self) -> str:
        """The run's directory name, used to tell apart judges with the same spec."""
        return self.path.resolve().name


@dataclass
class Comparison:
    """Several runs merged: one entry per judge, keyed by its spec (``<run dir>/<spec>`` when specs repeat)."""

    runs: list[LoadedRun]
    judges: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per judge key: its recomputed summary."""
    specs: dict[str, str] = field(default_factory=dict)
    """Per judge key: the spec as given on its run's command line."""
    labels: dict[str, str] = field(default_factory=dict)
    """Per judge key: a short display name (unique)."""
    colours: dict[str, str] = field(default_factory=dict)
    run_of: dict[str, str] = field(default_factory=dict)
    results: dict[str, list[ResultRecord]] = field(default_factory=dict)
    dev_results: dict[str, list[ResultRecord]] = field(default_factory=dict)
    pairwise: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Caveats about comparing these runs (different data)."""
    recorded: dict[str, JudgeSpec] = field(default_factory=dict)
    """Per judge key: the judge as its run's header records it (kind, settings, templates)."""

    def kind(self, key: str) -> str:
        """The judge kind of a key (``claims``), also for judges named in an experiment file."""
        spec = self.recorded.get(key)
        return spec.name if spec else self.specs[key].split(":")[0]


def load_run(path: str | Path, gold: Mapping[str, Any] | None = None) -> LoadedRun:
    """Read a run directory and recompute its summary from the records (nothing else is trusted); with ``gold``
    (human labels by example id), every answer is scored against those labels instead."""
    path = Path(path)
    records = read_records(find_records(path))
    if gold is not None:
        from groundjudge.labels.gold import relabel_records

        records = relabel_records(records, gold)
    calibration_file = find_records(path, "calibration.jsonl")
    calibration = read_records(calibration_file) if calibration_file.exists() else None
    return LoadedRun(path=path, records=records, summary=summarize(records), calibration=calibration)


def _pairwise(results: dict[str, list[ResultRecord]]) -> list[dict[str, Any]]:
    """Between every two judges (across runs too): exact McNemar on the labelled examples both judged, and
    agreement, kappa and disagreements on every example both decided (no labels needed)."""
    correct = {spec: {example_key(r.example): r.result.verdict.label == r.example.label
                      for r in records if r.example.label is not None}
               for spec, records in results.items()}
    verdicts = {spec: {example_key(r.example): r.result.verdict.label for r in records}
                for spec, records in results.items()}
    rows = []
    for a, b in combinations(results, 2):
        shared = sorted(correct[a].keys() & correct[b].keys())
        rows.append({"a": a, "b": b, "n": len(shared),
                     "mcnemar_p": mcnemar_p([correct[a][k] for k in shared], [correct[b][k] for k in shared])
                     if shared else None,
                     **pair_agreement(verdicts[a], verdicts[b])})
    return rows


def judged_keys(run: LoadedRun) -> frozenset[str]:
    """The keys (``example_key``) of every example the run judged."""
    return frozenset(example_key(r.example) for r in run.records.results)


def _data_notes(runs: list[LoadedRun]) -> list[str]:
    if len(runs) < 2:
        return []
    return data_notes([judged_keys(run) for run in runs], [run.records.header.dataset.hash for run in runs])


def restricted_to_common(runs: list[LoadedRun]) -> tuple[list[LoadedRun], int]:
    """The runs cut down to the examples every one of them judged (summaries recomputed), and how many that is."""
    keys = [judged_keys(run) for run in runs]
    shared = frozenset.intersection(*keys) if keys else frozenset()
    if not shared:
        raise ValueError("the runs have no example in common: nothing to compare on the same data")
    cut = []
    for run, judged in zip(runs, keys, strict=True):
        if judged == shared:
            cut.append(run)
            continue
        records = RunRecords(header=run.records.header,
                             results=[r for r in run.records.results if example_key(r.example) in shared])
        cut.append(LoadedRun(path=run.path, records=records, summary=summarize(records), calibration=run.calibration))
    return cut, len(shared)


def compare(paths: list[str | Path], common_only: bool = False, labels: str | Path | None = None) -> Comparison:
    """Merge runs; a judge spec used in more than one run is named ``<run dir>/<spec>``.

    With ``common_only`` every run is cut down to the examples all of them judged, so every row is on the same data.
    With ``labels`` (a labels file or a run folder holding one) every run is scored against those human labels.
    """
    gold = None
    if labels is not None:
        from groundjudge.labels.gold import load_gold

        ids = {r.example.id for p in paths for r in read_records(find_records(Path(p))).results}
        gold = load_gold(labels, ids)
    runs = [load_run(p, gold) for p in paths]
    notes = _data_notes(runs)
    if common_only and notes:
        runs, shared = restricted_to_common(runs)
        notes = [common_note(shared)]
    seen: dict[str, int] = {}
    for run in runs:
        for spec in run.summary["judges"]:
            seen[spec] = seen.get(spec, 0) + 1
    comparison = Comparison(runs=runs, notes=notes)
    for run in runs:
        for spec, stats in run.summary["judges"].items():
            key = f"{run.name}/{spec}" if seen[spec] > 1 else spec
            if key in comparison.judges:              # the same run directory name twice
                key = f"{run.path}/{spec}"
            comparison.judges[key] = stats
            comparison.specs[key] = spec
            comparison.run_of[key] = run.name
            recorded = next((s for s in run.records.header.judges if s.spec == spec), None)
            if recorded is not None:
                comparison.recorded[key] = recorded
            comparison.results[key] = [r for r in run.records.results if r.judge == spec]
            if run.calibration is not None:
                comparison.dev_results[key] = [r for r in run.calibration.results if r.judge == spec]
    short = {key: (f"{comparison.run_of[key]}/" if key != comparison.specs[key] else "")
             + display_name(comparison.specs[key]) for key in comparison.judges}
    counts: dict[str, int] = {}
    for name in short.values():
        counts[name] = counts.get(name, 0) + 1
    comparison.labels = {key: name if counts[name] == 1 else key for key, name in short.items()}
    comparison.colours = {key: PALETTE[i % len(PALETTE)] for i, key in enumerate(comparison.judges)}
    comparison.pairwise = _pairwise(comparison.results)
    comparison.notes += latency_notes(comparison.labels, comparison.judges)
    return comparison


def per_response(stats: dict[str, Any]) -> tuple[float, float]:
    """($ per 1,000 responses, tokens per response)."""
    n = max(stats["n_judged"], 1)
    return 1000 * stats["cost_usd"] / n, (stats["tokens"]["input"] + stats["tokens"]["output"]) / n


def ranked(comparison: Comparison) -> list[str]:
    """Judge keys, best balanced accuracy first (then macro-F1, then lower latency)."""
    return sorted(comparison.judges, key=lambda k: (-(comparison.judges[k].get("balanced_accuracy") or 0.0),
                                                    -(comparison.judges[k].get("macro_f1") or 0.0),
                                                    comparison.judges[k]["latency_s"]["p50"]))


LEADERBOARD_COLUMNS = (
    ("balanced_accuracy", "bal. acc [95% CI]"), ("macro_f1", "macro-F1 [95% CI]"), ("roc_auc", "ROC AUC [95% CI]"),
    ("pr_auc", "PR AUC (ungrounded)"), ("macro_precision", "macro P"),
    ("macro_recall", "macro R"), ("accuracy", "acc"), ("n", "n"), ("n_abstained", "abstained"),
    ("latency_p50_s", "latency p50 s"), ("latency_p95_s", "latency p95 s"), ("usd_per_1000", "$ / 1k responses"),
    ("tokens_per_response", "tokens / response"),
)
"""(metric, heading) of the leaderboard, after the judge column (latency headings get the concurrency from
:func:`leaderboard_columns`)."""


def leaderboard_columns(comparison: Comparison) -> list[tuple[str, str]]:
    """The leaderboard's (metric, heading) with the concurrency the latencies were measured at: ``latency p50 s
    @8`` when all judges share it, else ``@concurrency`` (and each cell says its own)."""
    shared = shared_concurrency(comparison.judges.values())
    return [(metric, f"{heading} {shared or '@concurrency'}" if metric.startswith("latency") else heading)
            for metric, heading in LEADERBOARD_COLUMNS]


def leaderboard(comparison: Comparison) -> list[dict[str, Any]]:
    """One row per judge, ranked: ``value`` (the number), ``text`` (as printed) and ``ci`` per metric."""
    rows = []
    shared = shared_concurrency(comparison.judges.values())
    for key in ranked(comparison):
        s = comparison.judges[key]
        dollars, tokens = per_response(s)
        values = {
            "balanced_accuracy": s.get("balanced_accuracy"), "macro_f1": s.get("macro_f1"),
            "macro_precision": s.get("macro_precision"), "macro_recall": s.get("macro_recall"),
            "accuracy": s.get("accuracy"), "n": s["n"], "n_abstained": s["n_abstained"],
            "latency_p50_s": s["latency_s"]["p50"], "latency_p95_s": s["latency_s"]["p95"],
            "usd_per_1000": dollars, "tokens_per_response": tokens,
        }
        ci = dict(s.get("ci95", {}))
        ranking_text = {}
        values["roc_auc"], ranking_text["roc_auc"], ci["roc_auc"] = ranking_value(s, "roc_auc")
        values["pr_auc"], ranking_text["pr_auc"], _ = ranking_value(s, "pr_auc")   # its CI: the ranking table
        cells = {}
        for metric, value in values.items():
            if metric in ranking_text:
                text = ranking_text[metric]
            elif value is None:
                text = "-"
            elif metric in ("n", "n_abstained"):
                text = str(value)
            elif metric.startswith("latency"):
                text = f"{value:.4f}" + ("" if shared else f" {at_concurrency(s)}")
            elif metric == "usd_per_1000":
                text = f"{value:.4f}"
            elif metric == "tokens_per_response":
                text = f"{value:.0f}"
            else:
                text = f"{value:.3f}"
            bounds = ci.get(metric)
            cells[metric] = {"value": value, "text": text,
                             "ci": None if bounds is None or value is None else [bounds[0], bounds[1]]}
        rows.append({"judge": key, "label": comparison.labels[key], "spec": comparison.specs[key],
                     "run": comparison.run_of[key], "colour": comparison.colours[key], "cells": cells})
    return rows


def format_cell(cell: dict[str, Any]) -> str:
    """A leaderboard cell as text: ``0.812 [0.74, 0.88]`` with its CI, else the value alone."""
    return cell["text"] + (f" [{cell['ci'][0]:.2f}, {cell['ci'][1]:.2f}]" if cell["ci"] else "")


def score_based(records: list[ResultRecord]) -> float | None:
    """The one threshold a judge decided every verdict with (score >= t is grounded), else None."""
    thresholds = {r.result.verdict.threshold for r in records if r.result.verdict.label != "abstain"}
    if len(thresholds) != 1 or None in thresholds:
        return None
    threshold = thresholds.pop()
    for r in records:
        v = r.result.verdict
        if v.label != "abstain" and (v.score is None or (v.score >= threshold) != (v.label == "grounded")):
            return None
    return threshold


def slice_key(comparison: Comparison) -> tuple[str, list[Any]] | None:
    """The meta field to slice by (domain, source or dataset) when the examples have more than one value."""
    for key in ("domain", "source", "dataset"):
        values = {str(r.example.meta[key]) for rs in comparison.results.values() for r in rs
                  if r.example.meta.get(key) is not None}
        if len(values) > 1:
            return key, sorted(values)
    return None
