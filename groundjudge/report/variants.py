"""The report's prompt variants and verdict stability, as data for report.md and report.html.

A *variant pair* is two judges of one run that differ only in prompts or model (found by the run summary,
``summary["variants"]``, see :mod:`groundjudge.runs.variants`). For each pair the report shows B against A:
the change of balanced accuracy and macro-F1 with its paired-bootstrap 95% CI, the exact McNemar p, the change
per answer in tokens, dollars and latency, a unified diff of every template file whose text differs, and the
answers on which the two disagree with both verdicts, scores and reasons. Judges run with ``repeats=N`` get a
stability row (flip rate, Fleiss' kappa).

Everything here is plain text and numbers: the Markdown and HTML writers escape it.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from groundjudge.report.compare import Comparison, example_key, ranked
from groundjudge.types import JudgeResult, ResultRecord

VARIANT_HEADERS = ["A", "B", "differs in", "n", "Δ balanced acc. [95% CI]", "Δ macro-F1 [95% CI]", "McNemar p",
                   "Δ tokens in / answer", "Δ tokens out / answer", "Δ $ / answer", "Δ latency s / answer",
                   "disagree"]
"""Column headings of :func:`variant_rows`' ``cells``."""

VARIANTS_NOTE = (
    "Judges of one run that differ only in prompts or model, B against A on the same answers: the difference of "
    "each metric (B − A) with its paired-bootstrap 95% CI (both judges resampled on the same answers; a CI that "
    "excludes 0 is a real difference), the exact McNemar p (p < 0.05: their error rates differ), and the change "
    "per answer in tokens, $ and latency, counting replies one variant took from the cache the other filled as "
    "if each variant ran alone. Disagree: answers on which their verdicts differ."
)

STABILITY_NOTE = (
    "Each answer judged N times (repeats=N); the majority verdict is the one scored. Flip rate: share of answers "
    "whose repeats do not all agree (lower is steadier). Fleiss' kappa: agreement of the repeats beyond chance "
    "(1 = always the same; undefined when a single label occurs). Label shares: mean share of the repeats giving "
    "each label."
)

MINUS = "\u2212"


def verdict_reason(result: JudgeResult) -> str:
    """Why a verdict was given, as one line of text: the abstain reason when the judge abstained; else the
    reasons of the claims it did not find supported (joined by "; "); else the ``reasoning`` (or
    ``REASONING``, a string or a list) of its last LLM call's parsed reply; else ""."""
    verdict = result.verdict
    if verdict.label == "abstain":
        return verdict.abstain_reason or ""
    reasons = [c.reason for c in verdict.claims if c.label != "supported" and c.reason]
    if reasons:
        return "; ".join(reasons)
    if result.calls:
        parsed = result.calls[-1].parsed or {}
        reasoning = parsed.get("reasoning")
        if reasoning is None:
            reasoning = parsed.get("REASONING")
        if isinstance(reasoning, (list, tuple)):
            return " ".join(str(part) for part in reasoning if part is not None)
        if isinstance(reasoning, str):
            return reasoning
    return ""


def shorten(text: str | None, limit: int = 160) -> str:
    """``text`` on one line (runs of whitespace collapsed), cut at a word boundary to at most ``limit``
    characters with an ellipsis when longer."""
    flat = re.sub(r"\s+", " ", text or "").strip()
    if len(flat) <= limit:
        return flat
    cut = flat[:limit - 1]
    space = cut.rfind(" ")
    if space > limit * 2 // 3:
        cut = cut[:space]
    return cut.rstrip(" ,;:.") + "…"


def _signed(value: float, spec: str) -> str:
    """A signed number with a true minus sign: ``+0.050``, ``−0.10``."""
    text = format(value, "+" + spec)
    if float(text) == 0:          # no "−0.00"
        text = format(0.0, "+" + spec)
    return text.replace("-", MINUS)


def _change(value: float, spec: str) -> str:
    """A per-answer change: signed, or ``0`` when there is none (local judges cost no $)."""
    return "0" if value == 0 else _signed(value, spec)


