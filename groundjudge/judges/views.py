"""Views judge: multi-view verification of every claim, typed Verified / Uncertain / Unsupported.

Each claim of the answer is checked by several views (prompt formulations of
one NLI model, and ``models=`` other models as independent backends) over its
top-k evidence windows; its support mass m(c) is the share of views that find
it entailed. The answer's score is the lowest support mass of its claims (an
answer is only as grounded as its weakest claim), decided with a threshold
fitted on dev (default: tau).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from groundjudge.judges import register
from groundjudge.judges.local_settings import check_placement
from groundjudge.judges.nli import DEFAULT_NLI_MODEL, claim_windows_many
from groundjudge.judges.scoring import Scored, judge_locally
from groundjudge.local_nli.devices import Device, DType
from groundjudge.local_nli.evidence import EvidenceMethod
from groundjudge.local_nli.model import DEFAULT_EMBEDDER
from groundjudge.local_nli.nli_model import load_nli_model
from groundjudge.local_nli.segment import claims_of
from groundjudge.local_nli.settings import ModelSettings
from groundjudge.local_nli.views import VIEWS, entailment_votes, evidence_type
from groundjudge.types import Claim, ClaimVerdict, Example, JudgeResult

LABELS = {"Verified": "supported", "Uncertain": "unverifiable", "Unsupported": "unverifiable"}


@register
@dataclass(frozen=True)
class ViewsJudge:
    """Multi-view NLI verification: support mass per claim, evidence types Verified / Uncertain / Unsupported."""

    name: ClassVar[str] = "views"
    max_concurrency: ClassVar[int | None] = 1
    model: str = DEFAULT_NLI_MODEL
    models: tuple[str, ...] = ()
    """More models, each an independent ``direct`` view (``models=[A, B]``; a TOML array)."""
    views: tuple[str, ...] = VIEWS
    entail_at: float = 0.5
    tau: float = 0.6
    tau_prime: float = 0.2
    top_k: int = 2
    window_tokens: int = 128
    evidence: EvidenceMethod = "embedding"
    """How each claim's top-k windows are chosen: ``embedding`` or ``tfidf`` (as in ``nli``)."""
    evidence_model: str = DEFAULT_EMBEDDER
    max_length: int | None = None
    batch_size: int = 16
    int8: bool = False
    backend: Literal["torch", "onnx"] = "torch"
    threshold: float = 0.6
    device: Device = "auto"
    """As on every local judge (see groundjudge.local_nli.devices)."""
    dtype: DType = "auto"
    """As on every local judge: ``auto`` settles each model's precision by the check set."""

    def __post_init__(self) -> None:
        check_placement(self.name, self.device, self.dtype)

    def runs_on(self) -> str:
        """Where and in what precision each of its models runs (how dtype=auto chose it); loads them."""
        return "; ".join(f"{name}: {engine.placement.describe()}" for name, engine in self._engines())

    def _engines(self) -> list[tuple[str, Any]]:
        """(short name, loaded NLI model) of ``model`` and of every one of ``models``."""
        names = [self.model] + [m for m in self.models if m.strip()]
        settings = ModelSettings(batch_size=self.batch_size, device=self.device, dtype=self.dtype)
        return [(name.rsplit("/", 1)[-1], load_nli_model(name, settings, max_length=self.max_length,
                                                         int8=self.int8, backend=self.backend))
                for name in names]

    def _evidence(self, items: list[tuple[Example, list[str]]], primary: Any) -> list[list[list[str]]]:
        """Per answer, each claim's top-k evidence windows of its context (windows fitting beside its longest claim,
        chosen as ``nli`` chooses them; every answer's claims and windows embedded in one call)."""
        found = claim_windows_many([(example.context, claims) for example, claims in items], primary, self.top_k,
                                   self.window_tokens, self.evidence, self.evidence_model)
        return [[[wins[selection.pairs[row][1]].text for row in selection.rows_of(c)] for c in range(len(claims))]
                for (_, claims), (wins, selection) in zip(items, found)]

    def score_batch(self, examples: Sequence[Example]) -> list[Scored]:
        """:meth:`score` of every example: the claims of all of them voted on by each view in one call per view."""
        engines = self._engines()
        spans_of = [claims_of(example.answer) for example in examples]
        items = [(example, [example.answer[s:e] for s, e in spans]) for example, spans in zip(examples, spans_of)
                 if spans]
        found = iter(self._evidence(items, engines[0][1]))
        plans, claims_in, evidence_in, questions = [], [], [], []
        for example, spans in zip(examples, spans_of):
            if not spans:
                plans.append(None)
                continue
            claims = [example.answer[s:e] for s, e in spans]
            evidence = next(found)
            plans.append((spans, claims, evidence, len(claims_in)))
            claims_in += claims
            evidence_in += evidence
            questions += [example.question] * len(claims)
        votes, view_names = (entailment_votes(engines, evidence_in, claims_in, questions, [v for v in self.views if v],
                                              self.entail_at) if claims_in else (None, []))
        results = []
        for plan in plans:
            if plan is None:
                results.append(Scored(score=None, abstain_reason="no_claims"))
                continue
            spans, claims, evidence, offset = plan
            verdicts = [self._verdict(claims[row], span, votes[offset + row], view_names)
                        for row, span in enumerate(spans)]
            results.append(Scored(score=min(v.score for v in verdicts), claims=verdicts,
                                  timings={"views": float(len(view_names)), "pairs_scored": float(
                                      len(view_names) * sum(len(e) for e in evidence))}))
        return results

    def _verdict(self, claim: str, span: tuple[int, int], votes: Any, view_names: list[str]) -> ClaimVerdict:
        """One claim's verdict from its votes: support mass, evidence type, the views that entailed it."""
        mass = float(votes.mean())
        kind = evidence_type(mass, self.tau, self.tau_prime)
        agreeing = ", ".join(n for n, v in zip(view_names, votes) if v) or "none"
        return ClaimVerdict(claim=Claim(text=claim, start=span[0], end=span[1]), label=LABELS[kind], score=mass,
                            reason=f"{kind}: m={mass:.2f}; entailed by {agreeing}",
                            views={n: bool(v) for n, v in zip(view_names, votes)})

    def score(self, example: Example) -> Scored:
        """Support mass per claim over the views; score = the lowest."""
        return self.score_batch([example])[0]

    def path(self) -> str:
        """What produced the verdicts."""
        return f"local:views({self.model})"

    async def judge(self, example: Example) -> JudgeResult:
        """Score in a worker thread and decide with the (calibrated) threshold."""
        return await judge_locally(self.score, example, self.threshold, self.path())
