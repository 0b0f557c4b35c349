"""Demonstrations as a prompt shows them: screened for text that addresses the judge (as the judged answer is),
turned into template variables, and recorded by id and hash for the records header.

Every text of a demonstration (documents, question, answer, note) is screened with the judge's
``injection_detectors``. With ``on_injection=flag`` it is shown as given and the finding recorded; with any other
setting the suspect spans are cut out before it is shown (a demonstration cannot abstain or be routed) and the
finding recorded. Either way the texts are framed as data by the templates (``_demonstrations.j2``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from groundjudge.judges import injection_guard as guard
from groundjudge.judges.demonstrations.pool import Demonstration
from groundjudge.types import DemonstrationRef, Example, InjectionAction


def screened(demo: Demonstration, detectors: tuple[str, ...], action: InjectionAction
             ) -> tuple[Demonstration, DemonstrationRef]:
    """The demonstration as it will be shown (suspect spans cut out unless ``action`` is ``flag``) and its header
    record (id, hashes of the original texts, findings, the action taken)."""
    from groundjudge.security import detect

    example = Example(id=demo.id, question=demo.question, context=demo.context, answer=demo.answer)
    findings = guard.screen(example, detectors)
    note_findings = detect(demo.note, "question", None, detectors) if demo.note else ()
    styles = tuple(f"{f.field}:{f.style}" for f in findings) + tuple(f"note:{f.style}" for f in note_findings)
    shown = demo
    if styles and action != "flag":
        clean = guard.stripped(example, findings) if findings else example
        note = guard.cut_spans(demo.note, [(f.start, f.end) for f in note_findings]) if note_findings else demo.note
        shown = demo.model_copy(update={"question": clean.question, "context": clean.context,
                                        "answer": clean.answer or "(removed)", "note": note})
    ref = DemonstrationRef(id=demo.id, hash=demo.hash, content_hash=demo.content_hash, label=demo.label,
                           injection=styles, injection_action=("flag" if action == "flag" else "strip")
                           if styles else None, entry=demo.model_dump(mode="json", exclude_defaults=True))
    return shown, ref


def template_variables(demos: Sequence[Demonstration]) -> list[dict[str, Any]]:
    """What the templates read of each demonstration (``demos`` variable): question, context, answer, label,
    note."""
    return [{"question": d.question, "context": list(d.context), "answer": d.answer, "label": d.label,
             "note": d.note} for d in demos]


def demonstrations_record(judge: Any) -> tuple[DemonstrationRef, ...]:
    """The header records of every demonstration a judge (and every judge inside it) may show."""
    from groundjudge.judges.composite import judge_parts

    refs: list[DemonstrationRef] = []
    for part in judge_parts(judge):
        record = getattr(part, "demonstration_refs", None)
        if record is not None:
            refs += record()
    return tuple(refs)
