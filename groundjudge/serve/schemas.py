"""The service's request and response models: what the OpenAPI schema says and what every route checks.

Requests forbid unknown fields, so a misspelt field is a 422 that names it instead of being ignored. Responses
carry the verdict as data only (JSON): an answer is untrusted text and is never rendered as HTML.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator

from groundjudge.types import ClaimLabel, Evidence, InjectionFinding, VerdictLabel

MAX_BATCH_ITEMS = 64
"""Most items one ``/v1/judge/batch`` request may carry."""


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _documents(value: str | list[str]) -> list[str]:
    """The documents of a ``context`` (one text or several); at least one must hold text."""
    docs = [value] if isinstance(value, str) else list(value)
    if not any(doc.strip() for doc in docs):
        raise ValueError("context is empty: give at least one document with text")
    return docs


class JudgeRequest(_Request):
    """One answer to judge against its source documents."""

    answer: str = Field(description="The answer whose grounding is judged (untrusted text).")
    context: str | Annotated[list[str], Field(min_length=1, max_length=256)] = Field(
        description="The source documents: one text or a list of them.")
    question: str | None = Field(default=None, description="The question the answer responds to, if any.")
    judge: str | None = Field(default=None, description=(
        "Which loaded judge decides: its spec as given to --judge, or its kind when only one judge has it "
        "(default: the first)."))

    @field_validator("context")
    @classmethod
    def _context_has_text(cls, value: str | list[str]) -> str | list[str]:
        _documents(value)
        return value

    def documents(self) -> tuple[str, ...]:
        """The context as a tuple of documents."""
        return tuple(_documents(self.context))


class ModelParameters(_Request):
    """HHEM's ``model_parameters``: accepted for drop-in use; the served judge decides whatever it names."""

    model_name: str | None = Field(default=None, description="HHEM's model name (ignored: the judge decides).")


class FactualConsistencyRequest(_Request):
    """Vectara HHEM's ``evaluate_factual_consistency`` request."""

    generated_text: str = Field(description="The text whose consistency with the sources is scored.")
    source_texts: Annotated[list[str], Field(min_length=1, max_length=256)] = Field(
        description="The source documents.")
    model_parameters: ModelParameters | None = None
    judge: str | None = Field(default=None, description="groundjudge extension: which loaded judge scores.")

    @field_validator("source_texts")
    @classmethod
    def _sources_have_text(cls, value: list[str]) -> list[str]:
        _documents(value)
        return value


class FactualConsistencyResponse(BaseModel):
    """Vectara HHEM's response: the probability that the text is consistent with the sources."""

    score: float = Field(ge=0.0, le=1.0, description="P(consistent); an abstaining judge scores 0.")
    p_consistent: float = Field(ge=0.0, le=1.0)
    p_inconsistent: float = Field(ge=0.0, le=1.0)


class ClaimOut(BaseModel):
    """One claim of the answer and its verdict."""

    text: str
    start: int | None = Field(default=None, description="Start offset in the answer, when the claim is a span.")
    end: int | None = Field(default=None, description="End offset in the answer, when the claim is a span.")
    label: ClaimLabel
    score: float | None = None
    evidence: Evidence | None = Field(default=None, description="The context span that decided the claim.")
    reason: str | None = None
    error_type: str | None = None


class SpanOut(BaseModel):
    """A span of the answer that the context does not support (a claim that is not supported, located)."""

    start: int = Field(ge=0)
    end: int = Field(ge=0)
    text: str
    label: ClaimLabel


class VerdictResponse(BaseModel):
    """A judge's verdict on one answer."""

    judge: str = Field(description="The judge that decided (its spec).")
    label: VerdictLabel
    score: float | None = Field(default=None, description="Grounding score in [0, 1], higher is more grounded.")
    threshold: float | None = None
    claims: list[ClaimOut] = Field(default_factory=list)
    spans: list[SpanOut] = Field(default_factory=list, description="Unsupported spans of the answer.")
    path: str = Field(description="What produced the verdict, e.g. 'local:quip(n=21)' or 'llm:gpt-4o-mini'.")
    suspected_injection: list[InjectionFinding] = Field(default_factory=list)
    abstain_reason: str | None = None
    latency_s: float = Field(ge=0.0, description="Seconds from the request's admission to its verdict.")
    cost_usd: float = Field(ge=0.0, description="What the judge's LLM calls cost (0 for local judges).")


class BatchResponse(BaseModel):
    """The verdicts of a batch, in the order of its items."""

    results: list[VerdictResponse]


class ErrorResponse(BaseModel):
    """Any error: a one-line message and, for a bad request, where it is (``loc``: ``["body", "answer"]``)."""

    error: str
    detail: list[dict] = Field(default_factory=list)


class HealthResponse(BaseModel):
    """The service is up and its judges are loaded."""

    status: str = "ok"
    judges: list[str]
    in_flight: int = Field(ge=0)
    queue_limit: int = Field(ge=0)
