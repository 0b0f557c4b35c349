"""Claims judge: extract atomic claims, extract the context's facts once, verify every claim.

The claim-extraction + claim-verification chain (as in DeepEval's faithfulness
and the precision-style grounding metric): the answer's score is the weighted
share of supported claims, with optional partial credit for unverifiable
ones. ``against=facts`` verifies against facts extracted once per distinct
context (shared by every answer with that context); ``against=context``
verifies against the raw documents. Facts that fail their extraction (template
placeholders such as ``<fact_1>`` copied by a small model, or a list that carries
under ``min_fact_coverage`` of the documents' content words) are not trusted: the
claims are then verified against the documents, as the call's prompt records.
An answer with no checkable claim abstains with ``no_claims`` — it is never scored 1.

Claims come only from the answer's content: spans that address the judge (see
``groundjudge.security``) are cut before extraction. With ``quote_check`` (the
default) a claim the model calls supported counts as supported only when its
evidence quote is found in the documents (or the facts extracted from them); a
missing or invented quote makes it unverifiable (reason ``quote_not_found``), so an
answer cannot supply its own proof. The yes/no probability mode asks for no quote
and is not quote-checked.

With ``score=logprobs`` (or ``auto``) each claim is asked on its own with the yes/no
prompt ``claim_yesno`` and scored P(supported) from the first token's
log-probabilities; the answer's score is the weakest claim's (``aggregate``: min,
mean or product), its threshold fitted on dev. ``evidence=chunks`` verifies each
claim only against its top-k document windows (quoted on the claim verdict):
long documents are never sent whole.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from dataclasses import dataclass, field
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, Field, create_model

from groundjudge.judges import register
from groundjudge.judges.direct import bounded_text
from groundjudge.judges import injection_guard as guard
from groundjudge.judges.evidence_chunks import EvidenceMode, top_chunks, union_chunks
from groundjudge.judges.llm_judge import LLMJudgeSettings, abstain, provider_abstention
from groundjudge.judges.llm_scoring import NO_LOGPROBS, Aggregation, ScoreMode, aggregate, asks_logprobs, combined_source
from groundjudge.llm import ProviderError
from groundjudge.local_nli.evidence import EvidenceMethod
from groundjudge.text import normalize, sentences
from groundjudge.types import Claim, ClaimVerdict, Evidence, Example, JudgeResult, LLMCall, Verdict


CLAIM_MAX_CHARS = 300
"""Schema bound on one extracted claim or fact (a grammar-constrained decoder stops there)."""

MAX_ITEMS = 40
"""Schema bound on the number of claims or facts in one reply (a small model otherwise repeats itself to the token
limit on a long document, and the reply never closes)."""


class ClaimList(BaseModel):
    """Reply of ``claims_extract``."""

    claims: list[Annotated[str, bounded_text(CLAIM_MAX_CHARS)]] = Field(json_schema_extra={"maxItems": MAX_ITEMS})


class FactList(BaseModel):
    """Reply of ``facts_extract``."""

    facts: list[Annotated[str, bounded_text(CLAIM_MAX_CHARS)]] = Field(json_schema_extra={"maxItems": MAX_ITEMS})


class ClaimCheck(BaseModel):
    """One entry of the ``claims_verify`` reply."""

    claim: int = Field(ge=1)
    verdict: Literal["supported", "contradicted", "unverifiable"]
    evidence: str = bounded_text(CLAIM_MAX_CHARS, "")
    reason: str = bounded_text(default="")


def verdict_list_model(n: int) -> type[BaseModel]:
    """A reply model that requires exactly one verdict per claim (a missing one is a validation error)."""
    return create_model(f"ClaimVerdicts{n}", verdicts=(list[ClaimCheck], Field(min_length=n, max_length=n)))


def locate_evidence(quote: str, context: tuple[str, ...]) -> Evidence | None:
    """Where a quoted span sits in the documents (case-insensitive), or the quote alone if not found."""
    quote = quote.strip().strip('"')
    if not quote:
        return None
    for index, doc in enumerate(context):
        start = doc.lower().find(quote.lower())
        if start >= 0:
            return Evidence(text=doc[start:start + len(quote)], doc_index=index, start=start, end=start + len(quote))
    return Evidence(text=quote)


QUOTE_NOT_FOUND = "quote_not_found"
"""Reason prefix of a claim the model called supported whose quote is not in the evidence."""

QUOTE_WORD_SHARE = 0.8
"""A quote not found verbatim still counts as found when this share of its words (and at least 3) lie in one
sentence of the evidence: a model's light paraphrase or changed punctuation, not an invented quote."""


