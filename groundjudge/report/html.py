"""report.html: one self-contained page (no network): leaderboard, plots, and a per-example explorer.

All run data goes into the page as one JSON blob (``<script type="application/json">``) and the page's
script renders it with DOM APIs and ``textContent`` only, never as markup, so answers, contexts and
model replies cannot inject HTML. Styles and script (``groundjudge/report/assets/report.css``, ``report.js``)
are inlined; plots are PNG data URIs; a Content-Security-Policy forbids every fetch.
"""

from __future__ import annotations

import base64
import html
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from groundjudge.report.compare import Comparison, example_key, leaderboard, leaderboard_columns, ranked
from groundjudge.report.markdown import HOW_TO_READ, extra_tables
from groundjudge.report.variants import VARIANT_HEADERS, VARIANTS_NOTE, disagreements, template_diffs, variant_rows
from groundjudge.types import Example, InjectionFinding, ResultRecord, Verdict

PLOT_CAPTIONS = {
    "error_type_recall": "Recall per gold error type (rows) and judge (columns): the share of that type's ungrounded "
                         "answers judged ungrounded; abstentions count as not caught; boxed: the type the judge "
                         "misses most (types with 5+ answers).",
    "quality_vs_latency": "Quality against median latency per response (log scale); circled judges are on the "
                          "Pareto frontier.",
    "quality_vs_cost": "Quality against dollars per 1,000 responses; circled judges are on the Pareto frontier.",
    "confusion_matrices": "Confusion matrices: gold rows, predicted columns (abstain included), shaded by share of "
                          "the gold class.",
    "threshold_sweep": "Balanced accuracy as the threshold moves, on the dev records used for fitting (dotted) and "
                       "on the evaluated ones; dashed: the threshold the judge used.",
    "roc_curves": "ROC curves of the judges' scores on the labelled answers each scored: ungrounded answers caught "
                  "against grounded answers flagged as the threshold moves (dotted: chance); the legend gives each "
                  "judge's ROC AUC with its bootstrap 95% CI. Constant-score judges are named below, not drawn.",
    "error_types": "Share of ungrounded answers missed, per gold error type.",
    "slices": "Balanced accuracy per slice of the data.",
}


class _Strings:
    """Long strings (documents, prompts, replies) stored once in the page and referred to by index."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, text: str | None) -> int | None:
        if text is None:
            return None
        if text not in self._index:
            self._index[text] = len(self.items)
            self.items.append(text)
        return self._index[text]


def _locate(doc: str, start: int | None, end: int | None, text: str) -> tuple[int | None, int | None]:
    """Evidence offsets in its document: as recorded when valid, else where its text occurs verbatim."""
    if start is not None and end is not None and 0 <= start < end <= len(doc):
        return start, end
    found = doc.find(text) if text.strip() else -1
    return (found, found + len(text)) if found >= 0 else (None, None)


def _content(message: Any) -> str:
    return message if isinstance(message, str) else json.dumps(message, ensure_ascii=False, indent=1)


def _finding_text(example: Example, finding: InjectionFinding) -> tuple[str, int | None]:
    """The judged text a finding is in (answer, question or one document) and that document's index."""
    if finding.field == "answer":
        return example.answer, None
    if finding.field == "question":
        return example.question or "", None
    doc = finding.doc_index if finding.doc_index is not None and finding.doc_index < len(example.context) else 0
    return example.context[doc], doc


def _findings(verdict: Verdict, example: Example) -> list[dict[str, Any]]:
    """A verdict's suspected injections for the page: where each is (offsets as recorded when valid, else where
    its text occurs verbatim, else None), its style, text, decoded text and detector."""
    out = []
    for f in verdict.suspected_injection:
        text, doc = _finding_text(example, f)
        start, end = _locate(text, f.start, f.end, f.text)
        out.append({"field": f.field, "doc": doc, "start": start, "end": end, "style": f.style, "text": f.text,
                    "decoded": f.decoded, "detector": f.detector})
    return out


SPAN_TAGGER_PATHS = ("local:spans",)
"""Verdict paths of judges whose claims are tagged spans of the answer (hallucinated text, not sentences): the
page marks them with their own highlight (``mark.span-halluc``)."""


