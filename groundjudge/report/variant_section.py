"""The report's prompt-variant and stability tables: judges that differ only in prompts or model, side by side.

For each pair found by the run summary (``summary["variants"]``): the metric differences with their paired
95% CIs, McNemar p, the change in tokens, $ and latency per answer, a unified diff of the templates whose text
differs, and the answers on which the two disagree with both verdicts, scores and reasons. Judges run with
``repeats=N`` get a stability table (flip rate, Fleiss' kappa).
"""

from __future__ import annotations

import difflib
from typing import Any

from groundjudge.report.compare import Comparison
from groundjudge.types import JudgeResult, ResultRecord


def verdict_reason(result: JudgeResult) -> str:
    """Why a verdict was given: the abstain reason, the reasons of the unsupported claims, or the model's reasoning."""
    verdict = result.verdict
    if verdict.label == "abstain":
        return verdict.abstain_reason or ""
    reasons = [c.reason for c in verdict.claims if c.label != "supported" and c.reason]
    if reasons:
        return "; ".join(reasons)
    for call in reversed(result.calls):
        parsed = call.parsed or {}
        reasoning = parsed.get("reasoning", parsed.get("REASONING"))
        if reasoning:
            return " ".join(reasoning) if isinstance(reasoning, list) else str(reasoning)
    return ""


def _key(comparison: Comparison, run_name: str, name: str) -> str | None:
    return next((k for k, spec in comparison.specs.items() if spec == name and comparison.run_of[k] == run_name),
                None)


def variant_pairs(comparison: Comparison) -> list[tuple[str, str, dict[str, Any]]]:
    """(key of A, key of B, the summary's variant entry) for every variant pair of every run."""
    pairs = []
    for run in comparison.runs:
        for entry in run.summary.get("variants", []):
            a, b = _key(comparison, run.name, entry["a"]), _key(comparison, run.name, entry["b"])
            if a and b:
                pairs.append((a, b, entry))
    return pairs


def _signed(value: float, digits: int = 3) -> str:
    return f"{value:+.{digits}f}"


def _delta(metric: dict[str, Any] | None) -> str:
    if not metric:
        return "-"
    lo, hi = metric["ci95"]
    return f"{_signed(metric['delta'])} [{_signed(lo, 2)}, {_signed(hi, 2)}]"


def template_diffs(comparison: Comparison, a: str, b: str) -> list[tuple[str, str]]:
    """(file name, unified diff) for every template file whose text differs between the two judges."""
    files_a = {f: t for template in comparison.recorded[a].templates.values() for f, t in template.files.items()}
    files_b = {f: t for template in comparison.recorded[b].templates.values() for f, t in template.files.items()}
    origin_a = {f: o for template in comparison.recorded[a].templates.values() for f, o in template.origin.items()}
    origin_b = {f: o for template in comparison.recorded[b].templates.values() for f, o in template.origin.items()}
    diffs = []
    for filename in sorted(set(files_a) | set(files_b)):
        old, new = files_a.get(filename, ""), files_b.get(filename, "")
        if old == new:
            continue
        text = "".join(difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True),
            fromfile=f"{comparison.labels[a]}: {origin_a.get(filename, 'built-in')}/{filename}",
            tofile=f"{comparison.labels[b]}: {origin_b.get(filename, 'built-in')}/{filename}"))
        diffs.append((filename, text))
    return diffs