def quote_found(quote: str, sources: list[str]) -> bool:
    """Whether a quoted span is in the sources: verbatim after normalisation (case, accents, punctuation,
    whitespace), or as ``QUOTE_WORD_SHARE`` of its words within one sentence."""
    wanted = normalize(quote)
    if not wanted:
        return False
    for source in sources:
        if wanted in normalize(source):
            return True
    words = wanted.split()
    if len(words) < 3:
        return False
    for source in sources:
        for sentence in sentences(source) or [source]:
            have = set(normalize(sentence).split())
            if sum(w in have for w in words) >= QUOTE_WORD_SHARE * len(words):
                return True
    return False


PLACEHOLDER = re.compile(r"\s*(?:<[^<>]*>|\[[^\[\]]*\]|\.\.\.|…)?\s*")
"""A reply item that is a template placeholder (``<fact_1>``, ``[fact]``, ``...``) or empty, not a fact."""


def is_placeholder(item: str) -> bool:
    """Whether a reply item is the reply example's placeholder (a small model copies it) or empty: no content."""
    return PLACEHOLDER.fullmatch(item) is not None


def content_words(text: str) -> set[str]:
    """The normalised words of more than three characters (numbers of any length): what a fact list must carry."""
    return {w for w in normalize(text).split() if len(w) > 3 or w.isdigit()}


def usable_facts(facts: list[str] | None, context: tuple[str, ...], min_coverage: float) -> list[str] | None:
    """The extracted facts without placeholders, or None for a failed extraction, which must not stand in for the
    documents: a reply that did not parse (``facts`` None; a small model repeating itself to the token limit on a
    long document), or facts carrying under ``min_coverage`` of the documents' content words."""
    if facts is None:
        return None
    kept = [f for f in facts if not is_placeholder(f)]
    wanted = content_words(" ".join(context))
    if not kept or (wanted and len(wanted & content_words(" ".join(kept))) / len(wanted) < min_coverage):
        return None
    return kept


def claim_span(claim: str, answer: str) -> Claim:
    """A Claim with its span in the answer when it is quoted verbatim."""
    start = answer.find(claim)
    return Claim(text=claim, start=start if start >= 0 else None, end=start + len(claim) if start >= 0 else None)


class FactMemo:
    """Facts extraction shared by concurrent answers with the same context: one call per distinct context."""

    def __init__(self) -> None:
        self.tasks: dict[tuple, asyncio.Task] = {}
        self.shared = 0
        """How many answers reused facts extracted for another answer."""

    async def get(self, key: tuple, make, calls: list[LLMCall]):
        """The facts for a context; the answer that triggers the extraction carries its calls."""
        loop_key = (id(asyncio.get_running_loop()), *key)
        own: list[LLMCall] = []
        task = self.tasks.get(loop_key)
        if task is None:
            task = self.tasks[loop_key] = asyncio.ensure_future(make(own))
        else:
            self.shared += 1
        try:
            return await task
        except ProviderError:
            self.tasks.pop(loop_key, None)   # a later answer may try again
            raise
        finally:
            calls.extend(own)


