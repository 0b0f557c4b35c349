"""summary.json: computed from a run's records, never edited by hand."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from groundjudge.judges.error_types import judge_taxonomy, taxonomy_names
from groundjudge.metrics import (
    bootstrap_ci,
    classification_metrics,
    latency_stats,
    mcnemar_p,
    ranking_metrics,
)
from groundjudge.runs.agreement import pair_agreement, verdict_shares, verdicts_by_answer
from groundjudge.runs.error_type_stats import error_type_summary, lead_error_type
from groundjudge.runs.injection import injection_summaries
from groundjudge.runs.latency import latency_summary
from groundjudge.runs.lean_records import LeanResults, read_lean_records
from groundjudge.runs.records import RunRecords
from groundjudge.runs.stability import stability_summary
from groundjudge.runs.variants import variant_comparisons
from groundjudge.runs.views_summary import views_diagnostics
from groundjudge.types import JudgeSpec, ResultRecord


def _judge_summary(spec: str, results: list[ResultRecord], threshold: dict[str, Any] | None,
                   n_boot: int, judge: JudgeSpec | None = None) -> dict[str, Any]:
    labelled = [r for r in results if r.example.label is not None]
    gold = [r.example.label for r in labelled]
    predicted = [r.result.verdict.label for r in labelled]
    calls = [c for r in results for c in r.result.calls]
    summary: dict[str, Any] = {
        "n": len(labelled),
        "n_judged": len(results),
        "n_abstained": sum(r.result.verdict.label == "abstain" for r in results),
        "abstain_reasons": dict(Counter(r.result.verdict.abstain_reason.split(":")[0]
                                        for r in results if r.result.verdict.abstain_reason)),
        "paths": dict(Counter(r.result.verdict.path for r in results)),
        **verdict_shares(results),
    }
    if labelled:
        metrics = classification_metrics(gold, predicted)
        summary.update({k: metrics[k] for k in ("accuracy", "balanced_accuracy", "macro_precision",
                                                "macro_recall", "macro_f1", "confusion")})
        summary["ci95"] = bootstrap_ci(gold, predicted, n_boot=n_boot)
        ranking = ranking_summary(labelled, n_boot)
        if ranking:
            summary["ranking"] = ranking
    summary.update({
        "threshold": None if threshold is None else threshold["threshold"],
        "threshold_source": None if threshold is None else threshold["source"],
        "latency_s": latency_stats([r.result.latency_s for r in results]),
        **_uncached_latency(results),
        **latency_summary(results),
        "cost_usd": sum(c.cost_usd for c in calls),
        "tokens": {"input": sum(c.input_tokens for c in calls), "output": sum(c.output_tokens for c in calls)},
        "cost_usd_spent": sum(c.cost_usd for c in calls if not c.cached),
        "llm_calls": sum(not c.cached for c in calls),
        "llm_calls_cached": sum(c.cached for c in calls),
        "fallbacks": sum(r.result.verdict.path.startswith("fallback:") for r in results),
    })
    taxonomy = judge_taxonomy(judge.name, judge.settings) if judge else taxonomy_names(spec)
    summary.update(error_type_summary(labelled, taxonomy))
    stability = stability_summary(results)
    if stability:
        summary["stability"] = stability
    kind = judge.name if judge else spec.split(":")[0]
    if kind == "cascade" and results:
        summary["cascade"] = cascade_summary(labelled or results)
    summary.update(injection_summaries(results))
    return summary


def ranking_summary(labelled: list[ResultRecord], n_boot: int = 1000) -> dict[str, Any] | None:
    """ROC AUC and PR AUC (ungrounded positive) of the judge's scores on the labelled answers that have one, with
    bootstrap 95% CIs (:func:`groundjudge.metrics.ranking_metrics`); None when no labelled answer has a score
    (a judge that only labels)."""
    if all(r.result.verdict.score is None for r in labelled):
        return None
    return ranking_metrics([r.example.label for r in labelled], [r.result.verdict.score for r in labelled],
                           n_boot=n_boot).model_dump()


def _uncached_latency(results: list[ResultRecord]) -> dict[str, Any]:
    """When some replies came from the cache: the latency had every call been made, estimated as the measured
    time plus each cached reply's original latency (absent when nothing was cached or an origin is unknown)."""
    cached = [c for r in results for c in r.result.calls if c.cached]
    if not cached or any(c.source_latency_s is None for c in cached):
        return {}
    return {"latency_s_uncached": latency_stats([
        r.result.latency_s + sum(c.source_latency_s or 0.0 for c in r.result.calls if c.cached) for r in results])}


def latency_without_cache(stats: dict[str, Any]) -> dict[str, Any]:
    """A judge summary's latency statistics had every LLM call been made: ``latency_s_uncached`` when some
    replies came from the cache, otherwise the measured ``latency_s``."""
    return stats.get("latency_s_uncached") or stats["latency_s"]


