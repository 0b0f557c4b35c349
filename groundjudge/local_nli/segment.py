"""Segmentation for NLI without downloads: answers into claims, contexts into windows that fit the model.

A window is a run of whole context sentences whose token count (counted by the
model's tokenizer) fits a budget, with ``overlap`` sentences shared between
neighbouring windows so a fact spread over a sentence boundary is seen whole.
A single sentence longer than the budget is split on whitespace into pieces
that fit, so nothing has to be cut when it is scored.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from groundjudge.text import sentence_spans

_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Window:
    """A run of whole context sentences: which document, where (character offsets), and the text."""

    doc_index: int
    start: int
    end: int
    text: str


def claims_of(answer: str) -> list[tuple[int, int]]:
    """The answer's claims: its sentences as (start, end) spans (the whole answer if it has none)."""
    return list(sentence_spans(answer)) or ([(0, len(answer))] if answer.strip() else [])


def window_budget(max_length: int, claim_tokens: int, special_tokens: int, window_tokens: int | None = None,
                  floor: int = 16) -> int:
    """Tokens a window may take: what the model leaves beside the longest claim, capped at ``window_tokens``."""
    room = max_length - claim_tokens - special_tokens
    return max(min(room, window_tokens) if window_tokens else room, floor)


def _split_long(doc: str, start: int, end: int, max_tokens: int,
                count_tokens: Callable[[str], int]) -> list[tuple[int, int, int]]:
    """An over-long sentence as (start, end, tokens) pieces of whole words that fit the budget."""
    pieces: list[tuple[int, int, int]] = []
    piece_start = piece_end = None
    total = 0
    for word in _WORD.finditer(doc, start, end):
        size = count_tokens(word.group())
        if piece_start is not None and total + size > max_tokens:
            pieces.append((piece_start, piece_end, total))
            piece_start, total = None, 0
        if piece_start is None:
            piece_start = word.start()
        piece_end, total = word.end(), total + size
    if piece_start is not None:
        pieces.append((piece_start, piece_end, total))
    return pieces


def _units(doc: str, max_tokens: int, count_tokens: Callable[[str], int]) -> list[tuple[int, int, int]]:
    """The document's sentences as (start, end, tokens), over-long ones split into pieces."""
    units = []
    for start, end in sentence_spans(doc):
        size = count_tokens(doc[start:end])
        units.extend([(start, end, size)] if size <= max_tokens else _split_long(doc, start, end, max_tokens,
                                                                              count_tokens))
    return units


def windows(context: tuple[str, ...] | list[str], max_tokens: int, count_tokens: Callable[[str], int],
            overlap: int = 1) -> list[Window]:
    """Windows of consecutive sentences of at most ``max_tokens`` tokens, ``overlap`` sentences shared
    between neighbours, in document order. Token counts are summed per sentence (tokenizer-counted)."""
    out: list[Window] = []
    for doc_index, doc in enumerate(context):
        units = _units(doc, max_tokens, count_tokens)
        i = 0
        while i < len(units):
            j, total = i, units[i][2]
            while j + 1 < len(units) and total + units[j + 1][2] <= max_tokens:
                j += 1
                total += units[j][2]
            start, end = units[i][0], units[j][1]
            out.append(Window(doc_index=doc_index, start=start, end=end, text=doc[start:end]))
            if j + 1 >= len(units):
                break
            i = _next_start(units, i, j, overlap, max_tokens)
    return out


def _next_start(units: list[tuple[int, int, int]], i: int, j: int, overlap: int, max_tokens: int) -> int:
    """Where the next window starts: ``overlap`` units back, but never a window that is only a repeat."""
    start = max(j + 1 - overlap, i + 1)
    while start <= j and sum(u[2] for u in units[start:j + 2]) > max_tokens:
        start += 1   # the shared sentences and the next one do not fit together: share fewer
    return start
