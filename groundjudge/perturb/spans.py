"""Span helpers shared by the generators: apply one replacement cleanly (article agreement, sentence-start
capitals, the spaces and commas a deletion leaves), record it as a word-aligned :class:`Edit`, and find the context
sentence that supported the edited words."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from groundjudge.perturb.types import Candidate, Edit
from groundjudge.text import normalize, sentence_spans
from groundjudge.types import Evidence

STOP = frozenset(("a an the of to in on and or is are was were be been by for with that this it as at from its "
                  "his her their any all not no can may must shall will would should could has have had do does "
                  "did if than then there which who whom whose what when where while so such into under upon").split())
"""Words left out of lexical overlap (they say nothing about which sentence a claim came from)."""

_VOWEL_SOUND_EXCEPTIONS = ("one", "once", "uni", "use", "usu", "util", "eu", "ewe", "ubiq", "euro")
_SILENT_H = ("hour", "honest", "honor", "honour", "heir")


def words(text: str) -> list[str]:
    """Content words of a text, normalised (articles, punctuation and :data:`STOP` words out)."""
    return [w for w in normalize(text).split() if w not in STOP]


def wants_an(word: str) -> bool:
    """Whether ``word`` takes "an" (a vowel sound; a few spelling exceptions, digits read aloud)."""
    low = word.lower()
    if not low:
        return False
    if low[0].isdigit():
        return low[0] == "8" or re.match(r"1[18](?!\d\d)", low) is not None
    if low.startswith(_SILENT_H):
        return True
    if low.startswith(_VOWEL_SOUND_EXCEPTIONS):
        return False
    if word.isupper() and len(word) > 1:   # an initialism: read letter by letter
        return low[0] in "aefhilmnorsx"
    return low[0] in "aeiou"


def is_sentence_start(text: str, offset: int) -> bool:
    """Whether ``offset`` starts a sentence of ``text`` (by the project's segmenter)."""
    return any(start == offset for start, _ in sentence_spans(text)) or not text[:offset].strip()


def sentence_at(text: str, offset: int) -> tuple[int, int]:
    """The (start, end) of the sentence of ``text`` holding ``offset`` (the whole text when none does)."""
    for start, end in sentence_spans(text):
        if start <= offset <= end:
            return start, end
    return 0, len(text)


def _tidy(text: str, at: int) -> str:
    """Clean the junction a replacement left at ``at``: doubled spaces, a space before punctuation, doubled commas."""
    lo, hi = max(at - 3, 0), min(at + 3, len(text))
    piece = text[lo:hi]
    piece = re.sub(r" {2,}", " ", piece)
    piece = re.sub(r" +([,.;:!?)])", r"\1", piece)
    piece = re.sub(r",\s*([,.;:])", r"\1", piece)
    piece = re.sub(r"\(\s*", "(", piece)
    return text[:lo] + piece + text[hi:]


def _fix_article(text: str, at: int) -> str:
    """Make an "a"/"an" directly before ``at`` agree with the word that now follows it."""
    before = re.search(r"\b([Aa]n?) +$", text[:at])
    after = re.match(r"\W*([\w'-]+)", text[at:])
    if not before or not after:
        return text
    article = before.group(1)
    right = "an" if wants_an(after.group(1)) else "a"
    if article.lower() == right:
        return text
    right = right.capitalize() if article[0].isupper() else right
    return text[:before.start(1)] + right + text[before.end(1):]


def _fix_capital(original: str, text: str, at: int) -> str:
    """Keep the sentence start at ``at`` capitalised when the original's was."""
    if at >= len(text) or not text[at].isalpha() or not text[at].islower():
        return text
    if at < len(original) and original[at].isupper() and is_sentence_start(original, at):
        return text[:at] + text[at].upper() + text[at + 1:]
    return text


def _in_token(text: str, i: int) -> bool:
    """Whether ``text[i]`` belongs to a word or number (a comma or point between digits does: 8,000 is one)."""
    if i < 0 or i >= len(text):
        return False
    if text[i].isalnum():
        return True
    return text[i] in ",." and 0 < i < len(text) - 1 and text[i - 1].isdigit() and text[i + 1].isdigit()


def _unbalanced(text: str) -> int:
    """Brackets opened and not closed in ``text`` (negative: a closing one comes first)."""
    depth, low = 0, 0
    for char in text:
        depth += (char in "([") - (char in ")]")
        low = min(low, depth)
    return low if low < 0 else depth


def _trim_tokens(original: str, variant: str, p: int, before_end: int, after_end: int) -> tuple[int, int, int]:
    """Drop whole words (with their space) that the two sides of an edit share at its start or end."""
    while True:
        before, after = original[p:before_end], variant[p:after_end]
        head_b, head_a = re.match(r"\S+\s+", before), re.match(r"\S+\s+", after)
        if head_b and head_a and head_b.group() == head_a.group():
            p += head_b.end()
            continue
        tail_b, tail_a = re.search(r"\s+\S+$", before), re.search(r"\s+\S+$", after)
        if tail_b and tail_a and tail_b.group() == tail_a.group():
            before_end -= len(tail_b.group())
            after_end -= len(tail_a.group())
            continue
        return p, before_end, after_end


def diff_edit(original: str, variant: str, start: int | None = None, end: int | None = None) -> Edit:
    """The one contiguous edit between two texts, widened to whole words at both ends; ``start``/``end`` (the span
    that was replaced, when known) keep the edit from sliding onto equal letters beside it."""
    limit = min(len(original), len(variant))
    p = 0
    while p < limit and original[p] == variant[p] and (start is None or p < start):
        p += 1
    s = 0
    while s < limit - p and original[-1 - s] == variant[-1 - s] and (end is None or s < len(original) - end):
        s += 1
    while p > 0 and _in_token(original, p - 1) and (_in_token(original, p) or _in_token(variant, p)):
        p -= 1
    while s > 0 and _in_token(original, len(original) - s) and (
            _in_token(original, len(original) - s - 1) or _in_token(variant, len(variant) - s - 1)):
        s -= 1
    before_end, after_end = len(original) - s, len(variant) - s
    p, before_end, after_end = _trim_tokens(original, variant, p, before_end, after_end)
    s = len(original) - before_end
    while p > 0 and (_unbalanced(original[p:before_end]) < 0 or _unbalanced(variant[p:after_end]) < 0):
        p -= 1
    while s > 0 and (_unbalanced(original[p:before_end]) > 0 or _unbalanced(variant[p:after_end]) > 0):
        s -= 1
        before_end, after_end = len(original) - s, len(variant) - s
    return Edit(before=original[p:before_end], after=variant[p:after_end], before_start=p, before_end=before_end,
                after_start=p, after_end=after_end)


def replace(original: str, start: int, end: int, new: str, rule: str, generator: str = "rule",
            note: str | None = None) -> Candidate | None:
    """``original`` with ``[start:end]`` replaced by ``new``, tidied (articles, capitals, spaces); None when
    nothing changed."""
    if original[start:start + 1].isupper() and new[:1].islower() and is_sentence_start(original, start):
        new = new[:1].upper() + new[1:]
    text = original[:start] + new + original[end:]
    text = _tidy(text, start + len(new)) if not new.strip() else text
    text = _fix_article(text, start)
    at = start
    while at < len(text) and text[at] in " ,;":
        at += 1
    text = _fix_capital(original, text, at if not new.strip() else start)
    if text == original:
        return None
    return Candidate(text=text, edit=diff_edit(original, text, start, end), rule=rule, generator=generator,
                     note=note)


def finditer_words(pattern: str, text: str, flags: int = re.IGNORECASE) -> Iterator[re.Match]:
    """Matches of ``pattern`` as whole words (not inside a longer word or a hyphenated compound)."""
    return re.finditer(rf"(?<![\w-])(?:{pattern})(?![\w-])", text, flags)


def keep_case(source: str, new: str) -> str:
    """``new`` with the capitalisation of ``source`` (all caps, initial capital, or as given)."""
    if source.isupper() and len(source) > 1:
        return new.upper()
    if source[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


NEAR_CHARS = 40
"""How far either side of an edit the words count as near it (for finding the context sentence it came from)."""


def _best_sentence(context: Sequence[str], *targets: set[str]) -> Evidence | None:
    best, best_score = None, 0.0
    for index, doc in enumerate(context):
        for s, e in sentence_spans(doc):
            pool = set(words(doc[s:e]))
            score = sum(len(t & pool) / len(t) for t in targets if t)
            if score > best_score:
                best, best_score = Evidence(text=doc[s:e], doc_index=index, start=s, end=e), score
    return best


def context_sentence(context: Sequence[str], answer: str, edit: Edit) -> Evidence | None:
    """The context sentence that best supports the answer's sentence around the edit: the share of that sentence's
    content words it holds plus the share of the words near the edit (when the sentence shares no word with the
    context, as "Probably not." does, the whole answer's words decide); None when nothing is shared."""
    start, end = sentence_at(answer, edit.before_start)
    near = answer[max(edit.before_start - NEAR_CHARS, start):min(edit.before_end + NEAR_CHARS, end)]
    found = _best_sentence(context, set(words(answer[start:end])), set(words(near)) | set(words(edit.before)))
    return found if found is not None else _best_sentence(context, set(words(answer)))