def _verdict(record: ResultRecord, strings: _Strings) -> dict[str, Any]:
    verdict, result, example = record.result.verdict, record.result, record.example
    kind = "span" if verdict.path.startswith(SPAN_TAGGER_PATHS) else "claim"
    claims = []
    for c in verdict.claims:
        evidence = None
        if c.evidence is not None:
            doc = c.evidence.doc_index if c.evidence.doc_index < len(example.context) else 0
            start, end = _locate(example.context[doc], c.evidence.start, c.evidence.end, c.evidence.text)
            evidence = {"text": c.evidence.text, "doc": doc, "start": start, "end": end}
        span = (c.claim.start, c.claim.end)
        valid = span[0] is not None and span[1] is not None and 0 <= span[0] < span[1] <= len(example.answer)
        claims.append({"text": c.claim.text, "start": span[0] if valid else None, "end": span[1] if valid else None,
                       "label": c.label, "score": c.score, "reason": c.reason, "error_type": c.error_type,
                       "evidence": evidence, "kind": kind})
    return {
        "label": verdict.label, "score": verdict.score, "threshold": verdict.threshold, "path": verdict.path,
        "abstain_reason": verdict.abstain_reason, "latency_s": result.latency_s, "queue_s": result.queue_s,
        "cost_usd": sum(c.cost_usd for c in result.calls), "claims": claims,
        "injection": _findings(verdict, example), "injection_action": verdict.injection_action,
        "stages": [{"label": s.label, "path": s.path, "score": s.score, "abstain_reason": s.abstain_reason}
                   for s in result.stages],
        "calls": [{"template": c.template, "model": c.model, "input_tokens": c.input_tokens,
                   "output_tokens": c.output_tokens, "cost_usd": c.cost_usd, "latency_s": c.latency_s,
                   "queue_s": c.queue_s, "server_s": c.server_s, "cached": c.cached, "attempts": c.attempts, "error": c.error,
                   "messages": [{"role": str(m.get("role", "?")), "content": strings(_content(m.get("content", "")))}
                                for m in c.messages],
                   "raw_output": strings(c.raw_output)} for c in result.calls],
    }


def _example(example: Example, strings: _Strings) -> dict[str, Any]:
    meta = {k: v for k, v in example.meta.items() if isinstance(v, (str, int, float, bool)) and len(str(v)) <= 200}
    return {"key": example_key(example), "id": example.id, "question": example.question,
            "docs": [strings(doc) for doc in example.context], "answer": example.answer, "label": example.label,
            "error_types": list(example.error_types), "split": example.split, "meta": meta, "verdicts": {}}


def examples(comparison: Comparison, max_examples: int) -> tuple[list[dict[str, Any]], int, list[str]]:
    """Per example (merged across judges and runs): its content and every judge's verdict, capped at
    ``max_examples`` — disagreements, then wrong verdicts, then abstentions, then the rest.
    Returns (examples, how many the runs hold, the string table)."""
    strings = _Strings()
    rows: dict[str, dict[str, Any]] = {}
    records_of: dict[str, list[tuple[str, ResultRecord]]] = {}
    for judge in ranked(comparison):
        for record in comparison.results[judge]:
            key = example_key(record.example)
            if key not in records_of:
                records_of[key] = []
            records_of[key].append((judge, record))

    def tier(pairs: list[tuple[str, ResultRecord]]) -> int:
        labels = {r.result.verdict.label for _, r in pairs}
        gold = pairs[0][1].example.label
        if len(labels) > 1:
            return 0
        if gold is not None and labels != {gold}:
            return 1
        return 2 if "abstain" in labels else 3

    order = sorted(records_of, key=lambda k: tier(records_of[k]))[:max_examples]
    kept = set(order)
    for key, pairs in records_of.items():          # data order for the ones kept
        if key not in kept:
            continue
        row = rows[key] = _example(pairs[0][1].example, strings)
        for judge, record in pairs:
            row["verdicts"][judge] = _verdict(record, strings)
    return list(rows.values()), len(records_of), strings.items


def variants(comparison: Comparison, strings: _Strings) -> dict[str, Any]:
    """The prompt-variants section's data: per pair its judges, table cells, metric deltas, template diffs and
    every disagreement (questions, answers and reasons in full, as indices into the string table)."""
    pairs = []
    for row in variant_rows(comparison):
        a, b = row["a"], row["b"]
        pairs.append({
            "a": a, "b": b, "label": f"{row['label_a']} → {row['label_b']}", "run": row["run"],
            "differs": row["differs"], "cells": row["cells"], "metrics": row["metrics"],
            "mcnemar_p": row["mcnemar_p"],
            "diffs": [{"file": name, "text": text} for name, text in template_diffs(comparison, a, b)],
            "disagree": [{"id": d["id"], "key": d["key"], "gold": d["gold"], "question": strings(d["question"]),
                          "answer": strings(d["answer"]),
                          "a": {**d["a"], "reason": strings(d["a"]["reason"])},
                          "b": {**d["b"], "reason": strings(d["b"]["reason"])}}
                         for d in disagreements(comparison, a, b)],
        })
    return {"headers": VARIANT_HEADERS, "note": VARIANTS_NOTE, "pairs": pairs}


def _script_json(data: Any) -> str:
    """JSON that is safe inside a <script> element (no '<', '>' or '&' left to close or open a tag)."""
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":"))
            .replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _asset(name: str) -> str:
    text = resources.files("groundjudge.report").joinpath("assets", name).read_text(encoding="utf-8")
    if "</script" in text.lower() or "</style" in text.lower():
        raise ValueError(f"{name} must not close its own element")
    return text


def _plots_html(plots: list[Path]) -> str:
    figures = []
    for path in plots:
        uri = "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")
        caption = PLOT_CAPTIONS.get(path.stem, path.stem.replace("_", " "))
        if path.stem.startswith("error_type_confusion_"):
            caption = ("Confusion matrix of the judge's error typing: gold type in rows, the type it gave the answer in "
                       "columns (none: judged grounded, abstained or untyped), shaded by share of the gold row.")
        figures.append(f'<figure class="plot" id="plot-{html.escape(path.stem)}"><img alt="{html.escape(caption)}" '
                       f'src="{uri}"><figcaption>{html.escape(caption)}</figcaption></figure>')
    return "\n".join(figures) or "<p>No plots.</p>"


