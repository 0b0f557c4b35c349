"""Shared by the hhem and minicheck judges: claims x windows -> P(supported), max over windows, min over claims.

The answer's claims are its sentences (``granularity=sentence``) or the whole answer (``answer``). Each claim
is scored against its windows of the context (all of them, or its ``top_k`` by the evidence ranker the
``nli`` judge uses); its support is the maximum over them, and the window that gave it is kept as evidence.
A claim is supported when its support reaches ``threshold``, else unverifiable: these detectors say
"consistent or not", not whether the context contradicts the claim or is silent. The answer's score is its
weakest claim's support, so an answer is grounded exactly when every claim is supported, at any threshold
(calibration moves both together).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from groundjudge.judges.evidence_chunks import as_evidence
from groundjudge.judges.local_settings import LocalModelSettings
from groundjudge.judges.pair_batch import PairBatch, scored_answers
from groundjudge.judges.scoring import Scored, judge_locally
from groundjudge.local_nli.evidence import EvidenceMethod, Selection
from groundjudge.local_nli.model import DEFAULT_EMBEDDER
from groundjudge.local_nli.segment import Window, claims_of
from groundjudge.types import Claim, ClaimVerdict, Example, JudgeResult

Granularity = Literal["sentence", "answer"]
"""What is checked: each answer sentence (answer score = the lowest), or the whole answer at once."""


def hypotheses(answer: str, granularity: Granularity) -> list[tuple[int, int]]:
    """The (start, end) spans of the answer to check: its sentences, or the whole answer (whitespace trimmed)."""
    if granularity == "sentence":
        return claims_of(answer)
    stripped = answer.strip()
    if not stripped:
        return []
    start = answer.index(stripped)
    return [(start, start + len(stripped))]


def support_verdicts(answer: str, spans: list[tuple[int, int]], probs: np.ndarray, selection: Selection,
                     wins: list[Window], threshold: float, source: str) -> list[ClaimVerdict]:
    """One verdict per claim: its best window's P(supported), that window as evidence, supported or unverifiable."""
    verdicts = []
    for c, (start, end) in enumerate(spans):
        rows = selection.rows_of(c)
        support, evidence = 0.0, None
        if rows:
            best = rows[int(np.argmax(probs[rows]))]
            support, evidence = float(probs[best]), as_evidence(wins[selection.pairs[best][1]])
        label = "supported" if support >= threshold else "unverifiable"
        verdicts.append(ClaimVerdict(claim=Claim(text=answer[start:end], start=start, end=end), label=label,
                                     score=support, evidence=evidence,
                                     reason=f"{source}: P(supported) {support:.3f}, best of {len(rows)} window(s)"))
    return verdicts


@dataclass(frozen=True)
class ClaimSupportJudge(LocalModelSettings):
    """Base of the local claim-support judges (hhem, minicheck); not registered itself."""

    name: ClassVar[str] = "claim_support"
    max_concurrency: ClassVar[int | None] = 1
    model: str = ""
    granularity: Granularity = "sentence"
    """``sentence``: each answer sentence is a claim and the answer scores as its weakest; ``answer``: one claim."""
    evidence: EvidenceMethod = "embedding"
    """How each claim's ``top_k`` windows are chosen: ``embedding`` or ``tfidf`` (as in ``nli``)."""
    evidence_model: str = DEFAULT_EMBEDDER
    threshold: float = 0.5

    def engine(self) -> Any:
        """The loaded scorer (shared per process): ``score_pairs(premises, claims)`` -> P(supported)."""
        raise NotImplementedError

    def claim_windows(self, example: Example, claims: list[str], engine: Any) -> tuple[list[Window], Selection]:
        """The context's windows and the (claim, window) pairs to score."""
        raise NotImplementedError

    def claim_windows_many(self, items: list[tuple[Example, list[str]]],
                           engine: Any) -> list[tuple[list[Window], Selection]]:
        """:meth:`claim_windows` of many answers (a judge whose selection embeds does them in one call)."""
        return [self.claim_windows(example, claims, engine) for example, claims in items]

    def source(self) -> str:
        """The detector's name in claim reasons."""
        return self.name

    def score_batch(self, examples: Sequence[Example]) -> list[Scored]:
        """:meth:`score` of every example, all their (window, claim) pairs through the model in one call
        (length-sorted across the examples). Each answer's timings hold the call's counts and its own
        ``answer_pairs`` (and ``batch_examples`` when the call scored more than one answer)."""
        engine = self.engine()
        spans_of = [hypotheses(example.answer, self.granularity) for example in examples]
        answer_claims = [[example.answer[s:e] for s, e in spans] for example, spans in zip(examples, spans_of)]
        found = iter(self.claim_windows_many([(ex, claims) for ex, claims in zip(examples, answer_claims) if claims],
                                             engine))
        batch = PairBatch()
        for spans, claims in zip(spans_of, answer_claims):
            if not spans:
                batch.skip()
                continue
            wins, selection = next(found)
            batch.add((spans, wins, selection), [wins[w].text for _, w in selection.pairs],
                      [claims[c] for c, _ in selection.pairs])
        return scored_answers(engine, examples, batch, self._answer_scored)

    def _answer_scored(self, example: Example, plan: Any, probs: np.ndarray, shared: dict[str, float]) -> Scored:
        """One answer's claim verdicts and its weakest claim's support (rows of the chunk's call)."""
        spans, wins, selection = plan
        verdicts = support_verdicts(example.answer, spans, probs, selection, wins, self.threshold, self.source())
        timings = {**shared, "windows": float(len(wins)), "pairs_all_windows": float(selection.pairs_all),
                   "answer_pairs": float(len(selection.pairs))}
        return Scored(score=min(v.score for v in verdicts), claims=verdicts, timings=timings)

    def score(self, example: Example) -> Scored:
        """Claim verdicts and the weakest claim's support (sync: runs in a worker thread)."""
        return self.score_batch([example])[0]

    def path(self) -> str:
        """What produced the verdicts."""
        return f"local:{self.name}({self.model})"

    async def judge(self, example: Example) -> JudgeResult:
        """Score in a worker thread and decide with the (calibrated) threshold."""
        return await judge_locally(self.score, example, self.threshold, self.path())
