"""The batch path of a local judge: many examples scored in one blocking call, as the judge scores one.

A batch path is the judge's own ``score_batch`` (its ``score`` is ``score_batch`` of one example, so the two
cannot drift): ``nli`` sends every example's (evidence window, claim) pairs through the model at once, ``cosine``
embeds every example's answer sentences and every new context's sentences in one call. It runs in a worker thread.

Every other judge has no batch path and is judged one request at a time on its own path: a local judge's
``score`` in a worker thread (``judge_locally``), an LLM judge's calls on the event loop. quip has no model to
batch: its pure-Python n-gram counting gains nothing from company.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from groundjudge.judges.scoring import Scored
from groundjudge.types import Example

BatchPath = Callable[[Sequence[Example]], list[Scored]]
"""Scores a batch of examples in one blocking call, one Scored per example, in order."""


def verdict_path(judge: Any) -> str:
    """The ``path`` a batched judge writes on its verdicts, as its own ``judge`` does."""
    if callable(getattr(judge, "path", None)):
        return judge.path()
    return f"local:cosine({judge.model})"


def batch_path(judge: Any) -> BatchPath | None:
    """The judge's batch path (``nli`` and ``cosine`` exactly, not their subclasses), or None when it has none
    (it is then judged one request at a time)."""
    from groundjudge.judges.cosine import CosineJudge
    from groundjudge.judges.nli import NLIJudge

    if type(judge) in (NLIJudge, CosineJudge):
        return judge.score_batch
    return None
