"""The Inspect scorer's parts that need no Inspect: the documents of a sample (its metadata's ``context``, else its
tools' outputs) and a verdict as ``Score`` keywords.

Used by the registered scorer (:mod:`groundjudge.integrations.inspect_registry`) and re-exported by
:mod:`groundjudge.integrations.inspect`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from groundjudge.integrations.judging import documents_of
from groundjudge.integrations.verdicts import VerdictView, explanation

CONTEXT_KEY = "context"
"""The sample metadata key the documents are read from."""


def tool_outputs(messages: Iterable[Any], tool: str | None = None) -> list[str]:
    """The text of every tool message in ``messages`` (only ``tool``'s, when named) that is not an error."""
    texts = []
    for message in messages:
        if getattr(message, "role", None) != "tool" or getattr(message, "error", None) is not None:
            continue
        if tool is not None and getattr(message, "function", None) != tool:
            continue
        texts.append(getattr(message, "text", "") or "")
    return [text for text in texts if text.strip()]


def sample_context(metadata: dict[str, Any] | None, messages: Iterable[Any], tool: str | None = None) -> list[str]:
    """The documents of a sample: its metadata's ``context``, else its retrieval tool's outputs."""
    given = documents_of((metadata or {}).get(CONTEXT_KEY))
    return given or tool_outputs(messages, tool)


def score_fields(view: VerdictView, answer: str) -> dict[str, Any]:
    """``Score`` keywords for a verdict: value 1.0 / 0.0, the answer, the explanation and the verdict's fields."""
    metadata = {"judge": view.judge, "label": view.label, "score": view.score, "threshold": view.threshold,
                "path": view.path, "abstain_reason": view.abstain_reason,
                "unsupported_claims": [c.claim.text for c in view.claims if c.label != "supported"]}
    value = float("nan") if view.label == "abstain" else 1.0 if view.label == "grounded" else 0.0
    return {"value": value, "answer": answer, "explanation": explanation(view), "metadata": metadata}
