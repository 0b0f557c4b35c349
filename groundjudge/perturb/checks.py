"""The filter every candidate passes before it is kept: it differs from the original, it reads as fluently as the
original (cheap checks around the edit), and it is not supported by the context.

"Not supported" is decided by a check: the default :class:`LexicalCheck` (the edited words, with a few words either
side, do not occur in the context), or a :class:`JudgeCheck` with any judge of the registry (``--check SPEC``),
which keeps a variant only when the judge calls it ungrounded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

from groundjudge.perturb.spans import wants_an
from groundjudge.perturb.types import Candidate, CheckVerdict
from groundjudge.text import normalize, sentence_spans
from groundjudge.types import Example

MIN_LENGTH_RATIO = 0.5
MAX_LENGTH_RATIO = 1.5
"""A candidate's length must stay within these shares of the original's."""

WINDOW_WORDS = 3
"""Words either side of the edit that the lexical check looks for with it."""

_DOUBLED = re.compile(r"\b(\w+)\s+\1\b", re.IGNORECASE)
_SELF_COORDINATED = re.compile(r"\b(\w+(?:\s+\w+){0,3})\s+(?:or|and)\s+(?:(?:to|by|with|for|of|in|on|from)\s+)?"
                               r"(?:(?:the|a|an)\s+)?\1\b", re.IGNORECASE)
_SELF_LISTED = re.compile(r"\b(\w+)(?:\s*,\s*|\s*/\s*|\s+and/or\s+)(?:\w+\s*(?:,|\bor\b|\band\b)\s*)?\1\b",
                          re.IGNORECASE)
_ARTICLE = re.compile(r"\b(a|an)\s+([\w'-]+)", re.IGNORECASE)
_PUNCTUATION = re.compile(r"\s[,.;:]|[,;]\s*[,.;]|\(\s*\)|\s{2,}")
_PAIRS = (("(", ")", "brackets"), ("[", "]", "brackets"), ("{", "}", "brackets"), ("“", "”", "quotes"))
_TOKEN = re.compile(r"[a-z0-9]+")
_SKIP_TOKENS = frozenset(("a", "an", "the"))


def _article_errors(text: str) -> int:
    return sum((m.group(1).lower() == "an") != wants_an(m.group(2)) for m in _ARTICLE.finditer(text))


def _lower_starts(text: str) -> int:
    return sum(text[s].islower() for s, _ in sentence_spans(text))


def fluency_problem(original: str, text: str) -> str | None:
    """The first fluency problem the edit made (a reason code such as ``fluency:doubled_word``), or None.

    Each check compares the candidate with the original, so a quirk the original already had is not held against
    the candidate."""
    if not MIN_LENGTH_RATIO * len(original) <= len(text) <= MAX_LENGTH_RATIO * len(original):
        return "fluency:length"
    for pattern in (_DOUBLED, _SELF_COORDINATED, _SELF_LISTED):
        if len(pattern.findall(text)) > len(pattern.findall(original)):
            return "fluency:doubled_word"
    if _article_errors(text) > _article_errors(original):
        return "fluency:article"
    if _lower_starts(text) > _lower_starts(original):
        return "fluency:capitalisation"
    for opening, closing, reason in _PAIRS:
        if text.count(opening) - text.count(closing) != original.count(opening) - original.count(closing):
            return f"fluency:{reason}"
    if text.count('"') % 2 != original.count('"') % 2:
        return "fluency:quotes"
    if len(_PUNCTUATION.findall(text)) > len(_PUNCTUATION.findall(original)):
        return "fluency:punctuation"
    return None


def differs(original: str, text: str) -> bool:
    """Whether the candidate says something else than the original (not only case, spacing or punctuation)."""
    return normalize(original) != normalize(text)


def _tokens(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text.lower()) if m.group() not in _SKIP_TOKENS]


@lru_cache(maxsize=256)
def _marked(context: tuple[str, ...]) -> str:
    """The context as tokens, every sentence between ``§`` marks (so that a window can say 'the sentence ends')."""
    parts = []
    for doc in context:
        for s, e in sentence_spans(doc):
            parts.append(" ".join(t for t, _, _ in _tokens(doc[s:e])))
    return " § " + " § ".join(parts) + " § "


def new_wording(candidate: Candidate, words: int = WINDOW_WORDS) -> str:
    """The candidate's edited words with ``words`` words either side in its sentence (``§`` where the sentence
    starts or ends first), as the lexical check looks for them."""
    text, edit = candidate.text, candidate.edit
    spans = [(s, e) for s, e in sentence_spans(text) if s <= edit.after_start <= e] or [(0, len(text))]
    s, e = spans[0]
    tokens = _tokens(text[s:e])
    start, end = edit.after_start - s, edit.after_end - s
    inside = [t for t, a, b in tokens if a < end and b > start] if end > start else []
    left = [t for t, a, b in tokens if b <= start][-words:]
    right = [t for t, a, b in tokens if a >= end and not (end > start and a < end)][:words]
    if len([t for t, a, b in tokens if b <= start]) <= words:
        left = ["§"] + left
    if len([t for t, a, b in tokens if a >= end]) <= words:
        right = right + ["§"]
    return " ".join(left + inside + right)


def wording_in_context(context: tuple[str, ...], candidate: Candidate, words: int = WINDOW_WORDS
                       ) -> tuple[bool, str]:
    """(found, window): whether the candidate's new wording (:func:`new_wording`) occurs word for word in the
    context, and that window."""
    window = new_wording(candidate, words)
    return f" {window} " in _marked(context), window


class Check(Protocol):
    """Says whether a candidate is supported by its source's context."""

    name: str

    async def verdict(self, source: Example, candidate: Candidate) -> CheckVerdict:
        """The check's verdict on the candidate (label ``grounded`` means supported: the variant is dropped)."""
        ...


