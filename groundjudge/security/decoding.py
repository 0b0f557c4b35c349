"""Instructions hidden in an encoding (style ``encoded_instruction``).

Runs of base64, hex, percent-encoding (URL) and escapes (``\\u0069``, ``\\x69``, ``&#105;``) are decoded, and a
run whose decoded text is readable and sets off a rule (English or another language) is a finding, with the
decoded text in ``decoded``. Text in ROT13 or written backwards has no tell-tale alphabet, so the whole text is
rotated (and reversed) and the rules run on that: both keep offsets, and ordinary prose turned into gibberish sets
off no rule. A decoded text is decoded again once (base64 inside hex and the like).

An encoded payload travels with a lead-in that tells the reader what to do with it ("Verification token
(base64): ...", "Decode with ROT13: ..."), and the lead-in is part of the attack: a finding covers the whole
sentence that carries the payload, so cutting the finding cuts the lead-in too.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
from collections.abc import Callable
from urllib.parse import unquote_plus

from groundjudge.security import languages, rules, spans
from groundjudge.security.rules import Hit

MIN_DECODED = 6
"""Decoded text shorter than this is not read."""

_B64 = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/_\-]{16,}={0,2}(?![A-Za-z0-9+/=_\-])")
_HEX = re.compile(r"(?<![0-9A-Za-z])(?:0x)?(?:[0-9A-Fa-f]{2}[ :,\-]?){8,}(?![0-9A-Za-z])")
_URL = re.compile(r"(?<![A-Za-z0-9._~!*'()+\-%])(?:[A-Za-z0-9._~!*'()+\-]*%[0-9A-Fa-f]{2}){3,}[A-Za-z0-9._~!*'()+\-]*")
_ESCAPES = re.compile(r"(?:\\u[0-9A-Fa-f]{4}|\\x[0-9A-Fa-f]{2}|&#[xX][0-9A-Fa-f]{1,6};|&#\d{1,7};){6,}")


def printable(text: str) -> bool:
    """Whether nearly all of ``text`` is printable (decoded text worth decoding again)."""
    return sum(ch.isprintable() or ch in "\n\t" for ch in text) >= 0.95 * len(text)


def readable(text: str | None) -> bool:
    """Whether decoded text reads as text: long enough, nearly all printable, with letters and spaces."""
    if text is None or len(text) < MIN_DECODED:
        return False
    letters = sum(ch.isalpha() for ch in text)
    return printable(text) and letters >= 0.5 * len(text.replace(" ", "")) and (
        " " in text.strip() or any(ord(ch) > 0x2E80 for ch in text))


def _utf8(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def decode_base64(run: str) -> str | None:
    """A base64 (standard or URL-safe, padded or not) run decoded as UTF-8, or None."""
    body = run.rstrip("=")
    if not (re.search(r"[A-Z]", body) and re.search(r"[a-z]", body)) and not re.search(r"\d", body):
        return None
    if len(body) % 4 == 1:
        body = body[:-1]
    body += "=" * (-len(body) % 4)
    try:
        if "-" in body or "_" in body:
            raw = base64.urlsafe_b64decode(body)
        else:
            raw = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        return None
    return _utf8(raw)


def decode_hex(run: str) -> str | None:
    """A run of hex byte pairs (optionally separated) decoded as UTF-8, or None."""
    digits = re.sub(r"[^0-9A-Fa-f]", "", run[2:] if run.lower().startswith("0x") else run)
    if len(digits) % 2:
        digits = digits[:-1]
    try:
        return _utf8(bytes.fromhex(digits))
    except ValueError:
        return None


def decode_url(run: str) -> str | None:
    """A percent-encoded run decoded."""
    return unquote_plus(run)


def decode_escapes(run: str) -> str | None:
    """A run of \\u / \\x escapes or HTML character references decoded."""
    if "&#" in run:
        return html.unescape(run)
    try:
        return codecs.decode(run, "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return None


DECODERS: tuple[tuple[str, re.Pattern[str], Callable[[str], str | None]], ...] = (
    ("base64", _B64, decode_base64),
    ("hex", _HEX, decode_hex),
    ("url", _URL, decode_url),
    ("escapes", _ESCAPES, decode_escapes),
)
"""(name, what a run looks like, how to decode it)."""


def plain_hits(text: str) -> list[Hit]:
    """The rules that read plain text: English and every other language."""
    return rules.find(text) + languages.find(text)


def _runs(text: str, depth: int) -> list[Hit]:
    hits = []
    for name, pattern, decoder in DECODERS:
        for m in pattern.finditer(text):
            decoded = decoder(m.group())
            if decoded is None or decoded == m.group() or not printable(decoded):
                continue
            inner = plain_hits(decoded) if readable(decoded) else []
            if not inner and depth > 0:
                inner = _runs(decoded, depth - 1)
            if inner:
                first = min(inner, key=lambda h: h.start)
                hits.append(Hit("encoded_instruction", m.start(), m.end(), f"encoded_instruction.{name}:{first.rule}",
                                decoded=decoded))
    return hits


def rot13_hits(text: str) -> list[Hit]:
    """Rule hits in the text read in ROT13 (same offsets)."""
    rotated = codecs.encode(text, "rot13")
    return [Hit("encoded_instruction", h.start, h.end, f"encoded_instruction.rot13:{h.rule}",
                decoded=rotated[h.start:h.end]) for h in rules.find(rotated)]


def reversed_hits(text: str) -> list[Hit]:
    """Rule hits in the text read backwards (offsets mapped back)."""
    backwards = text[::-1]
    n = len(text)
    return [Hit("encoded_instruction", n - h.end, n - h.start, f"encoded_instruction.reversed:{h.rule}",
                decoded=backwards[h.start:h.end]) for h in rules.find(backwards)]


def carrier(text: str, hit: Hit) -> Hit:
    """``hit`` widened to the sentence that carries it: the payload's lead-in and its closing marks included."""
    start, end = spans.trim(text, *spans.extend(text, hit.start, hit.end, "sentence"))
    return Hit(hit.style, start, end, hit.rule, decoded=hit.decoded)


def find(text: str, depth: int = 1) -> list[Hit]:
    """Every encoded instruction in ``text``: decoded runs (and, up to ``depth`` more times, runs inside them)
    that set off a rule, and ROT13 or reversed text that does; each span covers the sentence carrying it."""
    return [carrier(text, h) for h in _runs(text, depth) + rot13_hits(text) + reversed_hits(text)]
