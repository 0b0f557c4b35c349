"""Cosine-similarity judge: each answer sentence against its most similar context sentence.

The similarity baseline of the legal groundedness benchmark: embed answer and
context sentences, take for each answer sentence the best cosine with any
context sentence, and aggregate over the answer (``min`` by default: one
unsupported sentence is enough to make an answer ungrounded). Sentences are
embedded by the engine embedder (:mod:`groundjudge.local_nli.embedder`: length-sorted
batches, each distinct sentence once, float32 / bfloat16 / ONNX Runtime) and kept in the
process's shared vector cache, so answers sharing a document embed it once, whichever
judges of the run read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from groundjudge.judges import register
from groundjudge.judges.local_settings import check_placement
from groundjudge.judges.scoring import Scored, judge_locally
from groundjudge.local_nli.devices import Device, DType
from groundjudge.local_nli.embedder import EmbedderSpec, SentenceEmbedder, sentence_embedder
from groundjudge.local_nli.model import DEFAULT_EMBEDDER
from groundjudge.text import sentence_spans
from groundjudge.types import Claim, ClaimVerdict, Evidence, Example, JudgeResult

Sentences = tuple[list[tuple[int, int, int]], list[str]]
"""A context's sentences: (document index, start, end) of each, and their texts."""


def context_sentences(context: Sequence[str]) -> Sentences:
    """Every sentence of the context's documents, with its document and offsets."""
    spans, texts = [], []
    for doc_index, doc in enumerate(context):
        for start, end in sentence_spans(doc):
            spans.append((doc_index, start, end))
            texts.append(doc[start:end])
    return spans, texts


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
    device: Device = "auto"
    """As on every local judge (see groundjudge.local_nli.devices)."""
    dtype: DType = "auto"
    """As on every local judge: ``auto`` keeps bfloat16 where native and its cosine verdicts on the shipped check
    set agree with float32's."""
    backend: Literal["torch", "onnx"] = "torch"
    """``onnx``: ONNX Runtime on CPU (exported once per model; with ``int8`` quantised by onnxruntime)."""
    int8: bool = False
    """Dynamically quantised int8 linear layers (CPU): faster, but the vectors move (opt-in)."""

    def __post_init__(self) -> None:
        check_placement(self.name, self.device, self.dtype)

    def embedder(self) -> SentenceEmbedder:
        """The engine embedder (shared per process; its vectors shared with every judge through the cache)."""
        return sentence_embedder(EmbedderSpec(name=self.model, device=self.device, dtype=self.dtype,
                                              backend=self.backend, int8=self.int8, batch_size=self.batch_size))

    def runs_on(self) -> str:
        """Where and in what precision the embedder runs (how dtype=auto chose it); loads it."""
        return self.embedder().placement.describe()

    def score_batch(self, examples: Sequence[Example]) -> list[Scored]:
        """:meth:`score` of every example, with all their answer sentences and the sentences of their contexts
        embedded in one call (sentences already in the shared cache are not embedded again)."""
        spans_of = [list(sentence_spans(example.answer)) for example in examples]
        answer_texts = [ex.answer[s:e] for ex, spans in zip(examples, spans_of) for s, e in spans]
        contexts = {ex.context: context_sentences(ex.context) for ex, spans in zip(examples, spans_of) if spans}
        context_texts = [t for _, texts in contexts.values() for t in texts]
        vectors = self.embedder().embed(answer_texts + context_texts) if answer_texts else None
        embedded, offset = {}, len(answer_texts)
        for context, (spans, texts) in contexts.items():
            embedded[context] = (spans, texts, vectors[offset:offset + len(texts)])
            offset += len(texts)
        results, offset = [], 0
        for example, answer_spans in zip(examples, spans_of):
            if not answer_spans:
                results.append(Scored(score=None, abstain_reason="empty_answer"))
                continue
            results.append(self._scored(example, answer_spans, vectors[offset:offset + len(answer_spans)],
                                        embedded[example.context]))
            offset += len(answer_spans)
        return results

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
