"""Cascade judge: a cheap local judge decides where it is confident; the rest go to an LLM judge, and on.

Examples whose local score falls inside ``band`` (``lo-hi``, inclusive), or on
which the local judge abstains, are escalated to the LLM judge. More stages
follow with ``then``: an answer whose LLM score (a token probability with
``score=logprobs``) lies inside ``then_bands[0]`` goes on to ``then[0]`` (a larger
model, another chain), and so on; the last stage always decides. The summary
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
    then: tuple[InnerJudge, ...] = ()
    """Further stages after the LLM judge (e.g. a larger model): each is reached when the stage before it
    abstains or scores inside its band of ``then_bands``."""
    then_bands: tuple[str, ...] = ()
    """One band per ``then`` stage: the score band of the PREVIOUS stage that escalates to it."""
    service: Any = field(default=None, compare=False, repr=False, metadata={"runtime": True})

    def __post_init__(self) -> None:
        if len(self.then_bands) != len(self.then):
            raise SpecError(f"cascade: {len(self.then)} 'then' stage(s) need as many then_bands, "
                            f"got {len(self.then_bands)}")
        object.__setattr__(self, "_bands", tuple(parse_band(b) for b in (self.band, *self.then_bands)))
        object.__setattr__(self, "_stages", tuple(build_inner(inner, self.service)
                                                  for inner in (self.local, self.llm, *self.then)))

    async def judge(self, example: Example) -> JudgeResult:
        """The first stage whose verdict is confident (a score outside its band) decides; the last always does."""
        verdicts, calls = [], ()
        for index, stage in enumerate(self._stages):
            result = await stage.judge(example)
            verdicts.append(result.verdict)
            calls = calls + result.calls
            if index == len(self._stages) - 1 or confident(result, self._bands[index]):
                return result.model_copy(update={"stages": tuple(verdicts), "calls": calls})
        raise AssertionError("unreachable: the last stage always decides")


def confident(result: JudgeResult, band: tuple[float, float]) -> bool:
    """A verdict that stops the cascade: not an abstention, and a score outside the band."""
    lo, hi = band
    score = result.verdict.score
    return result.verdict.label != "abstain" and score is not None and not lo <= score <= hi
