"""How an LLM judge turns a reply into a score: the verbalised verdict, or token log-probabilities.

``score = "verbalised"`` reads the model's stated verdict (and probability, for the direct prompt);
``"logprobs"`` asks a yes/no question and scores P(yes) / (P(yes) + P(no)) of the first answer token, and
abstains (``no_logprobs``) where the provider returns none; ``"auto"`` asks for log-probabilities where litellm
can pass them to the provider and takes the one-word verdict otherwise. Every verdict says which it got
(``score_source``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

from groundjudge.llm.token_scores import supports_logprobs

if TYPE_CHECKING:
    from groundjudge.llm.cache import CallCache

ScoreMode = Literal["verbalised", "logprobs", "auto"]

NO_LOGPROBS = "no_logprobs"
"""Abstain reason of ``score=logprobs`` when the provider sent no log-probabilities."""

AGGREGATIONS = ("min", "mean", "product")
Aggregation = Literal["min", "mean", "product"]
"""How claim probabilities make an answer's score: the weakest claim, their (weighted) mean, or their product."""


def asks_logprobs(mode: ScoreMode, model: str, cache: CallCache | None = None) -> bool:
    """Whether a call in this mode requests log-probabilities: never for a provider litellm cannot pass them to
    (it would refuse the call; ``logprobs`` mode then abstains with ``no_logprobs``). ``cache``: the run's call
    cache, which keeps litellm's answer (see :func:`~groundjudge.llm.token_scores.supports_logprobs`)."""
    return mode != "verbalised" and supports_logprobs(model, cache)


def combined_source(sources: Iterable[str | None]) -> str | None:
    """One source for several scores: the common one, or ``mixed``."""
    found = {s for s in sources if s}
    if not found:
        return None
    return found.pop() if len(found) == 1 else "mixed"


def aggregate(scores: list[float], weights: list[float], how: Aggregation) -> float:
    """An answer's score from its claims' probabilities."""
    if not scores:
        raise ValueError("no claim scores to aggregate")
    if how == "min":
        return min(scores)
    if how == "product":
        product = 1.0
        for value in scores:
            product *= value
        return product
    return sum(w * s for w, s in zip(weights, scores)) / sum(weights)