def delta_text(metric: dict[str, Any] | None) -> str:
    """A metric difference with its CI: ``+0.050 [−0.10, +0.20]`` (``-`` when there is none)."""
    if not metric:
        return "-"
    lo, hi = metric["ci95"]
    return f"{_signed(metric['delta'], '.3f')} [{_signed(lo, '.2f')}, {_signed(hi, '.2f')}]"


def _key(comparison: Comparison, run_name: str, name: str) -> str | None:
    return next((k for k, spec in comparison.specs.items() if spec == name and comparison.run_of[k] == run_name),
                None)


def variant_pairs(comparison: Comparison) -> list[tuple[str, str, dict[str, Any]]]:
    """(comparison key of A, key of B, the summary's variant entry) for every variant pair of every run, in run
    order (the entry's ``a`` and ``b`` are judge names of that run: they are mapped to the comparison's keys)."""
    pairs = []
    for run in comparison.runs:
        for entry in run.summary.get("variants", []):
            a, b = _key(comparison, run.name, entry["a"]), _key(comparison, run.name, entry["b"])
            if a is not None and b is not None:
                pairs.append((a, b, entry))
    return pairs


def variant_rows(comparison: Comparison) -> list[dict[str, Any]]:
    """One row per variant pair (B against A): the two judges' keys and labels, what differs, n, the metric
    deltas (values, CIs and text like ``+0.050 [−0.10, +0.20]``), McNemar p, the per-answer deltas of
    tokens in / out, $ and latency, the number of disagreements, and ``cells``: the row as text under
    :data:`VARIANT_HEADERS`."""
    rows = []
    for a, b, entry in variant_pairs(comparison):
        metrics = entry.get("metrics") or {}
        cost = entry["per_answer"]["delta"]
        p = entry.get("mcnemar_p")
        row = {
            "a": a, "b": b, "label_a": comparison.labels[a], "label_b": comparison.labels[b],
            "run": comparison.run_of[a], "differs": list(entry["differs"]), "n": entry["n"],
            "n_judged": entry["n_judged"], "metrics": metrics, "mcnemar_p": p, "per_answer": entry["per_answer"],
            "disagree": list(entry["disagree"]), "n_disagree": len(entry["disagree"]),
            "balanced_accuracy": delta_text(metrics.get("balanced_accuracy")),
            "macro_f1": delta_text(metrics.get("macro_f1")),
        }
        row["cells"] = [row["label_a"], row["label_b"], ", ".join(row["differs"]), str(row["n"]),
                        row["balanced_accuracy"], row["macro_f1"], "n/a" if p is None else f"{p:.2g}",
                        _change(cost["input_tokens"], ".0f"), _change(cost["output_tokens"], ".0f"),
                        _change(cost["cost_usd"], ".6f"), _change(cost["latency_s"], ".2f"),
                        str(row["n_disagree"])]
        rows.append(row)
    return rows


def _template_files(comparison: Comparison, key: str) -> tuple[dict[str, str], dict[str, str]]:
    """Every template file a judge recorded (its prompts' partials included): file name -> text, -> origin."""
    spec = comparison.recorded.get(key)
    files: dict[str, str] = {}
    origin: dict[str, str] = {}
    for template in (spec.templates.values() if spec else ()):
        for name, text in template.files.items():
            files.setdefault(name, text)
            origin.setdefault(name, template.origin.get(name, "built-in"))
    return files, origin


def template_diffs(comparison: Comparison, a_key: str, b_key: str) -> list[tuple[str, str]]:
    """(file name, unified diff A -> B) for every template file recorded by either judge whose text differs
    (a file only one of them has is diffed against nothing); the diff's file lines name each judge's label and
    where the file came from (``built-in`` or its folder). Sorted by file name."""
    files_a, origin_a = _template_files(comparison, a_key)
    files_b, origin_b = _template_files(comparison, b_key)
    diffs = []
    for name in sorted(set(files_a) | set(files_b)):
        old, new = files_a.get(name), files_b.get(name)
        if old == new:
            continue
        where_a = f"{origin_a[name]}/{name}" if name in files_a else f"(no {name})"
        where_b = f"{origin_b[name]}/{name}" if name in files_b else f"(no {name})"
        text = "".join(difflib.unified_diff(
            _lines(old or ""), _lines(new or ""),
            fromfile=f"{comparison.labels[a_key]}: {where_a}", tofile=f"{comparison.labels[b_key]}: {where_b}"))
        diffs.append((name, text))
    return diffs