def disagreements(comparison: Comparison, a: str, b: str, ids: list[str]) -> list[dict[str, Any]]:
    """The answers on which A and B disagree: both verdicts, scores and reasons."""
    by_a: dict[str, ResultRecord] = {r.example.id: r for r in comparison.results[a]}
    by_b: dict[str, ResultRecord] = {r.example.id: r for r in comparison.results[b]}
    rows = []
    for example_id in ids:
        if example_id not in by_a or example_id not in by_b:
            continue
        ra, rb = by_a[example_id], by_b[example_id]
        rows.append({"id": example_id, "gold": ra.example.label or "-", "answer": ra.example.answer,
                     "a": (ra.result.verdict.label, ra.result.verdict.score, verdict_reason(ra.result)),
                     "b": (rb.result.verdict.label, rb.result.verdict.score, verdict_reason(rb.result))})
    return rows


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def variant_tables(comparison: Comparison, max_rows: int | None = None) -> list[dict[str, Any]]:
    """The variants table (with its template diffs), the disagreements table and the stability table, as the
    report's table data (``max_rows`` caps each pair's disagreements, for the Markdown)."""
    pairs = variant_pairs(comparison)
    tables = []
    if pairs:
        rows, diffs, worse = [], [], []
        for a, b, entry in pairs:
            cost = entry["per_answer"]["delta"]
            rows.append([f"{comparison.labels[a]} → {comparison.labels[b]}", ", ".join(entry["differs"]),
                         str(entry["n"]), _delta(entry["metrics"].get("balanced_accuracy")),
                         _delta(entry["metrics"].get("macro_f1")), f"{entry['mcnemar_p']:.3g}",
                         f"{cost['input_tokens']:+.0f} / {cost['output_tokens']:+.0f}", f"{cost['cost_usd']:+.5f}",
                         f"{cost['latency_s']:+.2f}", str(len(entry["disagree"]))])
            diffs += [{"title": f"{comparison.labels[a]} → {comparison.labels[b]}: {name}", "text": text}
                      for name, text in template_diffs(comparison, a, b)]
            for row in disagreements(comparison, a, b, entry["disagree"])[:max_rows]:
                worse.append([f"{comparison.labels[a]} vs {comparison.labels[b]}", row["id"], row["gold"],
                              row["a"][0], _score(row["a"][1]), row["a"][2], row["b"][0], _score(row["b"][1]),
                              row["b"][2]])
        tables.append({"id": "variants", "title": "Prompt variants",
                       "note": "Judges that differ only in prompts or model, B against A on the same answers: the "
                               "difference of each metric (B − A) with its paired-bootstrap 95% CI, the exact "
                               "McNemar p, and the change per answer in tokens (in / out), $ and latency, counting "
                               "calls the cache shared between them as if each variant ran alone.",
                       "headers": ["A → B", "differs in", "n", "Δ balanced acc. [95% CI]", "Δ macro-F1 [95% CI]",
                                   "McNemar p", "Δ tokens / answer", "Δ $ / answer", "Δ latency s / answer",
                                   "disagree"],
                       "rows": rows, "diffs": diffs})
        tables.append({"id": "variant-disagreements", "title": "Where the variants disagree",
                       "note": "Every answer on which two variants give different verdicts, with both verdicts, "
                               "scores and reasons" + (f" (the first {max_rows} per pair)" if max_rows else "")
                               + ".",
                       "headers": ["pair", "example", "gold", "A", "A score", "A reason", "B", "B score",
                                   "B reason"],
                       "rows": worse, "filter": True})
    stable = [(k, s["stability"]) for k, s in comparison.judges.items() if s.get("stability")]
    if stable:
        tables.append({"id": "stability", "title": "Verdict stability",
                       "note": "Each answer judged N times (repeats=N); the majority verdict is scored. Flip rate: "
                               "share of answers whose repeats disagree. Fleiss' kappa: agreement of the repeats "
                               "beyond chance (1 = always the same; undefined when only one label occurs).",
                       "headers": ["judge", "repeats", "n", "flip rate", "flipped", "Fleiss' kappa"],
                       "keys": [k for k, _ in stable],
                       "rows": [[comparison.labels[k], str(s["repeats"]), str(s["n"]), f"{s['flip_rate']:.3f}",
                                 str(s["n_flipped"]), "-" if s["fleiss_kappa"] is None else f"{s['fleiss_kappa']:.3f}"]
                                for k, s in stable]})
    return tables
