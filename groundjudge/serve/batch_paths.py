"""The batch path of a local judge: many examples scored in one blocking call, as the judge scores one.

A batch path takes a list of examples and returns one :class:`~groundjudge.judges.scoring.Scored` per example,
equal to what the judge's own ``score`` gives for it; it runs in a worker thread. Where the model allows it the
work of every example goes through the model at once:

* ``nli``: every example's (evidence window, claim) pairs in one ``score_pairs`` call (length-sorted batches
  across requests, repeated pairs run once);
* ``cosine``: every example's answer sentences, and the sentences of the contexts it has not seen yet, in one
  ``encode`` call (context embeddings stay cached per context, in the judge's own cache).

Every other judge has no batch path and is judged one request at a time on its own path: a local judge's
``score`` in a worker thread (``judge_locally``), an LLM judge's calls on the event loop. quip has no model to
batch: its pure-Python n-gram counting gains nothing from company.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from groundjudge.judges.scoring import Scored
from groundjudge.types import Example

BatchPath = Callable[[Sequence[Example]], list[Scored]]
"""Scores a batch of examples in one blocking call, one Scored per example, in order."""


def nli_batch(judge: Any) -> BatchPath:
    """The ``nli`` judge's batch path: all examples' pairs through the model in one call."""
    import numpy as np

    from groundjudge.judges.nli import score_answer
    from groundjudge.local_nli.nli_model import ScoreStats
    from groundjudge.local_nli.segment import claims_of
    from groundjudge.types import Claim

    def score_all(examples: Sequence[Example]) -> list[Scored]:
        engine = judge.engine()
        plans, premises, hypotheses = [], [], []
        for example in examples:
            spans = claims_of(example.answer)
            if not spans:
                plans.append(None)
                continue
            claims = [example.answer[s:e] for s, e in spans]
            wins, selection = judge.evidence_windows(example, claims, engine)
            plans.append((spans, claims, wins, selection, len(premises)))
            premises += [wins[w].text for _, w in selection.pairs]
            hypotheses += [claims[c] for c, _ in selection.pairs]
        stats = ScoreStats()
        probs = engine.score_pairs(premises, hypotheses, stats=stats) if premises else np.zeros((0, 3))
        results = []
        for example, plan in zip(examples, plans):
            if plan is None:
                results.append(Scored(score=None, abstain_reason="no_claims"))
                continue
            spans, claims, wins, selection, offset = plan
            mine = probs[offset:offset + len(selection.pairs)]
            short = len(example.answer.split()) <= judge.short_answer_tokens
            verdicts = []
            for c, (start, end) in enumerate(spans):
                rows = selection.rows_of(c)
                verdicts.append(judge.verdict(Claim(text=claims[c], start=start, end=end), mine[rows], wins,
                                              [selection.pairs[r][1] for r in rows], example.context, short))
            timings = {"pairs_scored": float(len(selection.pairs)), "windows": float(len(wins)),
                       "pairs_all_windows": float(selection.pairs_all), "batch_examples": float(len(examples)),
                       "batch_pairs": float(stats.pairs_scored)}
            results.append(Scored(score=score_answer(verdicts, judge.answer_score), claims=verdicts,
                                  timings=timings))
        return results

    return score_all


def _embed_missing_contexts(judge: Any, examples: Sequence[Example], answer_texts: list[str]):
    """Answer sentences and the sentences of contexts not yet in the judge's cache, embedded in one call; the
    contexts' embeddings go into the cache as the judge's own ``_context_embeddings`` makes them. Returns the
    answer sentences' vectors."""
    from groundjudge.local_nli.model import load_embedder
    from groundjudge.text import sentence_spans

    missing: dict[tuple[str, ...], tuple[list, list[str]]] = {}
    for example in examples:
        if example.context in missing or judge._cache.peek((judge.model, example.context)) is not None:
            continue
        spans, texts = [], []
        for doc_index, doc in enumerate(example.context):
            for start, end in sentence_spans(doc):
                spans.append((doc_index, start, end))
                texts.append(doc[start:end])
        missing[example.context] = (spans, texts)
    texts = answer_texts + [t for _, context_texts in missing.values() for t in context_texts]
    if not texts:
        return None
    vectors = load_embedder(judge.model).encode(texts, batch_size=judge.batch_size, normalize_embeddings=True,
                                                convert_to_numpy=True)
    offset = len(answer_texts)
    for context, (spans, context_texts) in missing.items():
        made = (spans, context_texts, vectors[offset:offset + len(context_texts)])
        judge._cache.get_or_make((judge.model, context), lambda made=made: made)
        offset += len(context_texts)
    return vectors[:len(answer_texts)]


def cosine_batch(judge: Any) -> BatchPath:
    """The ``cosine`` judge's batch path: all examples' answer sentences (and new contexts' sentences) embedded
    in one call."""
    from groundjudge.text import sentence_spans
    from groundjudge.types import Claim, ClaimVerdict, Evidence

    def score_all(examples: Sequence[Example]) -> list[Scored]:
        spans_of = [list(sentence_spans(example.answer)) for example in examples]
        texts = [ex.answer[s:e] for ex, spans in zip(examples, spans_of) for s, e in spans]
        vectors = _embed_missing_contexts(judge, examples, texts)
        results, offset = [], 0
        for example, answer_spans in zip(examples, spans_of):
            if not answer_spans:
                results.append(Scored(score=None, abstain_reason="empty_answer"))
                continue
            spans, context_texts, context_vectors = judge._context_embeddings(example)
            similarity = vectors[offset:offset + len(answer_spans)] @ context_vectors.T
            offset += len(answer_spans)
            best = similarity.argmax(axis=1)
            claims = []
            for row, (start, end) in enumerate(answer_spans):
                value = float(max(min(similarity[row, best[row]], 1.0), 0.0))
                doc_index, ev_start, ev_end = spans[best[row]]
                claims.append(ClaimVerdict(
                    claim=Claim(text=example.answer[start:end], start=start, end=end), score=value,
                    label="supported" if value >= judge.threshold else "unverifiable",
                    evidence=Evidence(text=context_texts[best[row]], doc_index=doc_index, start=ev_start,
                                      end=ev_end)))
            values = [c.score for c in claims]
            total = min(values) if judge.agg == "min" else sum(values) / len(values)
            results.append(Scored(score=total, claims=claims))
        return results

    return score_all


def verdict_path(judge: Any) -> str:
    """The ``path`` a batched judge writes on its verdicts, as its own ``judge`` does."""
    if callable(getattr(judge, "path", None)):
        return judge.path()
    return f"local:cosine({judge.model})"


def batch_path(judge: Any) -> BatchPath | None:
    """The judge's batch path (``nli`` and ``cosine`` exactly, not their subclasses), or None when it has none
    (it is then judged one request at a time)."""
    from groundjudge.judges.cosine import CosineJudge
    from groundjudge.judges.nli import NLIJudge

    if type(judge) is NLIJudge:
        return nli_batch(judge)
    if type(judge) is CosineJudge:
        return cosine_batch(judge)
    return None
