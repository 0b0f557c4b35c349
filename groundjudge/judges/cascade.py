"""Cascade judge: a cheap local judge decides where it is confident; the rest go to an LLM judge.

Examples whose local score falls inside ``band`` (``lo-hi``, inclusive), or on
which the local judge abstains, are escalated to the LLM judge. The summary
reports the escalation rate, the dollars saved against sending everything to
the LLM, and the change in quality against the local judge alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from groundjudge.judges import SpecError, register
from groundjudge.judges.composite import InnerJudge, build_inner
from groundjudge.types import Example, JudgeResult


def parse_band(text: str) -> tuple[float, float]:
    """``"0.3-0.7"`` -> (0.3, 0.7)."""
    try:
        lo, hi = (float(x) for x in text.split("-"))
    except ValueError as err:
        raise SpecError(f"cascade band {text!r} is not lo-hi (e.g. 0.3-0.7)") from err
    if not 0 <= lo <= hi <= 1:
        raise SpecError(f"cascade band {text!r} must satisfy 0 <= lo <= hi <= 1")
    return lo, hi


@register
@dataclass(frozen=True)
class CascadeJudge:
    """Local judge first; only scores inside the band (or abstentions) are escalated to the LLM judge."""

    name: ClassVar[str] = "cascade"
    max_concurrency: ClassVar[int | None] = None
    local: InnerJudge = "quip"
    llm: InnerJudge = "claims"
    band: str = "0.3-0.7"
    service: Any = field(default=None, compare=False, repr=False, metadata={"runtime": True})

    def __post_init__(self) -> None:
        object.__setattr__(self, "_band", parse_band(self.band))
        object.__setattr__(self, "_local", build_inner(self.local, self.service))
        object.__setattr__(self, "_llm", build_inner(self.llm, self.service))

    async def judge(self, example: Example) -> JudgeResult:
        """Local verdict when confident, else the LLM's."""
        local = await self._local.judge(example)
        lo, hi = self._band
        score = local.verdict.score
        if local.verdict.label != "abstain" and score is not None and not lo <= score <= hi:
            return local.model_copy(update={"stages": (local.verdict,)})
        escalated = await self._llm.judge(example)
        return escalated.model_copy(update={"stages": (local.verdict, escalated.verdict),
                                            "calls": local.calls + escalated.calls})
