"""A LettuceDetect-style token tagger: P(hallucinated) for every token of an answer, and the spans it marks.

The model (``KRLabsOrg/lettucedect-base-modernbert-en-v1``: ModernBERT, AutoModelForTokenClassification,
label 0 supported, 1 hallucinated) reads the context and question, written as in its training data
(``prompts/spans_context.j2``: the RAGTruth prompt), as the first sequence and the answer as the second.
Only the answer's tokens are read back (``sequence_ids``), with their character offsets into the answer
(``offset_mapping``). A context too long to fit beside the answer is cut into windows of whole sentences;
each window is read with the whole answer and a token's probability is aggregated over the windows (``max``,
as LettuceDetect: a token must look supported in every window; or ``min``: supported by any one window).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from groundjudge.local_nli.batches import BatchPlan, ScoreStats, accepted_inputs, run_sorted, to_row
from groundjudge.local_nli.backend_check import check_pairs, settle_scorer
from groundjudge.local_nli.devices import Placement, placement
from groundjudge.local_nli.inputs import render, token_count
from groundjudge.local_nli.model import resolve_model
from groundjudge.local_nli.model_cache import Loaded, load_pretrained
from groundjudge.local_nli.pair_scorer import support_column
from groundjudge.local_nli.segment import windows
from groundjudge.local_nli.settings import ModelSettings

log = logging.getLogger(__name__)

DEFAULT_TAGGER = "KRLabsOrg/lettucedect-base-modernbert-en-v1"
"""Hub name of LettuceDetect's base English ModernBERT tagger (a large one: ...-large-modernbert-en-v1)."""
TEMPLATE = "spans_context.j2"


@dataclass(frozen=True)
class TokenScores:
    """The answer's tokens: character offsets into the answer and P(hallucinated), aggregated over windows."""

    offsets: tuple[tuple[int, int], ...]
    probs: np.ndarray
    windows: int = 1
    answer_tokens_cut: int = 0
    """Answer tokens that did not fit beside the smallest context window (not scored)."""


@dataclass(frozen=True)
class Span:
    """A run of hallucinated tokens as a character span of the answer."""

    start: int
    end: int
    text: str
    prob: float
    """The highest P(hallucinated) of its tokens."""
    tokens: int


def support_of(prob: float) -> float:
    """A token's support score, 1 - P(hallucinated) (the answer's score is its lowest)."""
    return float(1.0 - prob)


def merge_spans(answer: str, scores: TokenScores, threshold: float) -> list[Span]:
    """Consecutive answer tokens whose support (1 - P(hallucinated)) is below ``threshold`` as character spans
    of the answer (whitespace at their edges trimmed; tokens with empty offsets skipped). The answer's score,
    its lowest token support, is below the threshold exactly when there is a span."""
    spans: list[Span] = []
    run: list[int] = []

    def close() -> None:
        if not run:
            return
        start, end = scores.offsets[run[0]][0], scores.offsets[run[-1]][1]
        while start < end and answer[start].isspace():
            start += 1
        while end > start and answer[end - 1].isspace():
            end -= 1
        if end > start:
            spans.append(Span(start=start, end=end, text=answer[start:end],
                              prob=float(max(scores.probs[i] for i in run)), tokens=len(run)))
        run.clear()

    for i, (start, end) in enumerate(scores.offsets):
        if start == end:
            continue
        if support_of(scores.probs[i]) < threshold:
            run.append(i)
        else:
            close()
    close()
    return spans


