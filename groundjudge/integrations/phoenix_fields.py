"""How Phoenix stores a verdict, for span annotations and experiment evaluations alike: its name
(``groundjudge:<judge>``, ``groundjudge:human``), annotator kind (LLM or CODE), label, score, explanation and
metadata.

Used by :mod:`groundjudge.integrations.phoenix` (span annotations) and
:mod:`groundjudge.integrations.phoenix_dataset` (evaluations), and re-exported by the first.
"""

from __future__ import annotations

from typing import Any

from groundjudge.integrations.verdicts import VerdictView, explanation

ANNOTATION_PREFIX = "groundjudge:"
"""Span annotations and experiment evaluations are named ``groundjudge:<judge>`` (``groundjudge:human``)."""

HUMAN = "human"
"""The name (after the prefix) of the human labels' annotations."""


def annotator_kind(view: VerdictView) -> str:
    """``LLM`` when a language model produced the verdict (its path names ``llm:``), else ``CODE``."""
    return "LLM" if view.path.startswith("llm:") or ":llm:" in view.path else "CODE"


def verdict_fields(view: VerdictView) -> dict[str, Any]:
    """Name, annotator kind, label, score, explanation and metadata of a verdict, as Phoenix stores them."""
    metadata = {key: value for key, value in (("path", view.path), ("threshold", view.threshold),
                                              ("model", view.model), ("abstain_reason", view.abstain_reason),
                                              ("example_id", view.example_id)) if value is not None}
    return {"name": ANNOTATION_PREFIX + view.judge, "annotator_kind": annotator_kind(view), "label": view.label,
            "score": view.score, "explanation": explanation(view), "metadata": metadata}
