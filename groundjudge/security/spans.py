"""Spans of a rule hit in the text: a trigger stands for itself, the rest of its sentence, its sentence, its line
or its paragraph, found with light sentence-end rules (Latin and CJK marks, line breaks) and capped at
:data:`LIMIT` characters either way."""

from __future__ import annotations

import re
from typing import Literal

Extent = Literal["match", "rest", "sentence", "line", "paragraph"]
"""How far a rule's span reaches around its trigger."""


_BACK = re.compile(r"[.!?\u3002\uff01\uff1f][\"'”’)\]]*\s+|[\u3002\uff01\uff1f]|\n")
_FORWARD = re.compile(r"[.!?\u3002\uff01\uff1f][\"'”’)\]]*(?=\s|$)|[\u3002\uff01\uff1f][\"'”’)\]]*|\n")
_PARA_END = re.compile(r"\n[ \t]*\n")
LIMIT = 400
"""How far (characters) a span extends around its trigger at most."""


def sentence_start(text: str, pos: int) -> int:
    """Start of the sentence holding ``pos`` (after the last sentence end or line break, at most LIMIT back)."""
    lo = max(0, pos - LIMIT)
    start = lo
    for m in _BACK.finditer(text, lo, pos):
        start = m.end()
    return start


def sentence_end(text: str, pos: int) -> int:
    """End of the sentence holding ``pos`` (its final mark and closing quotes included; at most LIMIT on)."""
    m = _FORWARD.search(text, pos, min(len(text), pos + LIMIT))
    if m is None:
        return min(len(text), pos + LIMIT)
    return m.start() if m.group().startswith("\n") else m.end()


def line_end(text: str, pos: int) -> int:
    """End of the line holding ``pos``; when the rest of it is blank, the end of the next non-blank line."""
    end = text.find("\n", pos)
    end = len(text) if end < 0 else end
    if not text[pos:end].strip() and end < len(text):
        nxt = end + 1
        while nxt < len(text) and text[nxt] in " \t\n":
            nxt += 1
        if nxt - end <= 3:  # at most a blank line between
            stop = text.find("\n", nxt)
            end = len(text) if stop < 0 else stop
    return min(end, pos + LIMIT)


def paragraph_end(text: str, pos: int) -> int:
    """End of the paragraph holding ``pos`` (the next blank line), at most LIMIT on."""
    m = _PARA_END.search(text, pos, min(len(text), pos + LIMIT))
    return m.start() if m else min(len(text), pos + LIMIT)


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without its leading and trailing whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def extend(text: str, start: int, end: int, extent: Extent) -> tuple[int, int]:
    """The span a trigger at [start, end) stands for: itself, itself to its sentence's end, its sentence, the rest
    of its line, or of its paragraph."""
    if extent == "match":
        return start, end
    if extent == "rest":
        return start, max(end, sentence_end(text, end))
    if extent == "sentence":
        return sentence_start(text, start), max(end, sentence_end(text, end))
    if extent == "line":
        return start, max(end, line_end(text, end))
    return start, max(end, paragraph_end(text, end))
