"""Inspect: the ``groundjudge/grounded`` scorer, registered through the ``inspect_ai`` entry point.

```python
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from groundjudge.integrations.inspect import grounded

task = Task(dataset=[Sample(input="When is rent due?", metadata={"context": ["Rent is due on day 1."]})],
            scorer=grounded(judge="quip"))
eval(task, model="mockllm/model")
```

or from the command line, over a finished log: ``inspect score LOG --scorer groundjudge/grounded -S judge=quip``.

The scorer judges the model's answer (``state.output.completion``) against the documents in the sample's metadata
(``context``: one text or a list), else against what the sample's tools returned in the conversation (every tool
message, or those of the tool named by ``tool=``). It returns ``Score(value, answer, explanation, metadata)``:
value 1.0 grounded / 0.0 ungrounded (so ``mean`` is the share of grounded answers), the explanation naming the
unsupported claims, the judge's label, score, threshold and path in the metadata. An abstention, or a sample
with no documents, is ``Score.unscored(reason=...)`` (value NaN: kept in the log, left out of the metrics).

Needs the ``[inspect]`` extra; importing this module does not import Inspect (``grounded`` does, on first use).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from groundjudge.integrations.extras import require
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


def __getattr__(name: str) -> Any:
    """``grounded``: the scorer (Inspect imported on first use, so importing this module stays light)."""
    if name != "grounded":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    require("inspect_ai", "inspect")
    from groundjudge.integrations.inspect_registry import grounded

    return grounded
