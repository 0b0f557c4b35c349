"""summary.json as typed models (for the Python API); the file itself is written by ``summarize``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Rate(BaseModel):
    """k of n, its share and the Wilson 95% interval (share and interval None when n is 0)."""

    model_config = ConfigDict(extra="allow")
    k: int
    n: int
    rate: float | None = None
    ci95: list[float] | None = None


class InjectionFlags(BaseModel):
    """How often a judge flagged suspected prompt injections (``groundjudge.runs.injection.flagged_summary``)."""

    model_config = ConfigDict(extra="allow")
    flagged: Rate = Field(description="Verdicts with at least one finding, of all verdicts.")
    findings: int = Field(default=0, description="Suspect spans found, in all.")
    by_style: dict[str, int] = Field(default_factory=dict, description="Flagged verdicts per injection style.")
    by_field: dict[str, int] = Field(default_factory=dict, description="Flagged verdicts per judged text.")
    by_action: dict[str, int] = Field(default_factory=dict, description="Flagged verdicts per action taken.")
    false_alarm: Rate = Field(description="Flagged share of the answers that are not attacks.")
    on_attacks: Rate | None = Field(default=None, description="Flagged share of the attacked answers.")


class AttackFigures(BaseModel):
    """An attack battery's figures for one style or for all of them."""

    model_config = ConfigDict(extra="allow")
    n: int = Field(description="Attacked answers.")
    flip: Rate = Field(description="Of the attacked answers whose plain copy was judged ungrounded: judged grounded.")
    attacked_grounded: Rate
    detected: Rate = Field(description="A finding overlaps the attack span.")
    abstained: Rate
    any_style_flip: Rate | None = Field(default=None, description="All styles only: sources flipped by any style.")


class AttackBattery(BaseModel):
    """A judge on an attack battery (``groundjudge.runs.injection.battery_summary``)."""

    model_config = ConfigDict(extra="allow")
    n_plain: int
    n_attacked: int
    n_sources: int
    unpaired: int = 0
    plain_grounded: Rate
    plain_abstained: Rate
    false_alarm: Rate = Field(description="Plain copies whose verdict was flagged.")
    overall: AttackFigures = Field(description="Over every attack style.")
    by_style: dict[str, AttackFigures] = Field(default_factory=dict)


class ErrorTypeCounts(BaseModel):
    """Ungrounded answers of one gold error type and how many the judge missed (called grounded)."""

    model_config = ConfigDict(extra="allow")
    n: int
    missed: int
    abstained: int = 0
    miss_rate: float = Field(description="missed / n (abstentions are not misses).")


class TypeScores(BaseModel):
    """The typing's precision, recall and F1 for one error type (scikit-learn, zero when undefined)."""

    model_config = ConfigDict(extra="allow")
    precision: float
    recall: float
    f1: float
    support: int = Field(description="Answers of that gold type.")


class ErrorTyping(BaseModel):
    """How well a typing judge names the error (``groundjudge.runs.error_type_stats.typing_confusion``)."""

    model_config = ConfigDict(extra="allow")
    n: int = Field(description="Ungrounded answers whose gold type is in the judge's taxonomy.")
    types: list[str] = Field(description="The taxonomy's types: the rows of the confusion matrix.")
    predicted: list[str] = Field(description="The columns: the types, any other type given, then 'none'.")
    confusion: dict[str, dict[str, int]] = Field(description="Gold type -> the judge's type of the answer -> count.")
    per_type: dict[str, TypeScores] = Field(default_factory=dict)
    macro_f1: float = Field(description="Mean F1 over the types that are a gold or a predicted type.")
    accuracy: float = Field(description="Answers given their gold type.")
    n_none: int = Field(default=0, description="Answers given no type (judged grounded, abstained, untyped).")