@dataclass(frozen=True)
class LexicalCheck:
    """Supported when the candidate's new wording (the edited words with three words either side, sentence ends
    marked) occurs word for word in the context."""

    name: str = "lexical"
    words: int = WINDOW_WORDS

    async def verdict(self, source: Example, candidate: Candidate) -> CheckVerdict:
        """``grounded`` (score 1) when the window is in the context, else ``ungrounded`` (score 0)."""
        found, window = wording_in_context(source.context, candidate, self.words)
        return CheckVerdict(judge=self.name, label="grounded" if found else "ungrounded", score=float(found),
                            reason=f"window {window!r} {'found' if found else 'not found'} in the context")


@dataclass
class JudgeCheck:
    """A judge of the registry (built from its spec) judges the candidate against the source's context.

    A local judge with a batch path (:func:`~groundjudge.runs.local_chunks.batch_scorer`: nli, crossencoder,
    cosine, views, ...) judges the candidates of many answers checked at once in one model call, as the service
    batches its requests (:class:`~groundjudge.runs.micro_batches.MicroBatcher`); other judges judge each one
    alone. Either way a candidate's verdict is the judge's on that candidate."""

    spec: str
    judge: Any
    batched: bool = True
    """False: every candidate judged alone (the judge's own ``judge()``), the reference batching is held to."""
    checked: int = field(default=0, init=False)
    """Candidates judged so far."""
    name: str = field(init=False)
    _batcher: Any = field(default=None, init=False, repr=False)
    _sizes: list[int] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        self.name = self.spec

    @property
    def concurrency(self) -> int:
        """How many candidates are worth checking at once: a batch's worth for a judge with a batch path, else 1."""
        from groundjudge.runs.local_chunks import batch_scorer
        from groundjudge.runs.micro_batches import BatchSettings

        return BatchSettings().max_batch if self.batched and batch_scorer(self.judge) is not None else 1

    @property
    def batch_sizes(self) -> list[int]:
        """The sizes of the last batches the judge was given (at most 1,000; empty: no batch path, or none yet)."""
        current = self._batcher.batch_sizes if self._batcher is not None else []
        return (self._sizes + current)[-1000:]

    @classmethod
    def build(cls, spec: str, service: Any = None, batched: bool = True) -> JudgeCheck:
        """Build the judge of ``spec`` (a SpecError names what is wrong with it)."""
        from groundjudge.judges import build_judge

        judge, _ = build_judge(spec, service=service)
        return cls(spec=spec, judge=judge, batched=batched)

    async def verdict(self, source: Example, candidate: Candidate) -> CheckVerdict:
        """The judge's label and score for the source with the candidate as its answer."""
        example = source.model_copy(update={"answer": candidate.text, "label": None, "error_types": ()})
        self.checked += 1
        if self.concurrency > 1:
            if self._batcher is None:
                from groundjudge.runs.local_chunks import batch_scorer
                from groundjudge.runs.micro_batches import MicroBatcher

                self._batcher = MicroBatcher(self.judge, batch_scorer(self.judge))
                self._batcher.start()
            result = await self._batcher.submit(example)
        else:
            result = await self.judge.judge(example)
        verdict = result.verdict
        return CheckVerdict(judge=self.spec, label=verdict.label, score=verdict.score,
                            reason=verdict.abstain_reason)

    async def aclose(self) -> None:
        """Stop the batcher of this pass (a later pass, on another event loop, starts its own)."""
        if self._batcher is not None:
            await self._batcher.stop()
            self._sizes = self.batch_sizes
            self._batcher = None
