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
The scorer's parts that need no Inspect (a sample's documents, a verdict's ``Score`` fields) are in
:mod:`groundjudge.integrations.inspect_fields`, the registered scorer in
:mod:`groundjudge.integrations.inspect_registry`.
"""

from __future__ import annotations

from typing import Any

from groundjudge.integrations.extras import require
from groundjudge.integrations.inspect_fields import (  # noqa: F401  (re-exported: the scorer's plain parts)
    CONTEXT_KEY,
    sample_context,
    score_fields,
    tool_outputs,
)


def __getattr__(name: str) -> Any:
    """``grounded``: the scorer (Inspect imported on first use, so importing this module stays light)."""
    if name != "grounded":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    require("inspect_ai", "inspect")
    from groundjudge.integrations.inspect_registry import grounded

    return grounded
