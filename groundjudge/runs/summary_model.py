"""summary.json as typed models (for the Python API); the file itself is written by ``summarize``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class JudgeSummary(BaseModel):
    """One judge's figures: quality (with 95% CIs), abstentions, cost, tokens, latency, stability."""

    model_config = ConfigDict(extra="allow")
    n: int = Field(description="Labelled answers scored.")
    n_judged: int
    n_abstained: int
    accuracy: float | None = None
    balanced_accuracy: float | None = None
    macro_precision: float | None = None
    macro_recall: float | None = None
    macro_f1: float | None = None
    ci95: dict[str, list[float]] = Field(default_factory=dict)
    threshold: float | None = None
    cost_usd: float = 0.0
    tokens: dict[str, int] = Field(default_factory=dict)
    llm_calls: int = 0
    llm_calls_cached: int = 0
    latency_s: dict[str, float] = Field(default_factory=dict)
    stability: dict[str, Any] | None = Field(default=None, description="Flip rate and Fleiss' kappa (repeats=N).")


class VariantComparison(BaseModel):
    """Two judges that differ only in prompts or model: B minus A, paired."""

    model_config = ConfigDict(extra="allow")
    a: str
    b: str
    differs: list[str]
    n: int
    metrics: dict[str, dict[str, Any]]
    mcnemar_p: float
    disagree: list[str]
    per_answer: dict[str, dict[str, float]]


class RunSummary(BaseModel):
    """A run's summary: the data, every judge's figures, McNemar between judges, prompt variants."""

    model_config = ConfigDict(extra="allow")
    run_id: str
    dataset: dict[str, Any]
    judges: dict[str, JudgeSummary]
    pairwise: list[dict[str, Any]] = Field(default_factory=list)
    variants: list[VariantComparison] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
