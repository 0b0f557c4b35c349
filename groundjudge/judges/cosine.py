"""Cosine-similarity judge: each answer sentence against its most similar context sentence.

The similarity baseline of the legal groundedness benchmark: embed answer and
context sentences, take for each answer sentence the best cosine with any
context sentence, and aggregate over the answer (``min`` by default: one
unsupported sentence is enough to make an answer ungrounded). Context
embeddings are cached per distinct context, so answers sharing a document
embed it once.
"""

from __future__ import annotations

from collections.abc import Sequence
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

    def _missing_context_sentences(self, examples: Sequence[Example]) -> dict[tuple[str, ...], tuple[list, list]]:
        """The sentences (with their document offsets) of the examples' contexts not yet embedded, per context."""
        missing: dict[tuple[str, ...], tuple[list, list]] = {}
        for example in examples:
            if example.context in missing or self._cache.peek((self.model, example.context)) is not None:
                continue
            spans, texts = [], []
            for doc_index, doc in enumerate(example.context):
                for start, end in sentence_spans(doc):
                    spans.append((doc_index, start, end))
                    texts.append(doc[start:end])
            missing[example.context] = (spans, texts)
        return missing

    def score_batch(self, examples: Sequence[Example]) -> list[Scored]:
        """:meth:`score` of every example, with all their answer sentences and the sentences of every context not
        yet cached embedded in one call (context embeddings are then cached per context)."""
        spans_of = [list(sentence_spans(example.answer)) for example in examples]
        answer_texts = [ex.answer[s:e] for ex, spans in zip(examples, spans_of) for s, e in spans]
        missing = self._missing_context_sentences(examples)
        texts = answer_texts + [t for _, context_texts in missing.values() for t in context_texts]
        vectors = load_embedder(self.model).encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                                   convert_to_numpy=True) if texts else None
        offset = len(answer_texts)
        embedded = {}
        for context, (spans, context_texts) in missing.items():
            embedded[context] = (spans, context_texts, vectors[offset:offset + len(context_texts)])
            self._cache.get_or_make((self.model, context), lambda made=embedded[context]: made)
            offset += len(context_texts)
        results, offset = [], 0
        for example, answer_spans in zip(examples, spans_of):
            if not answer_spans:
                results.append(Scored(score=None, abstain_reason="empty_answer"))
                continue
            context = embedded.get(example.context) or self._context_embeddings(example)
            results.append(self._scored(example, answer_spans, vectors[offset:offset + len(answer_spans)], context))
            offset += len(answer_spans)
        return results

    def _context_embeddings(self, example: Example):
        """The example's context sentences (offsets, texts, vectors), from the cache or embedded now."""
        def make():
            spans, texts = self._missing_context_sentences([example]).get(example.context, ([], []))
            vectors = load_embedder(self.model).encode(texts, batch_size=self.batch_size,
                                                       normalize_embeddings=True, convert_to_numpy=True)
            return spans, texts, vectors

        return self._cache.get_or_make((self.model, example.context), make)

    def _scored(self, example: Example, answer_spans: list[tuple[int, int]], answer_vectors, context) -> Scored:
        """Best-matching context sentence per answer sentence, aggregated over the answer."""
        spans, texts, context_vectors = context
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

    def score(self, example: Example) -> Scored:
        """Best-matching context sentence per answer sentence, aggregated over the answer."""
        return self.score_batch([example])[0]

    def path(self) -> str:
        """What produced the verdicts."""
        return f"local:cosine({self.model})"

    async def judge(self, example: Example) -> JudgeResult:
        """Score the example and decide with the (calibrated) threshold."""
        return await judge_locally(self.score, example, self.threshold, self.path())