@register
@dataclass(frozen=True)
class ClaimsJudge(LLMJudgeSettings):
    """Extract claims, verify each against the context's facts (or the raw context); score = supported share."""

    name: ClassVar[str] = "claims"
    TEMPLATES: ClassVar[tuple[str, ...]] = ("claims_extract", "facts_extract", "claims_verify", "claim_yesno")
    against: Literal["facts", "context"] = "facts"
    weighting: Literal["equal", "length"] = "equal"
    partial_credit: float = 0.0
    threshold: float | None = None
    """The answer is grounded when its score reaches it: 1.0 (every claim supported) for verbalised verdicts, 0.5
    for probabilities; fitted on dev when not given."""
    score: ScoreMode = "verbalised"
    """``verbalised``: one call verifies every claim (supported / contradicted / unverifiable) and the score is the
    supported share; ``logprobs``: one yes/no call per claim scored P(yes) from the first token (abstains where
    the provider returns no log-probabilities); ``auto``: log-probabilities where the provider returns them."""
    aggregate: Aggregation = "min"
    """Probability modes: the answer's score from its claims' (the weakest claim's, their mean or product)."""
    evidence: EvidenceMode = "full"
    """``full``: facts or documents as ``against`` says; ``chunks``: each claim against its top_k document windows
    (no facts extraction)."""
    top_k: Annotated[int, Field(ge=1)] = 3
    chunk_words: Annotated[int, Field(ge=8)] = 200
    ranker: EvidenceMethod = "embedding"
    """How chunks are ranked against each claim (as the nli judge ranks windows)."""
    share_facts: bool = True
    """Extract a context's facts once and share them between the answers that have that context."""
    min_fact_coverage: float = 0.3
    """Facts carrying a smaller share of the documents' content words are a failed extraction: verify against the
    documents instead."""
    quote_check: bool = True
    """A claim called supported counts as supported only when its evidence quote is found in the documents (or the
    facts); otherwise it is unverifiable with reason ``quote_not_found``."""
    _facts: FactMemo = field(default_factory=FactMemo, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.threshold is None:
            object.__setattr__(self, "threshold", 1.0 if self.score == "verbalised" else 0.5)

    @property
    def uses_facts(self) -> bool:
        """Whether claims are verified against facts extracted from the documents."""
        return self.against == "facts" and self.evidence == "full"

    async def extract_claims(self, example: Example, calls: list[LLMCall]) -> list[str] | None:
        """The answer's atomic claims (None on a parse failure), without the reply example's placeholders, taken
        from the answer's content only (spans that address the judge cut out)."""
        content = guard.answer_content(example, guard.screen(example, self.injection_detectors))
        if not content.strip():
            return []
        parsed = await self.ask("claims_extract", {"question": example.question, "answer": content}, ClaimList, calls)
        return None if parsed is None else [c.strip() for c in parsed.claims if not is_placeholder(c)]

    async def extract_facts(self, example: Example, calls: list[LLMCall]) -> list[str] | None:
        """The context's facts, extracted once per distinct context and model."""
        digest = hashlib.sha256("\x1f".join(example.context).encode()).hexdigest()

        async def make(own: list[LLMCall]) -> list[str] | None:
            parsed = await self.ask("facts_extract",
                                             {"context": list(example.context)}, FactList, own)
            return None if parsed is None else [f.strip() for f in parsed.facts if f.strip()]

        if not self.share_facts:
            return await make(calls)
        return await self._facts.get((self.model, digest), make, calls)

    async def verify(self, example: Example, claims: list[str], facts: list[str] | None,
                     calls: list[LLMCall]) -> list[ClaimCheck] | None:
        """One verdict per claim, against facts (or the documents when facts is None)."""
        parsed = await self.ask(
            "claims_verify",
            {"claims": claims, "facts": facts, "context": list(example.context)},
            verdict_list_model(len(claims)), calls)
        if parsed is None:
            return None
        by_number = {check.claim: check for check in parsed.verdicts}
        if set(by_number) != set(range(1, len(claims) + 1)):
            return None
        return [by_number[i + 1] for i in range(len(claims))]

    def answer_score(self, claims: list[ClaimVerdict]) -> float:
        """Verbalised: the weighted share of supported claims (unverifiable ones earn ``partial_credit``);
        probabilities: the claims' P(supported) aggregated (``aggregate``)."""
        if self.score != "verbalised":
            return aggregate([c.score for c in claims], [c.claim.weight for c in claims], self.aggregate)
        credit = {"supported": 1.0, "unverifiable": self.partial_credit, "contradicted": 0.0}
        weights = [c.claim.weight for c in claims]
        return sum(w * credit[c.label] for w, c in zip(weights, claims)) / sum(weights)

    async def judge_claims(self, example: Example, calls: list[LLMCall]) -> tuple[ClaimVerdict, ...] | str:
        """The chain: claim verdicts, or the abstain reason."""
        claims = await self.extract_claims(example, calls)
        if claims is None:
            return "parse_failure"
        if not claims:
            return "no_claims"
        chunks = (top_chunks(claims, example.context, self.top_k, self.chunk_words, self.ranker)
                  if self.evidence == "chunks" else [()] * len(claims))
        facts = None
        if self.uses_facts:
            # None: a failed extraction; verify against the documents rather than abstain on every answer sharing them
            facts = usable_facts(await self.extract_facts(example, calls), example.context, self.min_fact_coverage)
        if self.score != "verbalised":
            return await self.score_claims(example, claims, facts, chunks, calls)
        context = [c.text for c in union_chunks(chunks)] if self.evidence == "chunks" else list(example.context)
        checks = await self.verify(example.model_copy(update={"context": tuple(context)}), claims, facts, calls)
        if checks is None:
            return "parse_failure"
        verdicts = []
        for text, check, read in zip(claims, checks, chunks):
            label, reason = self.checked_label(check, context, facts)
            evidence = locate_evidence(check.evidence, example.context) if check.verdict != "unverifiable" else None
            verdicts.append(ClaimVerdict(claim=self.claim_of(text, example), label=label, evidence=evidence,
                                         reason=reason, score_source="verbalised", chunks=tuple(read),
                                         score={"supported": 1.0, "unverifiable": self.partial_credit}.get(
                                             label, 0.0)))
        return tuple(verdicts)

    def checked_label(self, check: ClaimCheck, context: list[str], facts: list[str] | None) -> tuple[str, str]:
        """The claim's label and reason after the quote check: "supported" stands only with a quote found in
        the documents read (or the facts); otherwise the claim is unverifiable."""
        if check.verdict != "supported" or not self.quote_check:
            return check.verdict, check.reason
        if quote_found(check.evidence, context + (facts or [])):
            return check.verdict, check.reason
        said = f"quote {check.evidence[:120]!r} is not in the evidence" if check.evidence.strip() else "no quote given"
        return "unverifiable", f"{QUOTE_NOT_FOUND}: {said} (the model said supported: {check.reason})"[:600]

    def claim_of(self, text: str, example: Example) -> Claim:
        """A claim with its span in the answer and its weight."""
        claim = claim_span(text, example.answer)
        if self.weighting == "length":
            claim = claim.model_copy(update={"weight": float(max(len(text.split()), 1))})
        return claim

    async def score_claims(self, example: Example, claims: list[str], facts: list[str] | None,
                           chunks: list, calls: list[LLMCall]) -> tuple[ClaimVerdict, ...] | str:
        """Probability modes: one yes/no call per claim (in order: a local server reuses the shared prefix), each
        claim scored P(supported)."""
        logprobs = asks_logprobs(self.score, self.model, self.llm.cache)
        verdicts = []
        for text, read in zip(claims, chunks):
            context = [c.text for c in read] if self.evidence == "chunks" else list(example.context)
            scored = await self.ask_yes_no("claim_yesno", {"claim": text, "facts": facts, "context": context},
                                           calls, logprobs)
            if scored is None:
                return "parse_failure"
            if self.score == "logprobs" and scored.source != "logprobs":
                return (f"{NO_LOGPROBS}: the provider returned no log-probabilities for yes/no "
                        f"(use score=auto to take the one-word verdict instead)")
            label = "supported" if scored.p_yes >= 0.5 else "unverifiable"
            verdicts.append(ClaimVerdict(claim=self.claim_of(text, example), label=label, score=scored.p_yes,
                                         score_source=scored.source, chunks=tuple(read),
                                         reason=f"P(supported) = {scored.p_yes:.3f} ({scored.source})"))
        return tuple(verdicts)

    def template_names(self) -> tuple[str, ...]:
        """The prompts rendered: no facts extraction when verifying against the documents (or chunks); per-claim
        yes/no prompts in the probability modes."""
        skip = {"claim_yesno" if self.score == "verbalised" else "claims_verify"}
        if not self.uses_facts:
            skip.add("facts_extract")
        return tuple(t for t in self.TEMPLATES if t not in skip)

    def expected_calls(self, example: Example) -> list[tuple[str, dict, int]]:
        """(prompt, variables, expected output tokens) of one example's calls, answer sentences standing in
        for claims and context sentences for facts (for --dry-run; facts are counted once per context)."""
        claims = sentences(example.answer) or [example.answer]
        facts = [s for doc in example.context for s in sentences(doc)] if self.uses_facts else None
        calls = [("claims_extract", {"question": example.question, "answer": example.answer}, 25 * len(claims))]
        if self.uses_facts:
            calls.append(("facts_extract", {"context": list(example.context)}, 25 * len(facts)))
        chunks = (top_chunks(claims, example.context, self.top_k, self.chunk_words, self.ranker)
                  if self.evidence == "chunks" else [()] * len(claims))
        if self.score != "verbalised":
            for claim, read in zip(claims, chunks):
                context = [c.text for c in read] if self.evidence == "chunks" else list(example.context)
                calls.append(("claim_yesno", {"claim": claim, "facts": facts, "context": context}, 1))
            return calls
        context = [c.text for c in union_chunks(chunks)] if self.evidence == "chunks" else list(example.context)
        calls.append(("claims_verify", {"claims": claims, "facts": facts, "context": context}, 60 * len(claims)))
        return calls

    async def assess(self, example: Example) -> JudgeResult:
        """Run the chain and decide with the threshold on the supported share."""
        calls: list[LLMCall] = []
        try:
            outcome = await self.judge_claims(example, calls)
        except ProviderError as err:
            return provider_abstention(example, err, calls, self.path)
        if isinstance(outcome, str):
            return abstain(example, outcome, calls, self.path)
        value = self.answer_score(list(outcome))
        label = "grounded" if value >= self.threshold else "ungrounded"
        verdict = Verdict(example_id=example.id, label=label, score=value, threshold=self.threshold,
                          claims=outcome, path=self.path, score_source=combined_source(c.score_source for c in outcome))
        return JudgeResult(verdict=verdict, calls=tuple(calls))