def cascade_summary(results: list[ResultRecord]) -> dict[str, Any]:
    """Escalation rate (answers that went past the first stage), the share reaching each stage, $ saved against
    sending everything on, and quality against the local judge."""
    escalated = [r for r in results if len(r.result.stages) >= 2]
    cost_escalated = sum(c.cost_usd for r in escalated for c in r.result.calls)
    per_escalated = cost_escalated / len(escalated) if escalated else 0.0
    deepest = max((len(r.result.stages) for r in results), default=1)
    out: dict[str, Any] = {
        "escalation_rate": len(escalated) / len(results),
        "stage_reach": [sum(len(r.result.stages) > i for r in results) / len(results) for i in range(deepest)],
        "cost_usd": cost_escalated,
        "cost_usd_all_llm_estimate": per_escalated * len(results),
        "cost_saved_usd_estimate": per_escalated * (len(results) - len(escalated)),
    }
    labelled = [r for r in results if r.example.label is not None]
    if labelled:
        gold = [r.example.label for r in labelled]
        local = classification_metrics(gold, [r.result.stages[0].label for r in labelled])
        combined = classification_metrics(gold, [r.result.verdict.label for r in labelled])
        out["local_balanced_accuracy"] = local["balanced_accuracy"]
        out["balanced_accuracy_change"] = combined["balanced_accuracy"] - local["balanced_accuracy"]
        out["local_macro_f1"] = local["macro_f1"]
        out["macro_f1_change"] = combined["macro_f1"] - local["macro_f1"]
    return out


def error_type_agreement(a: list[ResultRecord], b: list[ResultRecord]) -> dict[str, Any]:
    """Cohen's kappa between two judges' lead error type (:func:`lead_error_type`) on the answers both typed."""
    lead_a = {r.example.id: t for r in a if (t := lead_error_type(r.result.verdict.claims))}
    lead_b = {r.example.id: t for r in b if (t := lead_error_type(r.result.verdict.claims))}
    shared = sorted(lead_a.keys() & lead_b.keys())
    if len(shared) < 2:
        return {}
    from sklearn.metrics import cohen_kappa_score

    ya, yb = [lead_a[i] for i in shared], [lead_b[i] for i in shared]
    kappa = 1.0 if ya == yb else float(cohen_kappa_score(ya, yb))
    return {"error_type_n": len(shared), "error_type_agreement": sum(x == y for x, y in zip(ya, yb)) / len(shared),
            "error_type_kappa": kappa}


def summarize(records: RunRecords, n_boot: int = 1000, dawid_skene: bool = False) -> dict[str, Any]:
    """The run summary: data set identity, per-judge metrics, and McNemar between every pair of judges; with
    ``dawid_skene``, also the model-based hint of :mod:`groundjudge.runs.dawid_skene` (three judges or more)."""
    header = records.header
    by_judge: dict[str, Sequence[ResultRecord]] = {spec.spec: [] for spec in header.judges}
    if isinstance(records.results, LeanResults):   # columns: each judge's rows, no object per result
        by_judge.update(records.results.by_judge())   # type: ignore[arg-type]
    else:
        for record in records.results:
            by_judge.setdefault(record.judge, []).append(record)   # type: ignore[attr-defined]
    thresholds = {}
    for spec in header.judges:
        if spec.calibration is not None:
            thresholds[spec.spec] = spec.calibration.model_dump()
        elif "threshold" in spec.settings and any(r.result.verdict.threshold is not None
                                                  for r in by_judge.get(spec.spec, [])):
            # a judge whose rule never reads its threshold setting (strict triplets) leaves it off every verdict
            thresholds[spec.spec] = {"threshold": spec.settings["threshold"], "source": "setting"}
    recorded = {spec.spec: spec for spec in header.judges}
    judges = {spec: _judge_summary(spec, results, thresholds.get(spec), n_boot, recorded.get(spec))
              for spec, results in by_judge.items()}
    for spec in header.judges:
        if spec.name == "views" and by_judge.get(spec.spec):
            diagnostics = views_diagnostics(by_judge[spec.spec], float(spec.settings.get("tau", 0.6)))
            if diagnostics:
                judges[spec.spec]["views"] = diagnostics
    correct = {
        spec: {r.example.id: r.result.verdict.label == r.example.label
               for r in results if r.example.label is not None}
        for spec, results in by_judge.items()
    }
    pairwise = []
    for a, b in combinations(by_judge, 2):
        shared = sorted(correct[a].keys() & correct[b].keys())
        row = {"a": a, "b": b, "n": len(shared),
               "mcnemar_p": mcnemar_p([correct[a][i] for i in shared], [correct[b][i] for i in shared])
               if shared else None}
        row.update(pair_agreement(verdicts_by_answer(by_judge[a]), verdicts_by_answer(by_judge[b]), n_boot))
        row.update(error_type_agreement(by_judge[a], by_judge[b]))
        pairwise.append(row)
    out = {
        "run_id": header.run_id,
        "dataset": {"files": list(header.dataset.files), "formats": list(header.dataset.formats),
                    "n": header.dataset.n, "hash": header.dataset.hash,
                    "skipped_rows": header.dataset.skipped_rows, "eval_split": header.eval_split},
        "judges": judges,
        "pairwise": pairwise,
        "variants": variant_comparisons(header.judges, by_judge, n_boot),
        "notes": [f"{spec}: {note}" for spec, s in judges.items() for note in s.get("latency_notes", [])],
    }
    if dawid_skene:
        from groundjudge.runs.dawid_skene import dawid_skene_for_records

        hint = dawid_skene_for_records(records)
        if hint is not None:
            out["dawid_skene"] = hint.model_dump()
    return out


def summarize_file(path: str | Path, n_boot: int = 1000, dawid_skene: bool = False) -> dict[str, Any]:
    """:func:`summarize` of a records file, read as lean copies (:mod:`groundjudge.runs.lean_records`): the same
    summary, in memory a few hundred bytes per result whatever the documents' size."""
    return summarize(read_lean_records(path), n_boot=n_boot, dawid_skene=dawid_skene)
