"""The labelling page's typed API: what a POST of a label carries, the items, judges, progress and page settings
it answers with, and the shapes of its refusals (the OpenAPI schema schemathesis checks is built from these)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from groundjudge.labels.store import HumanLabel, LabelRecord, LabelSpan
from groundjudge.types import Verdict

NAME_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_ .@+-]{0,63}$"   # ASCII: JSON Schema's \w is ASCII, Python's is not
"""What a labeller's name may be."""


class LabelIn(BaseModel):
    """A label as the page posts it."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=1000)
    label: HumanLabel
    error_types: list[str] = Field(default_factory=list, max_length=64)
    spans: list[LabelSpan] = Field(default_factory=list, max_length=200,
                                   description="Unsupported spans: offsets (code points) into the answer.")
    note: str = Field(default="", max_length=10_000)
    labeller: str | None = Field(default=None, pattern=NAME_PATTERN,
                                 description="Who labels (default: ?labeller=, else the server's --labeller).")


class ErrorItem(BaseModel):
    """One reason a request was refused: where (``["body", "id"]``), what, and its kind."""

    loc: list[str | int]
    msg: str
    type: str


class Refused(BaseModel):
    """A refused request (422): every reason, with where it is (the same shape as FastAPI's own)."""

    detail: list[ErrorItem]


class Problem(BaseModel):
    """Another error (401, 404, 415): one line saying what is wrong."""

    detail: str


class LabelRefused(ValueError):
    """A label the book does not take: ``loc`` is where in the body (``["spans", 0, "text"]``)."""

    def __init__(self, loc: list[str | int], message: str):
        super().__init__(f"{'.'.join(map(str, loc))}: {message}")
        self.loc, self.message = loc, message

    def refused(self) -> dict:
        """The 422 body."""
        return Refused(detail=[ErrorItem(loc=["body", *self.loc], msg=self.message, type="value_error")]
                       ).model_dump()


class ClaimView(BaseModel):
    """One claim a judge checked, with its label and evidence."""

    text: str
    label: str
    start: int | None = None
    end: int | None = None
    evidence: str | None = None
    error_type: str | None = None


class JudgeView(BaseModel):
    """One judge's verdict on an item."""

    judge: str
    label: str
    score: float | None = None
    threshold: float | None = None
    abstain_reason: str | None = None
    claims: list[ClaimView] = Field(default_factory=list)


class ItemView(BaseModel):
    """One queue item as a labeller sees it."""

    id: str
    position: int = Field(description="1-based place in the whole queue.")
    shared: bool = Field(description="In the overlap: every labeller labels it.")
    question: str | None
    documents: list[str]
    answer: str
    mine: LabelRecord | None = Field(description="This labeller's last label of it.")
    stratum: str | None = Field(default=None, description="Hidden (null) like the judges until labelled.")
    judges: list[JudgeView] | None = Field(default=None, description="Null while hidden.")


class ItemsOut(BaseModel):
    """The queue of one labeller, with each item's text."""

    labeller: str
    items: list[ItemView]


class Progress(BaseModel):
    """How far one labeller (and everybody) got."""

    labeller: str
    labelled: int = Field(description="Items of this labeller's queue they labelled.")
    queue_size: int = Field(description="Items in this labeller's queue now.")
    order: list[str] = Field(description="This labeller's queue, in order.")
    done: list[str] = Field(description="The ids of ``order`` this labeller labelled.")
    next: str | None = Field(description="The first item of ``order`` they have not labelled.")
    labelled_by_anyone: int
    queue_total: int
    batch: int | None = Field(default=None, description=(
        "An adaptive queue: the batch being labelled (1 first); null for a fixed queue or when all is labelled."))
    planned_from: int | None = Field(default=None, description=(
        "An adaptive queue: how many grounded / ungrounded labels the plan of the current batch knew."))


class TaxonomyEntry(BaseModel):
    """An error type the page offers (key: the digit that toggles it)."""

    key: str
    name: str
    definition: str


class PageConfig(BaseModel):
    """What the page needs before the items."""

    run: str
    labeller: str
    show_judges: bool
    overlap: int
    judges: list[str]
    taxonomy: list[TaxonomyEntry]


class LabelOut(BaseModel):
    """The label as written, the item as it now looks, and the labeller's progress."""

    label: LabelRecord
    item: ItemView
    progress: Progress
    replanned: bool = Field(default=False, description=(
        "This label completed a batch of an adaptive queue and the rest of the queue was re-planned."))


def judge_view(judge: str, verdict: Verdict) -> JudgeView:
    """What the page shows of one judge's verdict once the item is labelled (its claims with their evidence)."""
    claims = [ClaimView(text=c.claim.text, label=c.label, start=c.claim.start, end=c.claim.end,
                        evidence=c.evidence.text if c.evidence else None, error_type=c.error_type)
              for c in verdict.claims]
    return JudgeView(judge=judge, label=verdict.label, score=verdict.score, threshold=verdict.threshold,
                     abstain_reason=verdict.abstain_reason, claims=claims)
