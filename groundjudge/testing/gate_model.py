"""The typed data of the pytest gate: a test's settings (from its marker) and one verdict as the gate decided it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from groundjudge.types import Example, JudgeResult, JudgeSpec


class GateSettings(BaseModel):
    """How a test judges: the ``@pytest.mark.groundjudge(...)`` keywords (unset ones fall back to the session's)."""

    model_config = ConfigDict(extra="forbid")
    judge: Any = Field(default=None, description="A judge spec, JudgeConfig or {'kind': ...} table.")
    repeats: int | None = Field(default=None, ge=1, description=(
        "Judge each answer this many times (default: the judge's own repeats setting, else 1)."))
    pass_rate: float = Field(default=0.8, ge=0.0, le=1.0, description=(
        "The share of repeats that must pass for the answer to pass."))
    min_score: float | None = Field(default=None, description=(
        "A repeat passes when its score reaches this (instead of when its label is grounded)."))

    def merged(self, **given: Any) -> GateSettings:
        """These settings with the values given (None: not given) put over them."""
        return self.model_copy(update={k: v for k, v in given.items() if v is not None})


class GateVerdict(BaseModel):
    """One answer as the gate judged it: the judge's verdict (majority of the repeats), and whether it passed."""

    test: str = Field(description="The test's node id ([2], [3]... for its later verdicts).")
    judge: str = Field(description="The judge's name (its spec).")
    label: str = Field(description="grounded, ungrounded or abstain (the majority of the repeats).")
    score: float | None = Field(default=None, description="The score (mean over the repeats).")
    threshold: float | None = Field(default=None, description="min_score when given, else the judge's threshold.")
    min_score: float | None = Field(default=None, description="The score a repeat had to reach, when given.")
    repeats: int = Field(default=1, description="How many times the answer was judged.")
    passing: int = Field(default=0, description="How many repeats passed.")
    pass_rate: float = Field(default=1.0, description="The share of repeats that had to pass.")
    passed: bool
    asserted: bool = Field(default=True, description="False for verdicts only looked at (fixture .judge()).")
    spec: JudgeSpec = Field(description="The judge as a records header keeps it.")
    example: Example
    result: JudgeResult

    @property
    def share(self) -> float:
        """The share of repeats that passed."""
        return self.passing / self.repeats if self.repeats else 0.0
