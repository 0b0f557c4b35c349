"""What an LLM judge does with an answer that addresses the judge (issue: judges that cannot be talked into a verdict).

Before any call, the judged texts are screened (``groundjudge.security``: rules, optionally an embedding check).
With findings, the judge's ``on_injection`` setting decides:

- ``strip`` (default): judge the texts with the suspect spans cut out, and flag;
- ``flag``: judge as usual, the verdict carries the findings (for measuring a judge's own defences);
- ``abstain``: no call; abstain with reason ``suspected_injection`` and the findings;
- ``route``: hand the example to the local judge ``route_to`` (its verdict's path says so), and flag.

Whatever the action, the findings are on the verdict, so the report can count and highlight them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from groundjudge.types import Example, InjectionAction, InjectionFinding, JudgeResult, Verdict

ABSTAIN_REASON = "suspected_injection"
"""The abstain reason of ``on_injection=abstain`` (followed by the styles found)."""


def screen(example: Example, detectors: tuple[str, ...] = ("rules",)) -> tuple[InjectionFinding, ...]:
    """Every span of the answer, question and documents that addresses the judge."""
    from groundjudge.security import scan

    return scan(example, detectors=detectors)


def cut_spans(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """The text without the given spans (overlapping spans merged), whitespace at the seams tidied."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    pieces, last = [], 0
    for start, end in merged:
        pieces.append(text[last:start])
        last = end
    pieces.append(text[last:])
    joined = ""
    for piece in pieces:
        if joined and piece and not joined[-1].isspace() and not piece[0].isspace():
            joined += " "
        joined += piece
    return re.sub(r"[ \t]{2,}", " ", joined).strip()


def _spans(findings: Iterable[InjectionFinding], field: str, doc_index: int | None = None) -> list[tuple[int, int]]:
    return [(f.start, f.end) for f in findings if f.field == field and (field != "context" or f.doc_index == doc_index)]


def answer_content(example: Example, findings: Iterable[InjectionFinding]) -> str:
    """The answer without the spans that address the judge: the only text claims may be taken from."""
    spans = _spans(findings, "answer")
    return cut_spans(example.answer, spans) if spans else example.answer


def stripped(example: Example, findings: tuple[InjectionFinding, ...]) -> Example:
    """The example with every suspect span cut from its answer, question and documents (a document left empty
    keeps a placeholder, so the context is never blank)."""
    update: dict = {"answer": answer_content(example, findings)}
    if example.question and _spans(findings, "question"):
        update["question"] = cut_spans(example.question, _spans(findings, "question"))
    context = []
    for index, doc in enumerate(example.context):
        spans = _spans(findings, "context", index)
        context.append((cut_spans(doc, spans) or "(removed)") if spans else doc)
    update["context"] = tuple(context)
    return example.model_copy(update=update)


def abstention(example: Example, findings: tuple[InjectionFinding, ...], path: str) -> JudgeResult:
    """``on_injection=abstain``: no call made; the reason names the styles found."""
    styles = ", ".join(sorted({f.style for f in findings}))
    verdict = Verdict(example_id=example.id, label="abstain", abstain_reason=f"{ABSTAIN_REASON}: {styles}",
                      suspected_injection=findings, injection_action="abstain", path=path)
    return JudgeResult(verdict=verdict)


def flagged(result: JudgeResult, findings: tuple[InjectionFinding, ...], action: InjectionAction,
            path: str | None = None) -> JudgeResult:
    """The result with the findings (and the action taken) on its verdict; ``path`` renames who decided."""
    update: dict = {"suspected_injection": findings, "injection_action": action}
    if path is not None:
        update["path"] = path
    return result.model_copy(update={"verdict": result.verdict.model_copy(update=update)})


def routed(result: JudgeResult, findings: tuple[InjectionFinding, ...], llm_verdict_path: str) -> JudgeResult:
    """``on_injection=route``: the local judge's result, its path marked ``route:<local path>``; the LLM judge that
    stepped aside is kept as the first stage."""
    step_aside = Verdict(example_id=result.verdict.example_id, label="abstain",
                         abstain_reason=f"{ABSTAIN_REASON}: routed", path=llm_verdict_path)
    out = flagged(result, findings, "route", path=f"route:{result.verdict.path}")
    return out.model_copy(update={"stages": (step_aside, result.verdict)})
