"""Fallback judge: the primary judges; when its provider is unavailable, the secondary does.

"Unavailable" is an abstention whose reason is one of ``FALLBACK_REASONS``: no
API key, provider errors, retries exhausted, budget spent, offline. Parse
failures and other abstentions are the primary's verdict and stay. Every
verdict's ``path`` says which judge produced it (``fallback:...`` when the
secondary did), and the primary's failed calls are kept in the record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from groundjudge.judges import register
from groundjudge.judges.composite import InnerJudge, build_inner
from groundjudge.llm import FALLBACK_REASONS
from groundjudge.llm.errors import reason_kind
from groundjudge.types import Example, JudgeResult


def unavailable(result: JudgeResult) -> bool:
    """Whether a result is an abstention because the LLM path could not be used."""
    return result.verdict.label == "abstain" and reason_kind(result.verdict.abstain_reason) in FALLBACK_REASONS


@register
@dataclass(frozen=True)
class FallbackJudge:
    """Primary judge, and a secondary (e.g. local) judge when the primary's provider is unavailable."""

    name: ClassVar[str] = "fallback"
    max_concurrency: ClassVar[int | None] = None
    primary: InnerJudge = "claims"
    secondary: InnerJudge = "quip"
    service: Any = field(default=None, compare=False, repr=False, metadata={"runtime": True})

    def __post_init__(self) -> None:
        object.__setattr__(self, "_primary", build_inner(self.primary, self.service))
        object.__setattr__(self, "_secondary", build_inner(self.secondary, self.service))

    async def judge(self, example: Example) -> JudgeResult:
        """Try the primary; fall back to the secondary when it is unavailable."""
        first = await self._primary.judge(example)
        if not unavailable(first):
            return first.model_copy(update={"stages": (first.verdict,)})
        second = await self._secondary.judge(example)
        verdict = second.verdict.model_copy(update={"path": f"fallback:{second.verdict.path}"})
        return JudgeResult(verdict=verdict, calls=first.calls + second.calls, timings=second.timings,
                           stages=(first.verdict, second.verdict))
