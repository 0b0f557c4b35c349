"""report.md: the leaderboard, McNemar matrix, prompt variants, ranking by score, verdict stability, thresholds,
error-type (``groundjudge.report.error_types``), cascade and prompt-injection tables of a comparison."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from groundjudge.report.agreement import agreement_table, dawid_skene_tables, verdict_shares_table
from groundjudge.report.compare import Comparison, format_cell, leaderboard, leaderboard_columns, ranked
from groundjudge.report.error_types import error_type_tables
from groundjudge.report.human_labels import human_label_tables
from groundjudge.report.injection import injection_tables
from groundjudge.report.ranking import ranking_table
from groundjudge.report.variants import (
    VARIANT_HEADERS,
    VARIANTS_NOTE,
    disagreements,
    shorten,
    stability_table,
    template_diffs,
    variant_rows,
)
from groundjudge.runs.summary import latency_without_cache

HOW_TO_READ = (
    "Balanced accuracy and macro-F1 weigh grounded and ungrounded answers equally; the bracket is a bootstrap "
    "95% interval, and judges whose intervals overlap may not really differ — the McNemar matrix tests each pair "
    "on the examples both judged (p < 0.05: their error rates differ). ROC AUC and PR AUC judge the score "
    "itself, whatever the threshold, on the answers that have one: ROC AUC 0.5 is chance; PR AUC is for finding "
    "ungrounded answers, and its chance level (their share) follows it; constant: the judge gives every answer "
    "the same score, which ranks nothing; -: no score. Abstentions count as errors, never as "
    "grounded; latency is service time per response on the machine that ran the judge (wall time less the wait "
    "for a client-side slot), measured at the concurrency after the @ (requests in flight: a server that cannot "
    "serve them all at once adds its own queue), and $ is at the provider's list prices (local judges cost nothing "
    "per call)."
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


_NUMERIC = re.compile(r"^(-|—|n/a|constant|\**[-+−]?[\d.]+(e[-+]?\d+)?\**( \(.*\)| \[.*\])?)$")


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A GitHub Markdown table; columns of numbers are right-aligned."""
    numeric = [bool(rows) and all(_NUMERIC.match(row[i]) for row in rows) for i in range(len(headers))]
    lines = ["| " + " | ".join(_cell(h) for h in headers) + " |",
             "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _runs(comparison: Comparison) -> list[str]:
    lines = []
    for run in comparison.runs:
        d, h = run.records.header.dataset, run.records.header
        lines.append(f"- run `{run.name}` ({h.run_id}, started {h.started_at}): {d.n} examples "
                     f"({h.eval_split or 'all'}) from {', '.join(d.files)}; data hash `{d.hash[:12]}`")
    lines += [f"\n**Note:** {note}" for note in comparison.notes]
    return lines


def _leaderboard(comparison: Comparison) -> list[str]:
    columns = leaderboard_columns(comparison)
    headers = ["judge"] + [heading for _, heading in columns]
    rows = [[row["label"]] + [format_cell(row["cells"][metric]) for metric, _ in columns]
            for row in leaderboard(comparison)]
    return ["## Leaderboard", "", table(headers, rows), "", "How to read it: " + HOW_TO_READ]


def _p(p: float | None) -> str:
    if p is None:
        return "n/a"
    return ("**" + f"{p:.2g}" + "**") if p < 0.05 else f"{p:.2g}"


def _mcnemar(comparison: Comparison) -> list[str]:
    order = ranked(comparison)
    if len(order) < 2:
        return []
    found = {(r["a"], r["b"]): r for r in comparison.pairwise}
    found.update({(r["b"], r["a"]): r for r in comparison.pairwise})
    rows = []
    for i, a in enumerate(order, start=1):
        row = [f"#{i} {comparison.labels[a]}"]
        for b in order:
            pair = found.get((a, b))
            row.append("—" if a == b else (_p(pair["mcnemar_p"]) + (f" (n={pair['n']})" if pair["n"] else "")))
        rows.append(row)
    return ["## McNemar (exact) p-values", "",
            ("Between every two judges, on the labelled examples both judged (n); bold: p < 0.05. "
             "n/a: no examples in common."), "",
            table(["judge"] + [f"#{i}" for i in range(1, len(order) + 1)], rows)]


def thresholds(comparison: Comparison) -> dict[str, Any]:
    """The threshold each judge used and where it was fitted."""
    rows = []
    for key in ranked(comparison):
        s = comparison.judges[key]
        if s.get("threshold") is None:
            rows.append([comparison.labels[key], "-", "no threshold (the judge decides the label itself)"])
        else:
            rows.append([comparison.labels[key], f"{s['threshold']:.4f}", str(s.get("threshold_source") or "-")])
    return {"id": "thresholds", "keys": ranked(comparison), "title": "Thresholds",
            "note": "A score-based judge says grounded when its score reaches the threshold. split:dev or a file: "
                    "fitted there to maximise balanced accuracy, then frozen; setting: given in the spec; "
                    "default: there was nothing to fit it on.",
            "headers": ["judge", "threshold", "fitted on"], "rows": rows}


def fallback_cascade(comparison: Comparison) -> list[dict[str, Any]]:
    """Escalation and savings of cascades; which path produced the verdicts of fallback judges."""
    out = []
    cascades = [k for k in ranked(comparison) if comparison.judges[k].get("cascade")]
    if cascades:
        rows = []
        for key in cascades:
            c = comparison.judges[key]["cascade"]
            local, change = c.get("local_balanced_accuracy"), c.get("balanced_accuracy_change")
            stats = comparison.judges[key]
            uncached = latency_without_cache(stats)
            reach = c.get("stage_reach", [])
            escalated = f"{c['escalation_rate']:.2f}" + (
                f" (reach by stage {' / '.join(f'{r:.2f}' for r in reach)})" if len(reach) > 2 else "")
            rows.append([comparison.labels[key], escalated, f"{c['cost_usd']:.4f}",
                         f"{c['cost_usd_all_llm_estimate']:.4f}", f"{c['cost_saved_usd_estimate']:.4f}",
                         "-" if local is None else f"{local:.3f}", "-" if change is None else f"{change:+.3f}",
                         f"{stats['latency_s']['mean']:.3g} / {uncached['mean']:.3g}"])
        out.append({"id": "cascades", "keys": cascades, "title": "Cascades",
                    "note": "Escalated: share of answers the local judge sent on to the LLM judge (with more than two "
                            "stages, the share that reached each stage). Latency: as "
                            "measured / had every LLM call been made (replies reused from the cache counted at "
                            "the latency of the call that produced them).",
                    "headers": ["judge", "escalated", "$ spent", "$ if all went to the LLM (est.)", "$ saved (est.)",
                                "bal. acc of the local judge alone", "bal. acc change", "latency mean s"],
                    "rows": rows})
    fallbacks = [k for k in ranked(comparison)
                 if comparison.kind(k) == "fallback" or comparison.judges[k].get("fallbacks")]
    if fallbacks:
        out.append({"id": "fallbacks", "keys": fallbacks, "title": "Fallbacks",
                    "note": "Which path produced the verdicts: the LLM, or the local judge when the provider "
                            "could not be used.",
                    "headers": ["judge", "verdicts from the fallback", "verdicts by path", "abstentions by reason"],
                    "rows": [[comparison.labels[k], str(comparison.judges[k].get("fallbacks", 0)),
                              ", ".join(f"{p} {n}" for p, n in comparison.judges[k]["paths"].items()),
                              ", ".join(f"{r} {n}" for r, n in comparison.judges[k]["abstain_reasons"].items())
                              or "-"] for k in fallbacks]})
    return out


def view_independence(comparison: Comparison) -> list[dict[str, Any]]:
    """Multi-view judges: per-view error rates, Proposition 1's bound beside the measured rate, error correlation."""
    keys = [k for k in ranked(comparison) if comparison.judges[k].get("views")]
    rows = []
    for key in keys:
        v = comparison.judges[key]["views"]
        rates = ", ".join(f"{name} {r['tpr']:.2f}/{r['fpr']:.2f}" for name, r in v["per_view"].items()
                          if r["tpr"] is not None and r["fpr"] is not None)
        rows.append([comparison.labels[key], str(v["n_views"]), rates or "-",
                     f"{v['alpha']:.3f}" if "alpha" in v else "-",
                     f"{v['multi_view_fpr']:.3f}" if "multi_view_fpr" in v else "-",
                     f"{v['bound']:.3g}" if "bound" in v else "-", f"{v['error_correlation']:.2f}"])
    if not rows:
        return []
    return [{"id": "views", "keys": keys, "title": "Are the views independent?",
             "note": "Per answer: a view accepts an answer when it entails every claim. TPR / FPR: acceptance of "
                     "grounded / ungrounded answers. Multi-view FPR: share of ungrounded answers that at least a "
                     "tau share of the views accept; Proposition 1 bounds it by exp(-N D(tau||alpha)) if the views "
                     "erred independently. A measured rate above the bound, or a high error correlation, means "
                     "the views are not independent and adding views buys little.",
             "headers": ["judge", "views", "TPR / FPR per view", "alpha (mean FPR)", "multi-view FPR",
                         "bound if independent", "error correlation"], "rows": rows}]


def judges(comparison: Comparison) -> dict[str, Any]:
    """Rank, display name, run and full spec of every judge."""
    return {"id": "judges", "title": "Judges", "note": "Display names leave out connection settings (api_base, ...).",
            "headers": ["", "judge", "run", "spec as run"],
            "rows": [[f"#{i}", comparison.labels[k], comparison.run_of[k], comparison.specs[k]]
                     for i, k in enumerate(ranked(comparison), start=1)]}


def extra_tables(comparison: Comparison) -> list[dict[str, Any]]:
    """The tables after the leaderboard, the McNemar matrix and the prompt variants (ranking by score first), as
    data: id, title, note, headers, rows (and ``keys``, the judge of each row, where the first column names one)."""
    return [*ranking_table(comparison), verdict_shares_table(comparison), *agreement_table(comparison),
            *dawid_skene_tables(comparison), *human_label_tables(comparison),
            *stability_table(comparison), thresholds(comparison),
            *error_type_tables(comparison), *fallback_cascade(comparison), *view_independence(comparison),
            *injection_tables(comparison), judges(comparison)]


def _section(t: dict[str, Any], level: str = "##") -> list[str]:
    return [f"{level} {t['title']}", ""] + ([t["note"], ""] if t["note"] else []) + [table(t["headers"], t["rows"])]


MAX_DISAGREEMENTS = 20
"""Disagreements listed per variant pair in report.md (report.html has them all)."""


def _text(text: str | None) -> str:
    """Untrusted text (answers, reasons, ids) for a Markdown table cell: no HTML can open."""
    return html.escape(text or "", quote=False)


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _verdict_cells(verdict: dict[str, Any]) -> list[str]:
    mark = "" if verdict["right"] is None else (" ✓" if verdict["right"] else " ✗")
    score = "-" if verdict["score"] is None else f"{verdict['score']:.2f}"
    return [verdict["label"] + mark, score, _text(shorten(verdict["reason"], 240)) or "-"]


def _variants(comparison: Comparison) -> list[str]:
    """## Prompt variants: the table of pairs, then per pair its template diffs and disagreements (folded)."""
    rows = variant_rows(comparison)
    if not rows:
        return []
    p_col = VARIANT_HEADERS.index("McNemar p")
    cells = [[_text(c) for c in row["cells"][:p_col]] + [_p(row["mcnemar_p"])] + row["cells"][p_col + 1:]
             for row in rows]
    lines = ["## Prompt variants", "", VARIANTS_NOTE, "", table(VARIANT_HEADERS, cells)]
    for row in rows:
        a, b = row["a"], row["b"]
        diffs = template_diffs(comparison, a, b)
        found = disagreements(comparison, a, b)
        summary = (f"{row['label_a']} → {row['label_b']}: {len(diffs)} template file{'s' * (len(diffs) != 1)} "
                   f"differ{'s' * (len(diffs) == 1)}, {len(found)} disagreement{'s' * (len(found) != 1)}")
        lines += ["", f"<details><summary>{html.escape(summary)}</summary>", ""]
        if diffs:
            for name, text in diffs:
                fence = _fence(text)
                lines += [f"Template `{name}`, A → B:", "", fence + "diff", text.rstrip("\n"), fence, ""]
        else:
            lines += [f"No recorded template text differs (they differ in {', '.join(row['differs'])}).", ""]
        if found:
            shown = found[:MAX_DISAGREEMENTS]
            lines += [(f"Where they disagree (A: {_text(row['label_a'])}, B: {_text(row['label_b'])}; "
                       "✓/✗: right/wrong against gold):"), "",
                      table(["example", "gold", "question", "answer", "A", "A score", "A reason", "B", "B score",
                             "B reason"],
                            [[_text(d["id"]), d["gold"] or "-", _text(d["question_short"]) or "-",
                              _text(d["answer_short"]), *_verdict_cells(d["a"]), *_verdict_cells(d["b"])]
                             for d in shown])]
            if len(found) > len(shown):
                lines += ["", f"… and {len(found) - len(shown)} more (report.html lists them all)."]
            lines.append("")
        else:
            lines += ["Their verdicts agree on every answer both judged.", ""]
        lines.append("</details>")
    return lines


def render_markdown(comparison: Comparison, plots: list[Path] | list[str]) -> str:
    """The whole report.md; plots are linked by file name (they sit beside it)."""
    sections: list[list[str]] = [
        ["# groundjudge report", ""] + _runs(comparison),
        _leaderboard(comparison),
        _mcnemar(comparison),
        _variants(comparison),
        *(_section(t) for t in extra_tables(comparison)),
    ]
    if plots:
        sections.append(["## Plots", ""] + [f"![{Path(p).stem.replace('_', ' ')}]({Path(p).name})\n" for p in plots])
    return "\n\n".join("\n".join(s) for s in sections if s).rstrip() + "\n"

