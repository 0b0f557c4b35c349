"""The pairs of many answers in one model call: gathered answer by answer, scored at once, handed back per answer.

Shared by the local judges that score (premise, claim) pairs with a cross-encoder (``nli``, ``crossencoder``,
``hhem``, ``minicheck``): each answer adds its pairs and whatever it needs to decide later (its plan), or is
skipped (no claims: it abstains); :func:`scored_answers` scores every pair in one ``score_pairs`` call and turns
each answer's rows of the result into its :class:`~groundjudge.judges.scoring.Scored`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from groundjudge.judges.scoring import Scored
from groundjudge.local_nli.batches import ScoreStats
from groundjudge.types import Example

AnswerScorer = Callable[[Example, Any, np.ndarray, dict[str, float]], Scored]
"""Decides one answer from its plan, its rows of the call's result and the call's shared timings."""


@dataclass
class PairBatch:
    """Pairs of many answers, in answer order, with each answer's plan and its rows of the call (None: skipped)."""

    premises: list[str] = field(default_factory=list)
    hypotheses: list[str] = field(default_factory=list)
    plans: list[tuple[Any, slice] | None] = field(default_factory=list)

    def add(self, plan: Any, premises: Sequence[str], hypotheses: Sequence[str]) -> None:
        """The next answer: its plan and its pairs (premise i with hypothesis i)."""
        start = len(self.premises)
        self.premises += premises
        self.hypotheses += hypotheses
        self.plans.append((plan, slice(start, len(self.premises))))

    def skip(self) -> None:
        """The next answer has nothing to score (no claims): it abstains with ``no_claims``."""
        self.plans.append(None)


def scored_answers(engine: Any, examples: Sequence[Example], batch: PairBatch, answer: AnswerScorer) -> list[Scored]:
    """Every pair of ``batch`` through ``engine.score_pairs`` in one call, then each answer's Scored from
    ``answer(example, plan, its rows, shared)``: ``shared`` holds the call's counts (``pairs_scored``... and
    ``batch_examples`` when the call scored more than one answer)."""
    stats = ScoreStats()
    probs = engine.score_pairs(batch.premises, batch.hypotheses, stats=stats)
    shared = {**stats.as_timings(), **({"batch_examples": float(len(examples))} if len(examples) > 1 else {})}
    return [Scored(score=None, abstain_reason="no_claims") if entry is None
            else answer(example, entry[0], probs[entry[1]], shared)
            for example, entry in zip(examples, batch.plans)]
