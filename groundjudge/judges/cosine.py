"""Cosine-similarity judge: each answer sentence against its most similar context sentence.

The similarity baseline of the legal groundedness benchmark: embed answer and
context sentences, take for each answer sentence the best cosine with any
context sentence, and aggregate over the answer (``min`` by default: one
unsupported sentence is enough to make an answer ungrounded). Context
embeddings are cached per distinct context, so answers sharing a document
embed it once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

from groundjudge.judges import register
from groundjudge.judges.scoring import Scored, judge_locally
from groundjudge.local_nli.evidence import LRUCache
from groundjudge.local_nli.model import DEFAULT_EMBEDDER, load_embedder
from groundjudge.text import sentence_spans
from groundjudge.types import Claim, ClaimVerdict, Evidence, Example, JudgeResult


@register
@dataclass(frozen=True)
class CosineJudge:
    """Max cosine similarity of each answer sentence to a context sentence (sentence embeddings)."""

    name: ClassVar[str] = "cosine"
    max_concurrency: ClassVar[int | None] = 1
    model: str = DEFAULT_EMBEDDER
    agg: Literal["min", "mean"] = "min"
    threshold: float = 0.5
    batch_size: int = 64
    _cache: LRUCache = field(default_factory=LRUCache, init=False, repr=False, compare=False)

    def _context_embeddings(self, example: Example):
        def make():
            spans, texts = [], []
            for doc_index, doc in enumerate(example.context):
                for start, end in sentence_spans(doc):
                    spans.append((doc_index, start, end))
                    texts.append(doc[start:end])
            vectors = load_embedder(self.model).encode(texts, batch_size=self.batch_size,
                                                       normalize_embeddings=True, convert_to_numpy=True)
            return spans, texts, vectors

        return self._cache.get_or_make((self.model, example.context), make)

    def score(self, example: Example) -> Scored:
        """Best-matching context sentence per answer sentence, aggregated over the answer."""
        answer_spans = list(sentence_spans(example.answer))
        if not answer_spans:
            return Scored(score=None, abstain_reason="empty_answer")
        spans, texts, context_vectors = self._context_embeddings(example)
        answer_vectors = load_embedder(self.model).encode(
            [example.answer[s:e] for s, e in answer_spans], batch_size=self.batch_size,
            normalize_embeddings=True, convert_to_numpy=True)
        similarity = answer_vectors @ context_vectors.T
        best = similarity.argmax(axis=1)
        claims = []
        for row, (start, end) in enumerate(answer_spans):
            value = float(max(min(similarity[row, best[row]], 1.0), 0.0))
            doc_index, ev_start, ev_end = spans[best[row]]
            claims.append(ClaimVerdict(
                claim=Claim(text=example.answer[start:end], start=start, end=end), score=value,
                label="supported" if value >= self.threshold else "unverifiable",
                evidence=Evidence(text=texts[best[row]], doc_index=doc_index, start=ev_start, end=ev_end)))
        values = [c.score for c in claims]
        total = min(values) if self.agg == "min" else sum(values) / len(values)
        return Scored(score=total, claims=claims)

    async def judge(self, example: Example) -> JudgeResult:
        """Score the example and decide with the (calibrated) threshold."""
        return await judge_locally(self.score, example, self.threshold, f"local:cosine({self.model})")
