"""The report's per error type tables (report.md and the HTML page): misses and recall per gold error type, the
type each judge misses most, the types the judges gave, and the confusion matrix of each typing judge.

Tables come as data (id, title, note, headers, rows, and ``keys``: the judge of each row where the first column
names one), as :func:`groundjudge.report.markdown.extra_tables` returns them. No matplotlib here.
"""

from __future__ import annotations

from typing import Any

from groundjudge.report.compare import Comparison, ranked
from groundjudge.runs.error_type_stats import MIN_TYPE_N


def recall_text(row: dict[str, Any] | None) -> str:
    """A recall rate as ``0.62 [0.48, 0.74] (n=45)``; ``-`` when there is none."""
    if not row or row.get("rate") is None:
        return "-"
    low, high = row["ci95"]
    return f"{row['rate']:.2f} [{low:.2f}, {high:.2f}] (n={row['n']})"


def _misses(comparison: Comparison) -> list[dict[str, Any]]:
    typed = {k: comparison.judges[k]["per_error_type"] for k in ranked(comparison)
             if comparison.judges[k].get("per_error_type")}
    if not typed:
        return []
    kinds = sorted({kind for per_type in typed.values() for kind in per_type})
    rows = [[comparison.labels[k]] + [f"{v[kind]['miss_rate']:.2f} ({v[kind]['missed']}/{v[kind]['n']})"
                                      if kind in v else "-" for kind in kinds] for k, v in typed.items()]
    return [{"id": "error-types", "keys": list(typed), "title": "Missed errors by gold error type",
             "note": "Share of the ungrounded answers of each gold error type that the judge called grounded "
                     "(missed/total); lower is better. Abstentions are not counted as misses here.",
             "headers": ["judge"] + kinds, "rows": rows}]


def recall_tables(comparison: Comparison) -> list[dict[str, Any]]:
    """Recall per gold error type per judge with its Wilson 95% interval, and the type each judge misses most."""
    recall = {k: comparison.judges[k]["error_type_recall"] for k in ranked(comparison)
              if comparison.judges[k].get("error_type_recall")}
    if not recall:
        return []
    kinds = sorted({kind for per_type in recall.values() for kind in per_type})
    out = [{"id": "error-type-recall", "keys": list(recall), "title": "Recall by gold error type",
            "note": "Share of the ungrounded answers of each gold error type that the judge called ungrounded, "
                    "with its Wilson 95% interval and the number of such answers; higher is better. Abstentions "
                    "count as not caught.",
            "headers": ["judge"] + kinds,
            "rows": [[comparison.labels[k]] + [recall_text(v.get(kind)) for kind in kinds]
                     for k, v in recall.items()]}]
    rows = []
    for key, per_type in recall.items():
        worst = comparison.judges[key].get("most_missed_type")
        if worst is None:
            rows.append([comparison.labels[key], f"- (no gold type has {MIN_TYPE_N} answers or more)", "-"])
        else:
            rows.append([comparison.labels[key], worst, recall_text(per_type.get(worst))])
    out.append({"id": "most-missed-type", "keys": list(recall), "title": "The error type each judge misses most",
                "note": f"The gold error type with the lowest recall, among the types with {MIN_TYPE_N} answers "
                        "or more (equal recalls: the type with more answers).",
                "headers": ["judge", "misses most", "its recall [95% CI] (n)"], "rows": rows})
    return out


def _given(comparison: Comparison) -> list[dict[str, Any]]:
    given = [k for k in ranked(comparison) if comparison.judges[k].get("predicted_error_types")]
    if not given:
        return []
    return [{"id": "predicted-error-types", "keys": given, "title": "Error types the judges gave", "note": "",
             "headers": ["judge", "error types given (claims)", "matches a gold type"], "rows": [
                 [comparison.labels[k],
                  ", ".join(f"{t} {n}" for t, n in comparison.judges[k]["predicted_error_types"].items()),
                  f"{comparison.judges[k]['error_type_accuracy']:.2f} "
                  f"(n={comparison.judges[k]['error_type_accuracy_n']})"
                  if "error_type_accuracy" in comparison.judges[k] else "-"] for k in given]}]


def typing_tables(comparison: Comparison) -> list[dict[str, Any]]:
    """For the judges that type errors: macro-F1 of the typing side by side, then each one's confusion matrix
    (gold type rows, the judge's type of the answer as columns) with per-type precision, recall and F1."""
    keys = [k for k in ranked(comparison) if comparison.judges[k].get("error_typing")]
    if not keys:
        return []
    out = [{"id": "error-typing", "keys": keys, "title": "Error typing: macro-F1",
            "note": "How well each typing judge names the error, on the ungrounded answers whose gold type is in "
                    "its taxonomy. An answer's type is the one given to its least-supported unsupported claim "
                    "(the first, where the claims carry no score), or none "
                    "when the judge called it grounded, abstained or typed nothing. Macro-F1: mean F1 over the "
                    "types that are a gold or a given type (none is never a class, only a miss).",
            "headers": ["judge", "typing macro-F1", "typed as gold", "given no type", "n"],
            "rows": [[comparison.labels[k], f"{t['macro_f1']:.3f}", f"{t['accuracy']:.3f}", str(t["n_none"]),
                      str(t["n"])] for k in keys for t in [comparison.judges[k]["error_typing"]]]}]
    for i, key in enumerate(keys):
        typing = comparison.judges[key]["error_typing"]
        per_type = typing["per_type"]
        rows = []
        for gold in typing["types"]:
            counts = typing["confusion"][gold]
            scores = per_type.get(gold)
            rows.append([gold] + [str(counts[p]) for p in typing["predicted"]] + [str(sum(counts.values()))]
                        + ([f"{scores[m]:.2f}" for m in ("precision", "recall", "f1")] if scores else ["-"] * 3))
        out.append({"id": f"error-typing-confusion-{i + 1}", "title":
                    f"Error typing of {comparison.labels[key]}: confusion matrix",
                    "note": f"Rows: gold error type; columns: the type the judge gave the answer. Macro-F1 "
                            f"{typing['macro_f1']:.3f} on n={typing['n']} answers; typed as gold "
                            f"{typing['accuracy']:.3f}. P / R / F1: the typing's precision, recall and F1 for the "
                            "row's type (-: neither a gold nor a given type).",
                    "headers": ["gold \\ given"] + typing["predicted"] + ["n", "P", "R", "F1"], "rows": rows})
    return out


def error_type_tables(comparison: Comparison) -> list[dict[str, Any]]:
    """Every per error type table of the report, in order (none when no answer carries a gold error type and no
    judge types errors)."""
    return [*_misses(comparison), *recall_tables(comparison), *_given(comparison), *typing_tables(comparison)]