@dataclass
class TokenTagger:
    """A loaded token tagger: ``answer_scores(context, question, answer)`` -> TokenScores."""

    loaded: Loaded
    max_length: int
    batch_size: int = 4
    hallucinated: int = 1
    """The label index of 'hallucinated' (LettuceDetect: 1)."""
    across_windows: str = "max"
    stats: ScoreStats = field(default_factory=ScoreStats)
    placement: Placement | None = None
    """Where and in what precision it runs, as chosen (``dtype=auto``: with how the check went)."""

    def __post_init__(self) -> None:
        self.tokenizer, self.model, self.device = self.loaded.tokenizer, self.loaded.model, self.loaded.device
        if not getattr(self.tokenizer, "is_fast", False):
            raise ValueError("the spans judge needs a fast tokenizer (offset mapping)")
        self.pair_specials = self.tokenizer.num_special_tokens_to_add(pair=True)
        self.inputs = accepted_inputs(self.model)

    def prompt(self, passages: Sequence[str], question: str | None) -> str:
        """The first sequence: the passages (and question) in the tagger's training format."""
        return render(TEMPLATE, passages=list(passages), question=question or "")

    def prompts(self, context: Sequence[str], question: str | None, answer_tokens: int) -> tuple[list[str], int]:
        """One prompt with every document if it fits beside the answer, else one per window of the context;
        and how many tokens the room beside the answer lacked (answer tokens that cannot be scored)."""
        whole = self.prompt(context, question)
        room = self.max_length - answer_tokens - self.pair_specials
        if token_count(self.tokenizer, whole) <= room:
            return [whole], 0
        overhead = token_count(self.tokenizer, self.prompt([""], question))
        budget = room - overhead
        lacking = max(0, 32 - budget)
        wins = windows(tuple(context), max(budget, 32), lambda t: token_count(self.tokenizer, t))
        return [self.prompt([w.text], question) for w in wins], lacking

    def _encode(self, prompts: Sequence[str], answer: str, answer_fits: bool) -> tuple[
            list[dict[str, list]], list[list[int]], list[tuple[tuple[int, int], ...]]]:
        """Token ids per prompt, the positions of the answer's tokens, and their offsets into the answer. Only the
        prompt is cut if anything must be, unless the answer alone does not fit (then the answer's end too)."""
        encoded = self.tokenizer(list(prompts), [answer] * len(prompts),
                                 truncation="only_first" if answer_fits else "longest_first",
                                 max_length=self.max_length, return_offsets_mapping=True, verbose=False)
        rows, positions, offsets = [], [], []
        for i in range(len(prompts)):
            ids = encoded.sequence_ids(i)
            where = [j for j, s in enumerate(ids) if s == 1]
            positions.append(where)
            offsets.append(tuple((int(a), int(b)) for a, b in (encoded["offset_mapping"][i][j] for j in where)))
            rows.append(to_row(encoded, self.inputs, i))
        return rows, positions, offsets

    def _probs(self, batch: dict[str, Any]) -> list[np.ndarray]:
        import torch

        logits = self.model(**batch).logits.float()
        return list(torch.softmax(logits, dim=-1)[:, :, self.hallucinated].cpu().numpy())

    def answer_scores(self, context: Sequence[str], question: str | None, answer: str,
                      stats: ScoreStats | None = None) -> TokenScores:
        """P(hallucinated) per answer token, aggregated over the context windows (``across_windows``)."""
        return self.answers_scores([(context, question, answer)], stats)[0]

    def answers_scores(self, items: Sequence[tuple[Sequence[str], str | None, str]],
                       stats: ScoreStats | None = None) -> list[TokenScores]:
        """:meth:`answer_scores` of every (context, question, answer), the windows of all of them through the
        model in one call (length-sorted batches across the answers)."""
        call = ScoreStats()
        prepared, every_row = [], []
        for context, question, answer in items:
            prompts, lacking = self.prompts(context, question, token_count(self.tokenizer, answer))
            rows, positions, offsets = self._encode(prompts, answer, lacking == 0)
            prepared.append((answer, rows, positions, offsets, len(every_row)))
            every_row += rows
            call.pairs_truncated += int(lacking > 0)
        with self.loaded.lock:
            plan = BatchPlan.for_tokenizer(self.tokenizer, self.batch_size, self.device)
            out, self.batch_size = run_sorted(every_row, self._probs, plan, call)
        results = []
        for answer, rows, positions, offsets, first in prepared:
            n = min(len(p) for p in positions)
            per_window = []
            for row, where, probs in zip(rows, positions, out[first:first + len(rows)]):
                shift = len(probs) - len(row["input_ids"]) if plan.left else 0
                per_window.append(probs[[shift + j for j in where[:n]]])
            matrix = np.vstack(per_window) if per_window else np.zeros((0, n))
            agg = matrix.max(axis=0) if self.across_windows == "max" else matrix.min(axis=0)
            full = token_count(self.tokenizer, answer)
            results.append(TokenScores(offsets=offsets[0][:n], probs=agg, windows=len(rows),
                                       answer_tokens_cut=max(full - n, 0)))
        call.pairs_scored = len(every_row)
        self.stats.add(call)
        if stats is not None:
            stats.add(call)
        return results


TAGGER_SETTINGS = ModelSettings(batch_size=4)
"""The settings ``load_tagger`` uses when given none: 4 windows per forward pass (long inputs), the rest as
ModelSettings."""


def _tagger(path: str, settings: ModelSettings, max_length: int, across_windows: str, where: Placement) -> TokenTagger:
    """A token tagger on ``where`` (see :func:`load_tagger`)."""
    loaded = load_pretrained("AutoModelForTokenClassification", path, where)
    config, tokenizer = loaded.model.config, loaded.tokenizer
    limit = int(getattr(config, "max_position_embeddings", max_length) or max_length)
    if 0 < tokenizer.model_max_length < 1_000_000:
        limit = min(limit, int(tokenizer.model_max_length))
    # the supported label's index, from labels= or the config; hallucinated is the other one of two
    supported = support_column(dict(config.id2label), tuple(settings.labels), 0)
    hallucinated = 1 - supported if config.num_labels == 2 else 1
    return TokenTagger(loaded=loaded, max_length=min(max_length, limit), batch_size=settings.batch_size,
                       hallucinated=hallucinated, across_windows=across_windows, placement=where)


def tagger_verdicts(tagger: TokenTagger) -> list[bool]:
    """Per check-set pair (premise as the context, hypothesis as the answer): does some answer token have
    P(hallucinated) >= 0.5 (the spans judge's verdict at its default threshold)?"""
    premises, hypotheses = check_pairs()
    scores = tagger.answers_scores([([p], None, h) for p, h in zip(premises, hypotheses)])
    return [bool(len(s.probs) and s.probs.max() >= 0.5) for s in scores]


@lru_cache(maxsize=8)
def load_tagger(name: str = DEFAULT_TAGGER, settings: ModelSettings = TAGGER_SETTINGS, *, max_length: int = 4096,
                across_windows: str = "max") -> TokenTagger:
    """A token tagger, one per settings; its weights are shared with every judge naming the same model and
    placement. ``max_length`` is capped by the model's own limit (ModernBERT: 8192 positions). ``dtype=auto``
    is settled by the check set (see :func:`tagger_verdicts` and groundjudge.local_nli.backend_check)."""
    if across_windows not in ("max", "min"):
        raise ValueError(f"across_windows must be max or min, not {across_windows!r}")
    path = resolve_model(name)

    def build(where: Placement) -> TokenTagger:
        return _tagger(path, settings, max_length, across_windows, where)

    rule = f"tagger:{across_windows}:{list(settings.labels)}"
    return build(settle_scorer(placement(settings.device, settings.dtype), path, rule, build, tagger_verdicts))
