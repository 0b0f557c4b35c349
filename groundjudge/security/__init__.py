"""Find text that addresses the judge instead of the reader (prompt injection aimed at the grading).

:func:`detect` scans one text, :func:`scan` every judged text of an example (answer, question, each document).
Both return :class:`~groundjudge.types.InjectionFinding` spans, sorted and non-overlapping, with offsets into the
text scanned. Two detectors:

* ``"rules"`` (the default): the English rules (:mod:`.rules`), other languages (:mod:`.languages`), encoded
  text (:mod:`.decoding`) and, in answers only, text vouching for the answer itself (:mod:`.vouching`); precise,
  no model.
* ``"embedding"`` (opt-in): sentence similarity to judge-addressing prototypes (:mod:`.embedding`, needs the
  ``local`` extra).

:mod:`.attacks` builds the battery of attacked answers these detectors are measured on.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from groundjudge.security import decoding, languages, rules, vouching
from groundjudge.security.rules import Hit
from groundjudge.types import Example, InjectionFinding, InjectionStyle

DETECTORS = ("rules", "embedding")
"""The detectors :func:`detect` knows."""

Field = Literal["answer", "question", "context"]
"""Which judged text a finding is in."""

STYLE_PRIORITY: tuple[InjectionStyle, ...] = ("closing_tag", "system_line", "encoded_instruction",
                                              "foreign_instruction", "verdict_object", "reviewer_note",
                                              "rubric_claim", "addresses_judge")
"""When hits of several styles are merged into one finding, the first of these names it."""

__all__ = ["DETECTORS", "detect", "scan", "merge"]


def _hits(text: str, detectors: Iterable[str], field: Field = "answer") -> list[Hit]:
    detectors = tuple(detectors)
    unknown = sorted(set(detectors) - set(DETECTORS))
    if unknown:
        raise ValueError(f"unknown injection detector {unknown[0]!r}; known: {', '.join(DETECTORS)}")
    hits: list[Hit] = []
    if "rules" in detectors:
        hits += rules.find(text) + languages.find(text) + decoding.find(text)
        if field == "answer":
            hits += vouching.find(text)
    if "embedding" in detectors:
        from groundjudge.security import embedding

        hits += [Hit("addresses_judge", s, e, f"embedding:{sim:.2f}") for s, e, sim in embedding.find(text)]
    return hits


def _detector(group: list[Hit]) -> str:
    names = list(dict.fromkeys(h.rule for h in group if not h.rule.startswith("embedding:")))
    sims = [float(h.rule.split(":", 1)[1]) for h in group if h.rule.startswith("embedding:")]
    parts = (["rules:" + "+".join(names)] if names else []) + ([f"embedding:{max(sims):.2f}"] if sims else [])
    return ",".join(parts)


def merge(text: str, hits: Iterable[Hit], field: Field = "answer", doc_index: int | None = None
          ) -> tuple[InjectionFinding, ...]:
    """Raw hits as findings: overlapping hits, and hits with only whitespace between them, become one finding
    named by :data:`STYLE_PRIORITY`; the result is sorted by offset."""
    ordered = sorted(hits, key=lambda h: (h.start, -h.end))
    groups: list[list[Hit]] = []
    end = -1
    for hit in ordered:
        if groups and (hit.start < end or not text[end:hit.start].strip()):
            groups[-1].append(hit)
            end = max(end, hit.end)
        else:
            groups.append([hit])
            end = hit.end
    findings = []
    for group in groups:
        start, stop = min(h.start for h in group), max(h.end for h in group)
        style = min((h.style for h in group), key=STYLE_PRIORITY.index)
        decoded = next((h.decoded for h in group if h.decoded), None)
        findings.append(InjectionFinding(field=field, doc_index=doc_index, style=style, start=start, end=stop,
                                         text=text[start:stop], decoded=decoded, detector=_detector(group)))
    return tuple(findings)


def detect(text: str, field: Field = "answer", doc_index: int | None = None,
           detectors: Iterable[str] = ("rules",)) -> tuple[InjectionFinding, ...]:
    """The spans of ``text`` that address the judge, sorted and non-overlapping (``text[f.start:f.end] ==
    f.text``). ``field`` and ``doc_index`` say where the text is from; ``detectors`` picks ``"rules"`` (default)
    and/or ``"embedding"``."""
    if not text:
        return ()
    return merge(text, _hits(text, detectors, field), field, doc_index)


def scan(example: Example, detectors: Iterable[str] = ("rules",), embed_documents: bool = False
         ) -> tuple[InjectionFinding, ...]:
    """The findings in an example's answer, question and each context document, in that order. The embedding
    detector (when asked for) reads the answer and question; the documents too with ``embed_documents``."""
    detectors = tuple(detectors)
    doc_detectors = detectors if embed_documents else tuple(d for d in detectors if d != "embedding")
    found = list(detect(example.answer, "answer", None, detectors))
    if example.question:
        found += detect(example.question, "question", None, detectors)
    for index, doc in enumerate(example.context):
        if doc_detectors:
            found += detect(doc, "context", index, doc_detectors)
    return tuple(found)
