"""``tune.json``: what a tune tried, what it kept at each rung, and the start against the winner on the test part."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class CandidateRow(BaseModel):
    """One candidate: its levers and its last select-part score."""

    id: str
    name: str
    levers: dict[str, Any] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict, description="The judge's settings as given.")
    select_examples: int = Field(default=0, description="Select answers of the last rung it was scored on.")
    select_balanced_accuracy: float | None = None
    select_roc_auc: float | None = None
    threshold: float | None = Field(default=None, description="Its calibrated threshold on that rung.")
    rung: int = Field(default=-1, description="The last rung it reached (-1: never scored).")
    calls: int = Field(default=0, description="LLM calls its judge config made during the tune (shared calls count "
                                             "once, for the first config that made them).")


class RungRow(BaseModel):
    """One rung of successive halving."""

    index: int
    examples: int
    candidates: list[str]
    kept: list[str]
    calls: int = Field(description="LLM calls made during the rung.")
    complete: bool = Field(description="False when the budget cut it short (its ranking is not used).")


class Delta(BaseModel):
    """Winner minus start on the test part, with a paired bootstrap 95% CI."""

    start: float | None = None
    winner: float | None = None
    delta: float | None = None
    ci95: list[float] | None = None


class SideCost(BaseModel):
    """What one judge cost per answer on the test part (every call, cached or not, at its original price)."""

    input_tokens: float
    output_tokens: float
    cost_usd: float


class HeldOutComparison(BaseModel):
    """Start against winner on the held-out test part, each judged once."""

    n: int
    balanced_accuracy: Delta
    roc_auc: Delta
    mcnemar_p: float | None = None
    start_cost: SideCost
    winner_cost: SideCost


class TuneResult(BaseModel):
    """The whole tune: plan, candidates, rungs, winner, test comparison and budget spent."""

    tune_file: str
    judge: str
    seed: int
    parts: dict[str, int] = Field(description="Answers per part (pool, fit, select, test).")
    groups: dict[str, int] = Field(description="Groups per part.")
    max_calls: int
    max_cost: float | None = None
    calls: int = Field(description="LLM calls the tune made (this session and earlier ones).")
    cost_usd: float
    stopped: str = Field(description="Why the search ended: one candidate left, select part used up, or budget.")
    start: str
    winner: str
    winner_config: str = Field(description="The experiment file that runs the winner as it is.")
    winner_threshold: float | None = None
    candidates: list[CandidateRow]
    rungs: list[RungRow]
    test: HeldOutComparison | None = None
    notes: list[str] = Field(default_factory=list)