class JudgeSummary(BaseModel):
    """One judge's figures: quality (with 95% CIs), abstentions, cost, tokens, latency, stability, suspected
    prompt injections (with an attack battery's figures on such data), and per gold error type figures (recall,
    and for typing judges the confusion matrix of the typing)."""

    model_config = ConfigDict(extra="allow")
    n: int = Field(description="Labelled answers scored.")
    n_judged: int
    n_abstained: int
    n_decided: int | None = Field(default=None, description="Answers judged grounded or ungrounded (no abstention).")
    grounded_share: float | None = Field(default=None, description=(
        "Share of the judge's decisions that say grounded (no labels needed)."))
    abstain_share: float | None = Field(default=None, description="Share of the answers judged that it abstained on.")
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
    latency_chunk: int | None = Field(default=None, description=(
        "A local judge given answers in chunks: the largest chunk; above 1, latency_s is each answer's share of its "
        "chunk's compute (the call's time / the answers in it)."))
    stability: dict[str, Any] | None = Field(default=None, description="Flip rate and Fleiss' kappa (repeats=N).")
    suspected_injection: InjectionFlags | None = Field(
        default=None, description="Verdicts flagged for suspected prompt injection (when any is, or on a battery).")
    attacks: AttackBattery | None = Field(default=None, description="Figures on an attack battery's data.")
    per_error_type: dict[str, ErrorTypeCounts] | None = Field(
        default=None, description="Per gold error type: ungrounded answers missed.")
    error_type_recall: dict[str, Rate] | None = Field(
        default=None, description="Per gold error type: answers judged ungrounded (abstentions not caught), with "
                                  "the Wilson 95% interval.")
    most_missed_type: str | None = Field(
        default=None, description="The gold type with the lowest recall among those with 5 answers or more.")
    predicted_error_types: dict[str, int] | None = Field(default=None, description="Types given to claims.")
    error_type_accuracy: float | None = Field(default=None, description="Typed answers whose types include a gold one.")
    error_typing: ErrorTyping | None = Field(
        default=None, description="Typing judges: confusion matrix of the typing, per-type P/R/F1, macro-F1.")


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


class PairAgreement(BaseModel):
    """Two judges side by side: McNemar on labelled answers, and (no labels needed) how often they agree."""

    model_config = ConfigDict(extra="allow")
    a: str
    b: str
    n: int = Field(description="Labelled answers both judged (McNemar's n).")
    mcnemar_p: float | None = None
    n_both: int = Field(default=0, description="Answers both judges decided (grounded or ungrounded), labelled or not.")
    agreement: float | None = Field(default=None, description="Share of those with the same verdict.")
    kappa: float | None = Field(default=None, description="Cohen's kappa on those (None: undefined).")
    kappa_ci95: list[float] | None = Field(default=None, description="Percentile-bootstrap 95% interval of kappa.")
    disagreements: int = Field(default=0, description="Answers on which the two verdicts differ.")
    a_grounded_b_ungrounded: int = 0
    a_ungrounded_b_grounded: int = 0


class DawidSkeneJudge(BaseModel):
    """One judge's figures as the Dawid–Skene model fits them from the verdicts alone (no labels)."""

    n_decided: int = Field(description="Answers it decided (abstentions are left out of the model).")
    accuracy: float = Field(description="Model-based: P(its verdict is the true label), on its decisions.")
    balanced_accuracy: float = Field(description="Model-based: mean of the two per-class recalls below.")
    recall_grounded: float = Field(description="Model-based: P(says grounded | grounded).")
    recall_ungrounded: float = Field(description="Model-based: P(says ungrounded | ungrounded).")


class DawidSkeneHint(BaseModel):
    """A model-based hint, without labels, of each judge's accuracy (``--dawid-skene``; three judges or more)."""

    model_based: bool = Field(default=True, description="Always true: these are a model's estimates, not measured.")
    method: str
    caveat: str
    n_answers: int = Field(description="Answers at least one judge decided.")
    grounded_share: float = Field(description="Model-based share of answers that are grounded.")
    judges: dict[str, DawidSkeneJudge]
    shared: list[list[str]] = Field(default_factory=list, description=(
        "Groups of judges of the same model (or, without one, the same kind): their errors are likely correlated."))


class RunSummary(BaseModel):
    """A run's summary: the data, every judge's figures, McNemar between judges, prompt variants."""

    model_config = ConfigDict(extra="allow")
    run_id: str
    dataset: dict[str, Any]
    judges: dict[str, JudgeSummary]
    pairwise: list[PairAgreement] = Field(default_factory=list, description=(
        "Every two judges: McNemar on the labelled answers both judged, and agreement on every answer both decided."))
    variants: list[VariantComparison] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    dawid_skene: DawidSkeneHint | None = Field(default=None, description=(
        "Model-based accuracy of each judge from the verdicts alone (with --dawid-skene and 3 judges or more)."))
