"""Prompt and model variants: judges of one kind whose settings differ only in prompts or model.

For every such pair of a run the summary gives B minus A for balanced accuracy
and macro-F1 with a paired-bootstrap 95% CI, the exact McNemar p, the answers on
which the two disagree, and the cost of each per answer as if run alone (calls
answered by the cache that the other variant filled are counted, with the
latency they took when they were made).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np

from groundjudge.metrics import mcnemar_p, paired_bootstrap_diff
from groundjudge.types import JudgeResult, JudgeSpec, ResultRecord

VARIANT_SETTINGS = frozenset({"prompts", "model", "template", "output", "api_base", "api_key_env",
                              "input_cost_per_mtok", "output_cost_per_mtok"})
"""Settings two judges may differ in and still be variants of one judge (prompt, model and how to reach it)."""


def variant_difference(a: JudgeSpec, b: JudgeSpec) -> list[str] | None:
    """What makes B a variant of A (the settings, and ``templates`` when the prompts' texts differ), or None when
    they are not variants (another kind, or a setting outside prompts and model differs)."""
    if a.name != b.name:
        return None
    keys = sorted(k for k in set(a.settings) | set(b.settings) if a.settings.get(k) != b.settings.get(k))
    if not set(keys) <= VARIANT_SETTINGS:
        return None
    changed = sorted(n for n in set(a.templates) & set(b.templates) if a.templates[n].hash != b.templates[n].hash)
    if changed and "prompts" not in keys:
        keys.append("templates")
    return keys or None


def answer_cost(result: JudgeResult) -> dict[str, float]:
    """Tokens, dollars and latency of one answer as if judged alone (cached calls counted as made)."""
    calls = result.calls
    return {"input_tokens": float(sum(c.input_tokens for c in calls)),
            "output_tokens": float(sum(c.output_tokens for c in calls)),
            "cost_usd": float(sum(c.cost_usd for c in calls)),
            "latency_s": float(result.latency_s + sum(c.source_latency_s or 0.0 for c in calls if c.cached))}


def _mean_cost(results: Sequence[ResultRecord]) -> dict[str, float]:
    costs = [answer_cost(r.result) for r in results]
    return {k: float(np.mean([c[k] for c in costs])) if costs else 0.0
            for k in ("input_tokens", "output_tokens", "cost_usd", "latency_s")}


def compare_variants(a: JudgeSpec, b: JudgeSpec, results_a: Sequence[ResultRecord],
                     results_b: Sequence[ResultRecord], differs: list[str], n_boot: int = 1000) -> dict[str, Any]:
    """B against A on the answers both judged: metric deltas with paired CIs, McNemar, disagreements, costs."""
    by_a = {r.example.id: r for r in results_a}
    by_b = {r.example.id: r for r in results_b}
    shared = [i for i in by_a if i in by_b]
    labelled = [i for i in shared if by_a[i].example.label is not None]
    gold = [by_a[i].example.label for i in labelled]
    pred_a = [by_a[i].result.verdict.label for i in labelled]
    pred_b = [by_b[i].result.verdict.label for i in labelled]
    cost_a = _mean_cost([by_a[i] for i in shared])
    cost_b = _mean_cost([by_b[i] for i in shared])
    return {
        "a": a.spec, "b": b.spec, "differs": differs, "n": len(labelled), "n_judged": len(shared),
        "metrics": paired_bootstrap_diff(gold, pred_a, pred_b, n_boot=n_boot),
        "mcnemar_p": mcnemar_p([p == g for p, g in zip(pred_a, gold)], [p == g for p, g in zip(pred_b, gold)]),
        "disagree": [i for i in shared if by_a[i].result.verdict.label != by_b[i].result.verdict.label],
        "per_answer": {"a": cost_a, "b": cost_b, "delta": {k: cost_b[k] - cost_a[k] for k in cost_a}},
    }


def variant_comparisons(judges: Sequence[JudgeSpec], by_judge: dict[str, list[ResultRecord]],
                        n_boot: int = 1000) -> list[dict[str, Any]]:
    """Every pair of the run's judges that are variants of one another, in header order."""
    rows = []
    for a, b in combinations(judges, 2):
        differs = variant_difference(a, b)
        if differs and by_judge.get(a.spec) and by_judge.get(b.spec):
            rows.append(compare_variants(a, b, by_judge[a.spec], by_judge[b.spec], differs, n_boot))
    return rows
