"""The typed records of ``groundjudge perturb``: the error types it makes, one edit, a check's verdict, the record
kept in ``meta["perturbation"]`` of every written row, and a rejected candidate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from groundjudge.types import Evidence, VerdictLabel

ERROR_TYPES: dict[str, str] = {
    "factual": "Factual Inaccuracies",
    "contextual": "Contextual Misinterpretations",
    "procedural": "Procedural Errors",
    "reasoning": "Reasoning Errors",
    "misattribution": "Misattributions",
    "terminological": "Terminological Errors",
}
"""Slug -> the name of the type in the legal taxonomy (``judges/taxonomies/legal_error_types.json``), in the
taxonomy's order."""

SLUGS: tuple[str, ...] = tuple(ERROR_TYPES)
"""Every type slug, in the taxonomy's order."""

RowKind = Literal["variant", "original", "paraphrase", "restatement"]
"""What a written row is: an ungrounded variant, or a grounded control (the original, a paraphrase of it, or a
restatement in other words that the source supports, such as ContractNLI's annotated entailed hypothesis)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Edit(_Frozen):
    """One contiguous edit: ``original[before_start:before_end] == before`` became
    ``variant[after_start:after_end] == after`` (an insertion has an empty ``before``, a deletion an empty
    ``after``)."""

    before: str
    after: str
    before_start: int = Field(ge=0)
    before_end: int = Field(ge=0)
    after_start: int = Field(ge=0)
    after_end: int = Field(ge=0)


class CheckVerdict(_Frozen):
    """What the check said of a candidate: the judge (``lexical`` or a judge spec), its label and score."""

    judge: str
    label: VerdictLabel
    score: float | None = None
    reason: str | None = Field(default=None, description="Why (the lexical check: the window it looked for).")


class PerturbationRecord(_Frozen):
    """``meta["perturbation"]`` of a written row: where it came from and, for a variant, the one edit it carries."""

    kind: RowKind
    source_id: str = Field(description="Id of the grounded example it was made from.")
    error_type: str | None = Field(default=None, description="Taxonomy name of the error (variants only).")
    type_slug: str | None = Field(default=None, description="Short name of the type, as in the row id.")
    generator: str | None = Field(default=None, description="'rule' or 'llm:<model>' (None for the original).")
    rule: str | None = Field(default=None, description="The rule's name, e.g. 'factual.number' (or 'llm').")
    edit: Edit | None = None
    context_sentence: Evidence | None = Field(default=None, description=(
        "The context sentence that supported the original span (the one the variant contradicts or no longer "
        "follows), found by lexical overlap."))
    check: CheckVerdict | None = Field(default=None, description="The verification the row passed, if any.")
    note: str | None = Field(default=None, description="The LLM generator's stated reason for its edit.")


class Rejection(_Frozen):
    """A candidate that was not kept, and why (``reason`` is a short code, ``detail`` says more)."""

    source_id: str
    kind: RowKind
    type_slug: str | None
    generator: str
    rule: str
    reason: str
    detail: str | None = None
    text: str | None = Field(default=None, description="The candidate text, when there was one.")


@dataclass(frozen=True)
class Candidate:
    """A proposed rewrite of an answer before it is checked: the new text and the edit that made it."""

    text: str
    edit: Edit
    rule: str
    generator: str = "rule"
    note: str | None = None

