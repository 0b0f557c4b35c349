"""The report section of a tune (``tune.md``, from ``tune.json``): every candidate with its select-part score and
calls, then the start against the winner on the test part."""

from __future__ import annotations

from groundjudge.report.markdown import table
from groundjudge.tune.result import Delta, TuneResult


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _delta(d: Delta) -> str:
    if d.delta is None:
        return "-"
    ci = f" [{d.ci95[0]:+.3f}, {d.ci95[1]:+.3f}]" if d.ci95 else ""
    return f"{_num(d.start)} → {_num(d.winner)} ({d.delta:+.3f}{ci})"


def candidate_rows(result: TuneResult) -> list[list[str]]:
    """One row per candidate, the winner and the start marked, best select score first."""
    rows = sorted(result.candidates, key=lambda r: (-r.rung, -(r.select_balanced_accuracy or -1.0)))
    marks = {result.winner: " (winner)", result.start: " (start)"}
    if result.winner == result.start:
        marks[result.start] = " (start, winner)"
    return [[r.name + marks.get(r.id, ""), str(r.rung) if r.rung >= 0 else "-", str(r.select_examples or "-"),
             _num(r.select_balanced_accuracy), _num(r.select_roc_auc), _num(r.threshold), str(r.calls)]
            for r in rows]


def tune_markdown(result: TuneResult) -> str:
    """The section as Markdown."""
    lines = ["## Tuning", "",
             f"`{result.tune_file}`, judge `{result.judge}`, seed {result.seed}: {result.calls} LLM calls of "
             f"{result.max_calls} (${result.cost_usd:.4f}); search ended: {result.stopped}. Parts (answers / "
             "groups): " + ", ".join(f"{k} {v} / {result.groups[k]}" for k, v in result.parts.items()) + ".", "",
             "### Candidates on the select part", "",
             table(["candidate", "rung", "answers", "balanced acc.", "ROC AUC", "threshold", "calls"],
                   candidate_rows(result)), ""]
    if result.test:
        t = result.test
        lines += ["### Start and winner on the test part", "",
                  f"{t.n} answers, each judged once by each; Δ with paired bootstrap 95% CIs.", "",
                  table(["", "start → winner (Δ [95% CI])"],
                        [["balanced accuracy", _delta(t.balanced_accuracy)], ["ROC AUC", _delta(t.roc_auc)],
                         ["McNemar p", _num(t.mcnemar_p)],
                         ["input tokens / answer", f"{t.start_cost.input_tokens:.0f} → {t.winner_cost.input_tokens:.0f}"],
                         ["output tokens / answer",
                          f"{t.start_cost.output_tokens:.0f} → {t.winner_cost.output_tokens:.0f}"],
                         ["$ / answer", f"{t.start_cost.cost_usd:.6f} → {t.winner_cost.cost_usd:.6f}"]]), ""]
    lines += [f"The winner runs as it is: `groundjudge run {result.winner_config}`."]
    lines += [f"- {note}" for note in result.notes]
    return "\n".join(lines) + "\n"
