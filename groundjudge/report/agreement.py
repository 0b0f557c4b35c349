"""The report's tables that need no labels: each judge's verdict shares, and agreement between every two judges."""

from __future__ import annotations

import json
from typing import Any

from groundjudge.report.compare import Comparison
from groundjudge.report.compare import ranked

SHARES_NOTE = ("Without gold labels the verdicts still say how each judge leans: the share of its decisions that "
               "say grounded, and how often it abstained.")
AGREEMENT_NOTE = ("On every answer both judges decided (labelled or not): the share with the same verdict and "
                  "Cohen's kappa (percentile-bootstrap 95% interval). Only the answers on which two judges "
                  "disagree can show which of them is right: those are the ones to label first.")


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def verdict_shares_table(comparison: Comparison) -> dict[str, Any]:
    """Per judge: answers judged, decided, the share called grounded and the share abstained."""
    order = ranked(comparison)
    rows = [[comparison.labels[key], str(s["n_judged"]), str(s.get("n_decided", "-")),
             _share(s.get("grounded_share")), _share(s.get("abstain_share"))]
            for key in order for s in [comparison.judges[key]]]
    return {"id": "verdict-shares", "keys": order, "title": "Verdicts without labels", "note": SHARES_NOTE,
            "headers": ["judge", "judged", "decided", "called grounded", "abstained"], "rows": rows}


def agreement_table(comparison: Comparison) -> list[dict[str, Any]]:
    """Every two judges: answers both decided, agreement, kappa [95% CI] and the disagreements, split by side;
    none when the report has one judge."""
    if len(comparison.judges) < 2:
        return []
    rows = []
    for pair in comparison.pairwise:
        kappa = "-" if pair.get("kappa") is None else f"{pair['kappa']:.3f}" + (
            f" [{pair['kappa_ci95'][0]:.2f}, {pair['kappa_ci95'][1]:.2f}]" if pair.get("kappa_ci95") else "")
        rows.append([comparison.labels[pair["a"]], comparison.labels[pair["b"]], str(pair.get("n_both", 0)),
                     _share(pair.get("agreement")), kappa, str(pair.get("disagreements", 0)),
                     str(pair.get("a_grounded_b_ungrounded", 0)), str(pair.get("a_ungrounded_b_grounded", 0))])
    return [{"id": "agreement", "title": "Agreement between judges (no labels needed)", "note": AGREEMENT_NOTE,
             "headers": ["a", "b", "both decided", "agree", "kappa [95% CI]", "disagree",
                         "a grounded, b not", "b grounded, a not"], "rows": rows}]


DAWID_SKENE_NOTE = ("MODEL-BASED, NOT MEASURED: the Dawid-Skene model fitted to the judges' verdicts alone (no labels; "
                    "abstentions left out). It assumes the judges err independently given the true label; judges "
                    "that share a model, prompt or method break that, and their shared mistakes then look like the "
                    "truth. A hint for an unlabelled run; human labels (groundjudge label / estimate) measure.")


def dawid_skene_rows(hint: Any) -> list[list[str]]:
    """One row per judge of a :class:`~groundjudge.runs.summary_model.DawidSkeneHint` (or its dict)."""
    data = hint if isinstance(hint, dict) else hint.model_dump()
    return [[spec, str(j["n_decided"]), f"{j['accuracy']:.3f}", f"{j['balanced_accuracy']:.3f}",
             f"{j['recall_grounded']:.3f}", f"{j['recall_ungrounded']:.3f}"] for spec, j in data["judges"].items()]


DAWID_SKENE_HEADERS = ["judge", "decided", "accuracy (model)", "balanced accuracy (model)", "P(G | grounded)",
                       "P(U | ungrounded)"]
"""The columns of the Dawid-Skene table, in the report and on the terminal."""


def _shared_note(data: dict[str, Any]) -> str:
    groups = [" and ".join(group) for group in data.get("shared", [])]
    return (f" Judges that share a model or kind here: {'; '.join(groups)}." if groups else "") + \
        f" Model-based share grounded: {data['grounded_share']:.1%} of {data['n_answers']} answers."


def dawid_skene_tables(comparison: Comparison) -> list[dict[str, Any]]:
    """For every run whose summary.json carries ``dawid_skene`` (``run`` / ``summarize --dawid-skene``), the hint
    recomputed from its records; none otherwise, or with fewer than three judges."""
    from groundjudge.errors import UsageError
    from groundjudge.runs.dawid_skene import dawid_skene_for_records

    tables = []
    for run in comparison.runs:
        saved = run.path / "summary.json"
        try:
            asked = "dawid_skene" in json.loads(saved.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            asked = False
        try:
            hint = dawid_skene_for_records(run.records) if asked else None
        except UsageError as err:
            tables.append({"id": f"dawid-skene-{run.name}", "title": f"Dawid-Skene hint ({run.name})",
                           "note": str(err), "headers": ["judge"], "rows": []})
            continue
        if hint is None:
            continue
        data = hint.model_dump()
        tables.append({"id": f"dawid-skene-{run.name}", "title": f"Dawid-Skene hint ({run.name}): model-based, "
                                                                 "no labels",
                       "note": DAWID_SKENE_NOTE + _shared_note(data), "headers": DAWID_SKENE_HEADERS,
                       "rows": dawid_skene_rows(data)})
    return tables


def dawid_skene_terminal(summary: dict[str, Any]):
    """The hint as a terminal table (None when the summary has none)."""
    from rich.table import Table
    from rich.text import Text

    data = summary.get("dawid_skene")
    if not data:
        return None
    table = Table(title="Dawid-Skene hint: MODEL-BASED from the verdicts alone, no labels; assumes judges err "
                        "independently (judges sharing a model break that)." + _shared_note(data))
    for column in DAWID_SKENE_HEADERS:
        table.add_column(column, justify="left" if column == "judge" else "right")
    for row in dawid_skene_rows(data):
        table.add_row(Text(row[0]), *row[1:])
    return table
