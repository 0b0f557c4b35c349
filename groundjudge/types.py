"""The typed records that cross every boundary of groundjudge.

Examples come in, verdicts go out, and every run writes a header and one
result per (judge, example) pair. All of them are pydantic models so that a
record read back from ``records.jsonl`` is validated exactly like one written.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

GoldLabel = Literal["grounded", "ungrounded"]
"""Gold label of an example."""

VerdictLabel = Literal["grounded", "ungrounded", "abstain"]
"""What a judge may answer: abstain is never counted as grounded."""

ClaimLabel = Literal["supported", "contradicted", "unverifiable"]
"""Label of one claim checked against the context."""

ScoreSource = Literal["logprobs", "verbalised", "mixed"]
"""Where an LLM judge's score came from: token log-probabilities, the model's stated verdict or probability, or
both (claims scored some one way, some the other)."""

Split = Literal["train", "dev", "test"]
"""Data split an example belongs to."""

InjectionStyle = Literal["reviewer_note", "system_line", "closing_tag", "verdict_object", "rubric_claim",
                         "foreign_instruction", "encoded_instruction", "addresses_judge"]
"""The forms of text that addresses the judge instead of the reader: a reviewer's or grader's note, a fake system /
tool / role line, a tag that closes the data block, a ready-made verdict object, a claim about the grading rubric,
an instruction in another language, an encoded (base64, hex, rot13, ...) instruction, or any other sentence that
speaks to the evaluator."""

InjectionAction = Literal["flag", "strip", "abstain", "route"]
"""What an LLM judge does with an answer suspected of injection: judge it and flag the verdict, judge the answer with
the suspect spans cut out (and flag), abstain with the reason, or hand it to a local judge."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Example(_Frozen):
    """One answer to judge against its source documents."""

    id: str = Field(min_length=1, description="Unique id within the data set.")
    question: str | None = Field(default=None, description="The question the answer responds to, if any.")
    context: tuple[str, ...] = Field(min_length=1, description="The source documents (one or more).")
    answer: str = Field(description="The answer whose grounding is judged.")
    label: GoldLabel | None = Field(default=None, description="Gold label, or None when unlabelled.")
    error_types: tuple[str, ...] = Field(default=(), description="Gold error types of an ungrounded answer.")
    split: Split | None = Field(default=None, description="train / dev / test, or None when not assigned.")
    meta: dict[str, Any] = Field(default_factory=dict, description="Source-specific fields (domain, group, ...).")

    @field_validator("context", mode="before")
    @classmethod
    def _context_as_tuple(cls, value: Any) -> Any:
        if isinstance(value, str):
            return (value,)
        return value

    @field_validator("context")
    @classmethod
    def _context_not_blank(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not any(doc.strip() for doc in value):
            raise ValueError("context is empty")
        return value

    @property
    def context_text(self) -> str:
        """All documents joined by blank lines."""
        return "\n\n".join(self.context)

    @property
    def group(self) -> str:
        """The source group (document or question) used to keep splits apart."""
        return str(self.meta.get("group", self.id))


class Claim(_Frozen):
    """One verifiable unit of an answer, with the span of the answer it came from."""

    text: str = Field(description="The claim as checked.")
    start: int | None = Field(default=None, description="Start offset in the answer, if it is a span.")
    end: int | None = Field(default=None, description="End offset in the answer, if it is a span.")
    weight: float = Field(default=1.0, ge=0.0, description="Weight in the supported fraction.")


class Evidence(_Frozen):
    """A quoted span of the context that decided a claim."""

    text: str = Field(description="The quoted evidence.")
    doc_index: int = Field(default=0, ge=0, description="Which document of the context it is from.")
    start: int | None = Field(default=None, description="Start offset in that document, if located.")
    end: int | None = Field(default=None, description="End offset in that document, if located.")


class InjectionFinding(_Frozen):
    """A span of judged text that addresses the judge or the grading, as a detector found it."""

    field: Literal["answer", "question", "context"] = Field(description="Which judged text it is in.")
    doc_index: int | None = Field(default=None, ge=0, description="For the context: which document.")
    style: InjectionStyle
    start: int = Field(ge=0, description="Start offset in that text.")
    end: int = Field(ge=0, description="End offset in that text.")
    text: str = Field(description="The span as found (for an encoded one, its decoded text follows in ``decoded``).")
    decoded: str | None = Field(default=None, description="An encoded instruction's decoded text.")
    detector: str = Field(description="What found it, e.g. 'rules:reviewer_note' or 'embedding:0.71'.")


class ClaimVerdict(_Frozen):
    """The verdict on one claim."""

    claim: Claim
    label: ClaimLabel
    score: float | None = Field(default=None, description="Support score in [0, 1], higher is more supported.")
    evidence: Evidence | None = None
    error_type: str | None = Field(default=None, description="Error type of an unsupported claim.")
    reason: str | None = None
    views: dict[str, bool] | None = Field(
        default=None, description="Multi-view judges: each view's vote (entailed or not), by view name.")
    score_source: ScoreSource | None = Field(default=None, description="LLM judges: where the score came from.")
    chunks: tuple[Evidence, ...] = Field(default=(), description=(
        "evidence=chunks: the document windows the claim was verified against."))


class Verdict(_Frozen):
    """A judge's answer for one example."""

    example_id: str
    label: VerdictLabel
    score: float | None = Field(default=None, description="Grounding score in [0, 1], higher is more grounded.")
    threshold: float | None = Field(default=None, description="Threshold the label was decided with, if any.")
    claims: tuple[ClaimVerdict, ...] = ()
    score_source: ScoreSource | None = Field(default=None, description="LLM judges: where the score came from.")
    chunks: tuple[Evidence, ...] = Field(default=(), description=(
        "evidence=chunks: the document windows the judge read (for a claims chain, on each claim)."))
    abstain_reason: str | None = Field(default=None, description="Why the judge abstained (only when label is abstain).")
    suspected_injection: tuple[InjectionFinding, ...] = Field(default=(), description=(
        "Spans of the answer, question or documents that address the judge (see ``groundjudge.security``); the "
        "judge's on_injection setting says what it did about them."))
    injection_action: InjectionAction | None = Field(default=None, description=(
        "What the judge did with a suspected injection (None when nothing was found)."))
    path: str = Field(description="What produced this verdict, e.g. 'local:quip' or 'llm:gpt-4o-mini'.")

    @field_validator("abstain_reason")
    @classmethod
    def _reason_only_when_abstaining(cls, value: str | None, info: Any) -> str | None:
        label = info.data.get("label")
        if label == "abstain" and not value:
            raise ValueError("an abstention needs a reason")
        if label != "abstain" and value:
            raise ValueError("abstain_reason is only for abstentions")
        return value


class LLMCall(_Frozen):
    """One call to a language model, as recorded (never holds an API key)."""

    model: str
    template: str = Field(description="Template name.")
    template_hash: str = Field(description="Content hash of the template (partials included).")
    prompt_hash: str = Field(description="Hash of the rendered messages.")
    cache_key: str | None = Field(default=None, description="Key of the call in the cache (and in replays).")
    messages: tuple[dict[str, Any], ...]
    raw_output: str | None = None
    parsed: dict[str, Any] | None = None
    logprobs: dict[str, float] | None = Field(default=None, description=(
        "For a yes/no call asked for log-probabilities: the first token's top alternatives, token -> logprob."))
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = Field(default=0.0, description=(
        "Service time: from the request's send to its reply, retries included, client-side waits excluded "
        "(for a local server with fewer slots than requests in flight it still holds the server's queue)."))
    queue_s: float = Field(default=0.0, description="Client-side wait for a slot (concurrency limit, rate limits).")
    server_s: float | None = Field(
        default=None, description="The provider's own time for the reply, when it sends one (llama.cpp timings, "
                                  "OpenAI's openai-processing-ms header).")
    concurrency: int | None = Field(default=None, description="The resolved limit of calls in flight to the model.")
    server_slots: int | None = Field(
        default=None, description="Requests the server serves at once: a local server's /props total_slots, 1 when "
                                  "a local server does not say, None for hosted providers (unknown).")
    in_flight: int | None = Field(default=None, description="Calls to the model in flight when this one was sent "
                                                            "(itself included).")
    attempts: int = 1
    repeat: int = Field(default=0, description="Which repeat of the answer this call belongs to (judge repeats=N).")
    cached: bool = False
    batch: bool = Field(default=False, description=(
        "The reply came from a provider batch (OpenAI Batch API, Anthropic Message Batches), at the batch price."))
    batch_id: str | None = Field(default=None, description="The provider's id of that batch.")
    source_latency_s: float | None = Field(
        default=None, description="For a cached reply: the latency of the call that first produced it.")
    error: str | None = None


class JudgeResult(_Frozen):
    """A verdict plus everything that produced it."""

    verdict: Verdict
    calls: tuple[LLMCall, ...] = ()
    latency_s: float = Field(default=0.0, description=(
        "Service time to judge this example, in seconds: its wall time less the time its LLM calls waited for a "
        "client-side slot while none of them was served (queue_s)."))
    queue_s: float = Field(default=0.0, description="Time this example's calls waited for a client-side slot.")
    started_at: float | None = Field(default=None, description="Unix time judging this example started.")
    finished_at: float | None = Field(default=None, description="Unix time judging this example finished.")
    timings: dict[str, float] = Field(default_factory=dict, description="Named local timings, in seconds.")
    batch_size: int | None = Field(default=None, ge=1, description=(
        "A local judge given answers in chunks (``--local-chunk``): the answers scored together with this one in "
        "one call; ``latency_s`` is then this answer's share of that call (its time / batch_size) and "
        "started_at / finished_at are the call's. None: judged on its own."))
    stages: tuple[Verdict, ...] = Field(default=(), description="Verdicts of the inner judges of a fallback or cascade.")
    repeats: tuple[Verdict, ...] = Field(default=(), description=(
        "With repeats=N: the N verdicts of the answer, in order; ``verdict`` is their majority."))


class DatasetInfo(_Frozen):
    """Which data a run used: the files, and the examples it evaluates (their count and hash)."""

    files: tuple[str, ...]
    formats: tuple[str, ...]
    n: int = Field(description="Examples evaluated.")
    hash: str = Field(description="Content hash of the evaluated examples, in order.")
    n_loaded: int = Field(default=0, description="Examples loaded from the files (dev part included).")
    skipped_rows: int = Field(default=0, description="Invalid rows skipped with --skip-invalid.")


class StackFit(_Frozen):
    """A stacked judge's logistic regression over its inner judges' scores, as fitted on dev data."""

    features: tuple[str, ...] = Field(description="The inner judges' specs, in the order of ``weights``.")
    weights: tuple[float, ...] = Field(description="One coefficient per inner judge's score.")
    intercept: float
    imputed: tuple[float, ...] = Field(description=(
        "The score used for an inner judge that abstains: its mean score on the fit data (0.5 if it never scored)."))
    fitted_on: tuple[str, ...] = Field(description="The ids of the dev examples it was fitted on.")
    model: str = Field(default="sklearn.linear_model.LogisticRegression", description="What fitted it, and how.")
    C: float = Field(default=1.0, description="Inverse L2 regularisation strength of the fit.")
    dev_roc_auc: float | None = Field(default=None, description="ROC AUC of the stacked score on the fit data.")


class Calibration(_Frozen):
    """A threshold fitted on dev data and frozen for the evaluation."""

    threshold: float
    source: str = Field(description="Where it was fitted: a file, 'split:dev', or 'default'.")
    n: int = Field(default=0, description="How many dev examples it was fitted on.")
    dev_balanced_accuracy: float | None = None
    fit: StackFit | None = Field(default=None, description=(
        "A stacked judge's fitted model (fitted with the threshold, on the same dev examples)."))


class PromptTemplate(_Frozen):
    """A prompt as one judge rendered it: its hash and the full text of every file (partials included)."""

    hash: str = Field(description="Content hash of the prompt's files (as in LLMCall.template_hash).")
    files: dict[str, str] = Field(description="File name -> full template text.")
    origin: dict[str, str] = Field(default_factory=dict, description="File name -> 'built-in' or the folder "
                                                                      "it was read from (portable).")


class DemonstrationRef(_Frozen):
    """A labelled example an LLM judge shows in its prompt (``demos=``), as the records header keeps it."""

    id: str = Field(description="The demonstration's id in its pool file.")
    hash: str = Field(description="sha256 (16 hex) of its answer and documents: what a judged answer is checked "
                                  "against (no answer may be judged by a prompt that shows it).")
    content_hash: str = Field(description="sha256 (16 hex) of everything shown: question, documents, answer, "
                                          "label and note.")
    label: GoldLabel
    injection: tuple[str, ...] = Field(default=(), description=(
        "Text in it that addresses the judge, as 'field:style' (answer, question, context, note)."))
    injection_action: InjectionAction | None = Field(default=None, description=(
        "What was done with that text: 'strip' (cut out before it is shown) or 'flag' (shown as given)."))
    entry: dict[str, Any] = Field(default_factory=dict, description=(
        "Its pool line as read: a replay rebuilds the pool from these when the file is gone."))


class JudgeSpec(_Frozen):
    """A judge as given on the command line: a name and its settings."""

    spec: str = Field(description="The text as given, e.g. 'quip:n=21'.")
    name: str
    settings: dict[str, Any] = Field(default_factory=dict)
    calibration: Calibration | None = None
    templates: dict[str, PromptTemplate] = Field(default_factory=dict, description=(
        "Every prompt the judge renders (inner judges' too), by name: the run can be re-read without the folder."))
    demonstrations: tuple[DemonstrationRef, ...] = Field(default=(), description=(
        "The labelled examples the judge's prompts show (inner judges' too); with per-answer selection "
        "(demo_strategy=nearest) every candidate of the pool."))
    runs_on: str | None = Field(default=None, description=(
        "Where and in what precision a local judge's model runs, and how dtype=auto chose it (e.g. 'cpu "
        "bfloat16 (dtype=auto: bfloat16 agrees with float32 on 99.7% of 300 check-set verdicts ...)')."))


class RunHeader(_Frozen):
    """The first line of records.jsonl: what was run, on what, with what."""

    kind: Literal["header"] = "header"
    run_id: str
    judges: tuple[JudgeSpec, ...]
    dataset: DatasetInfo
    eval_split: str | None = Field(default=None, description="Which examples were evaluated, e.g. 'test' or 'all'.")
    template_hashes: dict[str, str] = Field(default_factory=dict)
    git_commit: str | None = None
    versions: dict[str, str] = Field(default_factory=dict)
    started_at: str


class ResultRecord(_Frozen):
    """One line of records.jsonl after the header: a judge's result on one example."""

    kind: Literal["result"] = "result"
    judge: str = Field(description="The judge spec text, as in the header.")
    example: Example
    result: JudgeResult