def page_data(comparison: Comparison, max_examples: int = 2000) -> dict[str, Any]:
    """Everything the page's script renders, as JSON-able data."""
    rows, total, texts = examples(comparison, max_examples)
    strings = _Strings()
    for text in texts:              # the same indices, and the variants' texts added (each once)
        strings(text)
    order = ranked(comparison)
    return {
        "runs": [{"name": run.name, "run_id": run.records.header.run_id, "n": run.records.header.dataset.n,
                  "files": list(run.records.header.dataset.files), "hash": run.records.header.dataset.hash,
                  "eval_split": run.records.header.eval_split or "all", "started_at": run.records.header.started_at}
                 for run in comparison.runs],
        "notes": comparison.notes,
        "judges": [{"key": k, "label": comparison.labels[k], "spec": comparison.specs[k], "run": comparison.run_of[k],
                    "colour": comparison.colours[k], "rank": i} for i, k in enumerate(order, start=1)],
        "columns": [list(c) for c in leaderboard_columns(comparison)],
        "leaderboard": leaderboard(comparison),
        "how_to_read": HOW_TO_READ,
        "pairwise": comparison.pairwise,
        "variants": variants(comparison, strings),
        "tables": extra_tables(comparison),
        "examples": rows,
        "strings": strings.items,
        "total_examples": total,
        "max_examples": max_examples,
    }


def render_html(comparison: Comparison, plots: list[Path], max_examples: int = 2000) -> str:
    """The page, as one string."""
    data = page_data(comparison, max_examples)
    judge_css = "\n".join(f".j{i}{{--jc:{j['colour']}}}" for i, j in enumerate(data["judges"]))
    parts = {"__CSS__": _asset("report.css") + "\n" + judge_css, "__PLOTS__": _plots_html(plots),
             "__JS__": _asset("report.js"), "__DATA__": _script_json(data)}
    return re.sub("__(CSS|PLOTS|JS|DATA)__", lambda m: parts[m.group(0)], PAGE)

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>groundjudge report</title>
<style>
__CSS__
</style></head><body>
<header><div class="bar"><h1>groundjudge report</h1><nav>
<a href="#leaderboard-section">Leaderboard</a><a href="#significance-section">Significance</a>
<a href="#variants-section" id="nav-variants">Prompt variants</a><a href="#tables-section">Tables</a><a href="#plots-section">Plots</a><a href="#explorer-section">Examples</a>
</nav></div><ul id="runs"></ul><div id="notes"></div></header>
<main>
<section id="leaderboard-section" class="card"><h2>Leaderboard</h2>
<div class="scroll"><table id="leaderboard"><thead></thead><tbody></tbody></table></div>
<p id="how-to-read" class="note"></p></section>
<section id="significance-section" class="card"><h2>McNemar p-values</h2>
<p class="note">Exact McNemar test between every two judges on the labelled examples both judged. Highlighted: p &lt; 0.05
(the two judges' error rates differ). Hover a cell for the pair and n.</p>
<div class="scroll"><table id="mcnemar"></table></div></section>
<section id="variants-section" class="card"><h2>Prompt variants</h2><div id="variants"></div></section>
<section id="tables-section" class="card"><h2>Ranking by score, stability, thresholds, error types, fallbacks</h2><div id="tables"></div></section>
<section id="plots-section" class="card"><h2>Plots</h2><div class="plots">
__PLOTS__
</div></section>
<section id="explorer-section" class="card"><h2>Examples</h2>
<div class="filters" id="filters">
<label class="chip"><input type="checkbox" id="f-disagree" checked> judges disagree</label>
<label class="chip"><input type="checkbox" id="f-wrong"> a wrong verdict</label>
<label class="chip"><input type="checkbox" id="f-abstain"> an abstention</label>
<label class="chip"><input type="checkbox" id="f-inj"> injection suspected</label>
<label>gold error type <select id="f-type"><option value="">any</option></select></label>
<label>judge <select id="f-judge"><option value="">any</option></select></label>
<label><input type="search" id="f-search" placeholder="search id or text"></label>
<span id="count" class="count"></span></div>
<p id="cap" class="note"></p>
<p class="list-legend">Each example shows its gold label and every judge's verdict (#rank, G grounded, U ungrounded,
A abstained; dashed red: wrong; ⚠: a judge suspects a prompt injection). Click one to see its context, claims and
LLM calls; ↑/↓ move through the list.</p>
<div id="explorer"><div id="list" tabindex="0" aria-label="examples"></div>
<div id="detail"><p class="empty">Choose an example on the left.</p></div></div>
</section>
</main>
<footer>Made by groundjudge from the run records alone. No part of this page is loaded from the network.</footer>
<script type="application/json" id="data">__DATA__</script>
<script>
__JS__
</script></body></html>
"""
