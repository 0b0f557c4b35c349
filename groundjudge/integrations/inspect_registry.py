"""The module Inspect loads through the ``inspect_ai`` entry point: it registers ``groundjudge/grounded``.

It imports Inspect at the top (Inspect itself loads it); everything else reaches the scorer through
:mod:`groundjudge.integrations.inspect`, which stays importable without the ``[inspect]`` extra (the scorer's
Inspect-free parts are in :mod:`groundjudge.integrations.inspect_fields`).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from groundjudge.integrations.inspect_fields import sample_context, score_fields
from groundjudge.integrations.judging import LoopJudge


@scorer(metrics=[mean(), stderr()])
def grounded(judge: str = "quip", tool: str | None = None, **settings: Any) -> Scorer:
    """Is the model's answer grounded in the sample's documents, by the groundjudge judge ``judge``?

    ``judge``: any judge spec (``"quip"``, ``"cosine"``, ``"claims:model=gpt-4o-mini"``, ...), ``settings`` its
    settings as keywords (``-S threshold=0.4`` on the command line); ``tool``: read the documents from this tool's
    messages only (default: every tool message) when the sample's metadata has no ``context``.
    """
    loop_judge = LoopJudge(judge=judge, settings=settings)

    async def score(state: TaskState, target: Target) -> Score:
        """Judge ``state.output.completion`` against the sample's documents."""
        answer = state.output.completion
        documents = sample_context(state.metadata, state.messages, tool)
        if not documents:
            return Score.unscored(reason="no_context", answer=answer,
                                  explanation="no documents: neither metadata['context'] nor a tool's output")
        view = await loop_judge.judge_answer(answer, documents, question=state.input_text,
                                             example_id=str(state.sample_id))
        fields = score_fields(view, answer)
        if view.label == "abstain":
            return Score.unscored(reason=view.abstain_reason, answer=answer, explanation=fields["explanation"],
                                  metadata=fields["metadata"])
        return Score(**fields)

    return score
