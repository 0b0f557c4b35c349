"""What the gate prints: the failure message of one answer, and the session's table of verdicts."""

from __future__ import annotations

from collections.abc import Sequence

from groundjudge.testing.gate_model import GateVerdict

MAX_QUOTE = 200
"""Quoted texts (answer, claims, evidence) are cut to this many characters."""


def _quote(text: str | None) -> str:
    """A text in quotes, on one line, cut to MAX_QUOTE characters."""
    flat = " ".join((text or "").split())
    return repr(flat if len(flat) <= MAX_QUOTE else flat[:MAX_QUOTE - 3] + "...")


def _number(value: float | None) -> str:
    """A score or threshold with three decimals, or '-'."""
    return "-" if value is None else f"{value:.3f}"


def failure_message(verdict: GateVerdict) -> str:
    """Why an answer failed the gate: verdict, score, threshold, repeats, the reason and every unsupported claim
    with its evidence."""
    result = verdict.result.verdict
    rule = "label grounded" if verdict.min_score is None else f"score >= {verdict.min_score:g}"
    lines = [f"answer not grounded (judge {verdict.judge}): verdict {verdict.label}, score {_number(verdict.score)}, "
             f"threshold {_number(verdict.threshold)}",
             f"repeats: {verdict.passing} of {verdict.repeats} passed ({rule}); "
             f"pass rate needed {verdict.pass_rate:g}, got {verdict.share:.2f}"]
    if verdict.repeats > 1:
        lines.append("repeat verdicts: " + ", ".join(
            f"{v.label}" + (f" {v.score:.3f}" if v.score is not None else "") for v in verdict.result.repeats))
    if result.abstain_reason:
        lines.append(f"reason: {result.abstain_reason}")
    unsupported = [c for c in result.claims if c.label != "supported"]
    if unsupported:
        lines.append(f"unsupported claims ({len(unsupported)} of {len(result.claims)}):")
    for claim in unsupported:
        score = f", score {claim.score:.3f}" if claim.score is not None else ""
        kind = f", {claim.error_type}" if claim.error_type else ""
        lines.append(f"  - {_quote(claim.claim.text)} ({claim.label}{score}{kind})")
        if claim.evidence is not None:
            lines.append(f"      evidence (document {claim.evidence.doc_index}): {_quote(claim.evidence.text)}")
        else:
            lines.append("      evidence: none found")
        if claim.reason:
            lines.append(f"      reason: {claim.reason}")
    if result.suspected_injection:
        lines.append("suspected injection: " + "; ".join(_quote(f.text) for f in result.suspected_injection))
    lines.append(f"path: {result.path}")
    lines.append(f"answer: {_quote(verdict.example.answer)}")
    return "\n".join(lines)


COLUMNS = ("gate", "verdict", "score", "threshold", "repeats", "test", "judge")
"""The columns of the session's table: the short ones first, so the long ones (test ids, judge specs) never need
cutting."""


def table_rows(verdicts: Sequence[GateVerdict]) -> list[tuple[str, ...]]:
    """One row per verdict, in the order of COLUMNS (a verdict only looked at shows its gate in parentheses)."""
    rows = []
    for v in verdicts:
        gate = "PASS" if v.passed else "FAIL"
        rows.append((gate if v.asserted else f"({gate.lower()})", v.label, _number(v.score), _number(v.threshold),
                     f"{v.passing}/{v.repeats}", v.test, v.judge))
    return rows


def render_table(verdicts: Sequence[GateVerdict]) -> list[str]:
    """The session's verdicts as aligned text lines, a header and one line per verdict."""
    rows = [COLUMNS, *table_rows(verdicts)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    numeric = {2, 3, 4}
    return ["  ".join(cell.rjust(w) if i in numeric else cell.ljust(w)
                      for i, (cell, w) in enumerate(zip(row, widths))).rstrip() for row in rows]


def totals(verdicts: Sequence[GateVerdict]) -> str:
    """The one-line tally under the table; a session that only looked (``groundjudge.judge``) is told so, not
    given a '0 passed, 0 failed' that reads like an empty or lost run."""
    asserted = [v for v in verdicts if v.asserted]
    if not asserted:
        return f"{len(verdicts)} verdicts: none asserted"
    failed = sum(not v.passed for v in asserted)
    return (f"{len(verdicts)} verdicts: {len(asserted) - failed} passed, {failed} failed"
            + (f", {len(verdicts) - len(asserted)} not asserted" if len(asserted) < len(verdicts) else ""))
