"""NLI judge: every claim of the answer checked by a local NLI model against its best evidence windows.

Per claim, the maximum entailment and contradiction over its top-k windows
decide (the evidence-grounded rule): supported when entailment reaches ``tau``
and beats contradiction, contradicted in the mirror case, unverifiable
otherwise. Short answers get the span-match backup (found in the context means
supported). The answer's score is the share of supported claims, decided with a
threshold fitted on dev. Each claim verdict keeps the window that decided it.
All claim x window pairs of an example are scored in one batched call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from groundjudge.judges import register
from groundjudge.judges.local_settings import LocalModelSettings, check_placement
from groundjudge.judges.pair_batch import PairBatch, scored_answers
from groundjudge.judges.scoring import Scored, judge_locally
from groundjudge.judges.span import find_span, locate
from groundjudge.local_nli.embedder import spec_for
from groundjudge.local_nli.evidence import EvidenceMethod, Selection, select_evidence_many
from groundjudge.local_nli.model import DEFAULT_EMBEDDER
from groundjudge.local_nli.nli_model import CONTRADICTION, ENTAILMENT, NLIModel, load_nli_model
from groundjudge.local_nli.segment import Window, claims_of, window_budget, windows
from groundjudge.types import Claim, ClaimLabel, ClaimVerdict, Evidence, Example, JudgeResult

DEFAULT_NLI_MODEL = "cross-encoder/nli-deberta-v3-base"
"""Hub name of the default NLI cross-encoder (alternatives: MoritzLaurer/DeBERTa-v3-large-mnli-fever-anli-ling-wanli,
or a model fine-tuned with ``groundjudge train``)."""


def claim_label(entail: float, contradict: float, tau: float) -> ClaimLabel:
    """supported / contradicted / unverifiable from the max entailment and contradiction (seed rule, tau)."""
    if entail >= tau and entail > contradict:
        return "supported"
    if contradict >= tau and contradict > entail:
        return "contradicted"
    return "unverifiable"


def supported_fraction(verdicts: list[ClaimVerdict]) -> float:
    """Share of the claims that are supported (weighted by claim weight)."""
    total = sum(v.claim.weight for v in verdicts)
    return sum(v.claim.weight for v in verdicts if v.label == "supported") / total if total else 0.0


def score_answer(verdicts: list[ClaimVerdict], how: str) -> float:
    """The answer's score from its claim verdicts: ``supported`` share, or the weakest claim's ``entailment``.

    A span-backed claim counts as entailed (1.0) under ``entailment``.
    """
    if how == "entailment":
        return min(1.0 if v.label == "supported" and v.reason and v.reason.startswith("span match")
                   else float(v.score or 0.0) for v in verdicts)
    return supported_fraction(verdicts)


def span_backup(claim: str, context: tuple[str, ...]) -> Evidence | None:
    """Where a short claim occurs in the context (normalised match), or None."""
    for doc_index, doc in enumerate(context):
        if find_span(claim, doc, "normalized"):
            found = locate(claim, doc, "normalized") or Evidence(text=claim)
            return found.model_copy(update={"doc_index": doc_index})
    return None


def _as_evidence(window: Window) -> Evidence:
    return Evidence(text=window.text, doc_index=window.doc_index, start=window.start, end=window.end)


def claim_windows(context: tuple[str, ...], claims: list[str], engine: Any, top_k: int, window_tokens: int | None,
                  evidence: EvidenceMethod, evidence_model: str) -> tuple[list[Window], Selection]:
    """The context's windows that fit beside the longest claim, and each claim's top-k of them.

    ``engine`` is any local scorer with ``max_length``, ``special_tokens`` (tokens its input adds around the
    pair) and ``token_length(text)``: the NLI model, HHEM, MiniCheck. The evidence embedder runs where the
    scorer runs (its ``placement``: the judge's device, and its dtype, ``auto`` when the judge said ``auto``).
    """
    return claim_windows_many([(context, claims)], engine, top_k, window_tokens, evidence, evidence_model)[0]


def claim_windows_many(items: Sequence[tuple[tuple[str, ...], list[str]]], engine: Any, top_k: int,
                       window_tokens: int | None, evidence: EvidenceMethod,
                       evidence_model: str) -> list[tuple[list[Window], Selection]]:
    """:func:`claim_windows` of many answers' (context, claims) at once: with ``evidence=embedding`` every claim
    and window of all of them goes through the embedder in one call (see
    :func:`~groundjudge.local_nli.evidence.select_evidence_many`)."""
    wins_of = []
    for context, claims in items:
        longest = max(engine.token_length(c) for c in claims)
        budget = window_budget(engine.max_length, longest, engine.special_tokens, window_tokens)
        wins_of.append(windows(context, budget, engine.token_length))
    embedder = spec_for(evidence_model, getattr(engine, "placement", None))
    selections = select_evidence_many([(claims, [w.text for w in wins]) for (_, claims), wins in zip(items, wins_of)],
                                      top_k, evidence, embedder)
    return list(zip(wins_of, selections))


@register
@dataclass(frozen=True)
class NLIJudge(LocalModelSettings):
    """Local NLI model per claim over its top-k evidence windows; score = supported share."""

    name: ClassVar[str] = "nli"
    max_concurrency: ClassVar[int | None] = 1
    model: str = DEFAULT_NLI_MODEL
    tau: float = 0.5
    top_k: int = 3
    window_tokens: int = 128
    """Evidence window size in tokens (capped by what the model leaves beside the claim): short,
    sentence-level windows are faster and more precise."""
    evidence: EvidenceMethod = "embedding"
    """How each claim's top-k windows are chosen: ``embedding`` (sentence-embedding cosine) or ``tfidf``."""
    evidence_model: str = DEFAULT_EMBEDDER
    """The sentence embedder of ``evidence=embedding`` (hub name or local path)."""
    max_length: int | None = None
    batch_size: int = 16
    int8: bool = False
    bf16: bool = False
    backend: Literal["torch", "onnx"] = "torch"
    """``onnx``: ONNX Runtime on CPU (exported once per model; with ``int8`` quantised by onnxruntime)."""
    span_backup: bool = True
    short_answer_tokens: int = 10
    answer_score: Literal["supported", "entailment"] = "supported"
    """The answer's score: the share of supported claims (the precision-style metric), or ``entailment``, the
    lowest max-entailment probability of its claims (continuous, so a threshold fitted on dev can do more)."""
    threshold: float = 0.5

    def __post_init__(self) -> None:
        check_placement(self.name, self.device, self.dtype, self.bf16)

    def engine(self) -> NLIModel:
        """The loaded model (shared per process)."""
        return load_nli_model(self.model, self.model_settings(), max_length=self.max_length, int8=self.int8,
                              bf16=self.bf16, backend=self.backend)

    def evidence_windows(self, example: Example, claims: list[str], engine: NLIModel) -> tuple[list[Window], Selection]:
        """The context's windows (fitting beside the longest claim) and each claim's top-k of them."""
        return claim_windows(example.context, claims, engine, self.top_k, self.window_tokens, self.evidence,
                             self.evidence_model)

    def rule(self, entail: float, contradict: float) -> ClaimLabel:
        """The claim label from its max entailment and contradiction (the seed rule with ``tau``)."""
        return claim_label(entail, contradict, self.tau)

    def verdict(self, claim: Claim, probs: np.ndarray, wins: list[Window], picked: list[int],
                context: tuple[str, ...], short: bool) -> ClaimVerdict:
        """One claim's verdict from the probabilities of its pairs (rows of ``probs``, windows ``picked``)."""
        entail = float(probs[:, ENTAILMENT].max()) if len(picked) else 0.0
        contradict = float(probs[:, CONTRADICTION].max()) if len(picked) else 0.0
        label = self.rule(entail, contradict)
        evidence, reason = None, None
        if len(picked):
            column = CONTRADICTION if label == "contradicted" else ENTAILMENT
            evidence = _as_evidence(wins[picked[int(np.argmax(probs[:, column]))]])
        if label != "supported" and self.span_backup and short:
            found = span_backup(claim.text, context)
            if found is not None:
                label, evidence, reason = "supported", found, "span match: the short answer occurs in the context"
        return ClaimVerdict(claim=claim, label=label, score=entail, evidence=evidence, reason=reason)

    def score_batch(self, examples: Sequence[Example]) -> list[Scored]:
        """:meth:`score` of every example, all their (evidence window, claim) pairs through the model in one call
        (length-sorted batches across the examples, a repeated pair run once). Each answer's timings hold the
        call's counts (``pairs_scored``: every pair of the call; ``batch_examples``: its answers, when more than
        one) and its own ``answer_pairs``."""
        engine = self.engine()
        spans_of = [claims_of(example.answer) for example in examples]
        claims_of_answer = [[example.answer[s:e] for s, e in spans] for example, spans in zip(examples, spans_of)]
        found = iter(claim_windows_many([(ex.context, claims) for ex, claims in zip(examples, claims_of_answer)
                                         if claims], engine, self.top_k, self.window_tokens, self.evidence,
                                        self.evidence_model))
        batch = PairBatch()
        for spans, claims in zip(spans_of, claims_of_answer):
            if not spans:
                batch.skip()
                continue
            wins, selection = next(found)
            batch.add((spans, claims, wins, selection), [wins[w].text for _, w in selection.pairs],
                      [claims[c] for c, _ in selection.pairs])
        return scored_answers(engine, examples, batch, self._answer_scored)

    def _answer_scored(self, example: Example, plan: Any, probs: np.ndarray, shared: dict[str, float]) -> Scored:
        """One answer's claim verdicts and score from its pairs' probabilities (rows of the chunk's call)."""
        spans, claims, wins, selection = plan
        short = len(example.answer.split()) <= self.short_answer_tokens
        verdicts = []
        for c, (start, end) in enumerate(spans):
            rows = selection.rows_of(c)
            verdicts.append(self.verdict(Claim(text=claims[c], start=start, end=end), probs[rows], wins,
                                         [selection.pairs[r][1] for r in rows], example.context, short))
        timings = {**shared, "windows": float(len(wins)), "pairs_all_windows": float(selection.pairs_all),
                   "answer_pairs": float(len(selection.pairs))}
        return Scored(score=score_answer(verdicts, self.answer_score), claims=verdicts, timings=timings)

    def score(self, example: Example) -> Scored:
        """Claim verdicts and the supported share (sync: runs in a worker thread)."""
        return self.score_batch([example])[0]

    def path(self) -> str:
        """What produced the verdicts."""
        return f"local:nli({self.model})"

    async def judge(self, example: Example) -> JudgeResult:
        """Score in a worker thread and decide with the (calibrated) threshold."""
        return await judge_locally(self.score, example, self.threshold, self.path())