def _lines(text: str) -> list[str]:
    """Lines for difflib, each ending in a newline (a last line without one would run into the next)."""
    return [line if line.endswith("\n") else line + "\n" for line in text.splitlines(keepends=True)]


def _verdict(record: ResultRecord) -> dict[str, Any]:
    verdict = record.result.verdict
    gold = record.example.label
    return {"label": verdict.label, "score": verdict.score, "reason": verdict_reason(record.result),
            "right": None if gold is None else verdict.label == gold}


def disagreements(comparison: Comparison, a_key: str, b_key: str) -> list[dict[str, Any]]:
    """One row per answer both judges judged on which their verdict labels differ, in A's order: the example's
    ``id``, ``key`` (:func:`~groundjudge.report.compare.example_key`), ``gold`` label (None when unlabelled),
    ``question`` and ``answer`` in full and shortened to one line (``question_short``, ``answer_short``), and
    ``a`` / ``b``: each judge's ``label``, ``score``, ``reason`` (:func:`verdict_reason`) and ``right``
    (whether it matches gold; None when unlabelled)."""
    by_b = {r.example.id: r for r in comparison.results.get(b_key, [])}
    rows = []
    for ra in comparison.results.get(a_key, []):
        rb = by_b.get(ra.example.id)
        if rb is None or rb.result.verdict.label == ra.result.verdict.label:
            continue
        example = ra.example
        rows.append({"id": example.id, "key": example_key(example), "gold": example.label,
                     "question": example.question, "answer": example.answer,
                     "question_short": shorten(example.question, 100), "answer_short": shorten(example.answer, 160),
                     "a": _verdict(ra), "b": _verdict(rb)})
    return rows


def _kappa(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3f}"


def stability_rows(comparison: Comparison) -> list[dict[str, Any]]:
    """One row per judge whose summary has ``stability`` (it ran with ``repeats=N``), in leaderboard order:
    key, label, repeats, n, flip rate, flipped answers, Fleiss' kappa, label shares, and ``cells`` (the row as
    text: judge, repeats, n, flip rate, flipped, Fleiss' kappa, label shares)."""
    rows = []
    for key in ranked(comparison):
        s = comparison.judges[key].get("stability")
        if not s:
            continue
        shares = s.get("label_shares") or {}
        row = {"key": key, "label": comparison.labels[key], "repeats": s["repeats"], "n": s["n"],
               "flip_rate": s["flip_rate"], "n_flipped": s["n_flipped"], "fleiss_kappa": s.get("fleiss_kappa"),
               "label_shares": shares}
        row["cells"] = [row["label"], str(row["repeats"]), str(row["n"]), f"{row['flip_rate']:.3f}",
                        str(row["n_flipped"]), _kappa(row["fleiss_kappa"]),
                        ", ".join(f"{label} {share:.2f}" for label, share in shares.items() if share) or "-"]
        rows.append(row)
    return rows


STABILITY_HEADERS = ["judge", "repeats", "n", "flip rate", "flipped", "Fleiss' kappa", "label shares"]
"""Column headings of :func:`stability_rows`' ``cells``."""


def stability_table(comparison: Comparison) -> list[dict[str, Any]]:
    """The verdict stability table as report table data (id, keys, title, note, headers, rows), or none when
    no judge ran with repeats."""
    rows = stability_rows(comparison)
    if not rows:
        return []
    return [{"id": "stability", "keys": [r["key"] for r in rows], "title": "Verdict stability",
             "note": STABILITY_NOTE, "headers": STABILITY_HEADERS, "rows": [r["cells"] for r in rows]}]
