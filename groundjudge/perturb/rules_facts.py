"""Factual Inaccuracies by rule: a number, amount, rate, duration, date, year, ordinal or multiple changed to a
plausible value that the context does not state for the same unit.

Numbers that are references (``Section 12(3)``, ``clause 14.2``, ``Form T-22``, ``Sections 1 and 2``,
``20 U.S.C. § 1232g``, a clause's own number ``2. Upon receipt``), in brackets (``twelve (12)``, ``3 (three)``) or
parts of a fraction (``one and one-half``) are left alone.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from datetime import date, timedelta

from groundjudge.perturb.lexicon import (CURRENCY_WORDS, MONTHS, MULTIPLES, NUMBER_WORDS, ORDINALS, PROCEDURAL,
                                         REASONING, REF_WORDS, UNIT_ALIASES, UNITS)
from groundjudge.perturb.rules_parties import role_candidates
from groundjudge.perturb.rules_terms import conclusion_candidates, swap_candidates, typed
from groundjudge.perturb.spans import finditer_words, keep_case, replace
from groundjudge.perturb.types import Candidate

_WORD_OF = {v: k for k, v in NUMBER_WORDS.items()}
_NUMWORD = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
_UNIT = (r"(?:(?P<adj>working|business|calendar|clear) )?(?P<unit>per cent|percent|per-cent|minutes?|hours?|days?|"
         r"weeks?|months?|years?|" + "|".join(CURRENCY_WORDS) + r")(?![\w-])")
_QUANTITY = re.compile(
    r"(?<![\w.,/(£$€-])(?P<cur>[$€£] ?)?(?P<num>\d{1,3}(?:,\d{3})+|\d+|(?i:" + _NUMWORD + r"))(?![\w(-]|[.,/]\d)"
    r"(?:(?P<pct>%)|(?P<gap> |-)" + _UNIT + r"|(?P<ampm> ?[ap]\.?m\b\.?))?", re.IGNORECASE)
_REF_BEFORE = re.compile(r"(?:\b(?:" + "|".join(REF_WORDS) + r")\.?\s*|\b[A-Z]-?|&\s*)$", re.IGNORECASE)
_HALF_AFTER = re.compile(r"^\s*(?:and\s+(?:a|one)[- ]half|-half|\s*\((?:\d|(?:" + _NUMWORD + r")\b))",
                         re.IGNORECASE)
_CITE_BEFORE = re.compile(r"(?:§|\bU\.?S\.?C\.?|\bC\.?F\.?R\.?)\s*$")
_CITE_AFTER = re.compile(r"^\s+(?:U\.?S\.?C|C\.?F\.?R)\b")
_REF_LIST_BEFORE = re.compile(r"\b(?:" + "|".join(REF_WORDS) + r")\.?\s*\d[\w.()]*(?:\s*(?:,|\band\b|\bor\b|&)\s*"
                              r"\d[\w.()]*)*\s*(?:,\s*(?:and|or)?|\band|\bor|&)\s*$", re.IGNORECASE)
_POINTER_BEFORE = re.compile(r"\b(?:set\s+out\s+in|referred\s+to\s+in|in\s+particular|pursuant\s+to)"
                             r"\s*\(?$", re.IGNORECASE)
_MONTH = "|".join(MONTHS)
_NEXT_TO_MONTH = re.compile(r"^\s+(?:" + _MONTH + r")\b")
_AFTER_MONTH = re.compile(r"\b(?:" + _MONTH + r")\s+$")
_ORDINAL_NOUNS = ("anniversary", "day", "days", "week", "month", "year", "instalment", "installment", "payment",
                  "offence", "offense", "occasion", "breach", "notice", "reminder", "extension", "renewal")
_DATE = re.compile(r"(?<![\w-])(?:(?P<d1>\d{1,2}) )?(?P<month>" + _MONTH + r")(?: (?P<d2>\d{1,2})(?:st|nd|rd|th)?)?"
                   r"(?P<year>,? \d{4})?(?![\w-])")
_NUMERIC_DATE = re.compile(r"(?<![\w/-])(?:(?P<iso>\d{4}-\d{2}-\d{2})|(?P<dmy>\d{1,2}/\d{1,2}/\d{4}))(?![\w/-])")
_YEAR = re.compile(r"(?<![\w.,/(-])(?P<year>1[89]\d\d|20\d\d)(?![\w(-]|[.,/]\d)")


def unit_of(match: re.Match) -> str:
    """The unit a quantity match is counted in: a time unit, 'per cent', 'money', 'time of day', or '' (a count)."""
    if match.group("pct"):
        return "per cent"
    unit = (match.group("unit") or "").lower()
    if match.group("cur") or unit in CURRENCY_WORDS:
        return "money"
    if match.group("ampm"):
        return "time of day"
    return UNIT_ALIASES.get(unit, "")


def number_value(text: str) -> int | None:
    """The integer a digit string (commas allowed) or a number word stands for."""
    low = text.lower().replace(",", "")
    return int(low) if low.isdigit() else NUMBER_WORDS.get(low)


def _is_reference(text: str, start: int, after: str) -> bool:
    """A bare number that names a place, not a quantity: a clause's own number (``2. Upon receipt``), a citation
    (``20 U.S.C. § 1232g``, ``34 C.F.R. § 99``), a later item of a list of references (``Sections 1, 2 and 5``),
    or a clause pointed at without its word (``the undertakings set out in 4``, ``in particular 4``)."""
    before = text[:start].rstrip()
    if re.match(r"[.)](?:\s|$)", after) and (not before or before[-1] in ".;:!?)]" or "\n" in text[len(before):start]):
        return True
    return bool(_CITE_BEFORE.search(text[max(0, start - 8):start]) or _CITE_AFTER.match(after)
                or _REF_LIST_BEFORE.search(text[max(0, start - 80):start])
                or _POINTER_BEFORE.search(text[max(0, start - 30):start]))


def quantities(text: str) -> list[re.Match]:
    """Number matches of a text that are quantities (references, bracketed numbers and fractions left out)."""
    found = []
    for match in _QUANTITY.finditer(text):
        start = match.start("cur") if match.group("cur") else match.start("num")
        after = text[match.end("num"):]
        if (_REF_BEFORE.search(text[max(0, start - 14):start]) or _HALF_AFTER.match(after)
                or _NEXT_TO_MONTH.match(after) or _AFTER_MONTH.search(text[max(0, start - 12):start])):
            continue
        if not (match.group("unit") or match.group("pct") or match.group("cur") or match.group("ampm")) \
                and _is_reference(text, start, after):
            continue
        value = number_value(match.group("num"))
        if value is None or (not match.group("num")[0].isdigit() and value == 1 and not match.group("unit")):
            continue    # "one" alone is a pronoun more often than a number
        if 1800 <= value <= 2100 and not match.group("unit") and not match.group("cur"):
            continue    # a year: see the year rule
        found.append(match)
    return found


def stated_values(context: Sequence[str]) -> dict[str, set[int]]:
    """Every quantity the context states, by unit: the values a changed number must not take."""
    stated: dict[str, set[int]] = {}
    for doc in context:
        for match in quantities(doc):
            stated.setdefault(unit_of(match), set()).add(number_value(match.group("num")))
    return stated


def _pool(value: int, unit: str) -> list[int]:
    if unit in UNITS:
        return list(UNITS[unit])
    if unit == "time of day":
        return list(range(1, 13))
    if unit == "money" or value >= 1000:
        return [v for v in (value * 10, value * 2, value * 5, value // 2, value // 10, value * 3 // 2)
                if v > 0 and v * 10 % 10 == 0]
    if value < 10:
        return sorted({value + 1, value + 2, value + 3, value * 2, max(value - 1, 2)})
    step = 10 ** (len(str(value)) - 1)
    return sorted({value - step, value + step, value * 2, value // 2 if value % 2 == 0 else value * 3})


def new_value(value: int, unit: str, stated: set[int], rng: random.Random, as_word: bool) -> int | None:
    """A plausible value different from ``value`` and from every value in ``stated``: one of the three nearest
    (never 1, so that a plural noun after it stays right)."""
    pool = [v for v in _pool(value, unit) if v != value and v not in stated and v > 1]
    if as_word:
        pool = [v for v in pool if v in _WORD_OF]
    if not pool:
        return None
    pool.sort(key=lambda v: (abs(math.log(v / value)) if value else v, v))
    return rng.choice(pool[:3])


def _format(value: int, like: str) -> str:
    if not like[0].isdigit():
        return keep_case(like, _WORD_OF[value])
    return f"{value:,}" if "," in like or (value >= 10_000 and len(like) > 4) else str(value)


def _quantity_candidate(answer: str, match: re.Match, stated: dict[str, set[int]],
                        rng: random.Random) -> Candidate | None:
    unit = unit_of(match)
    text = match.group("num")
    value = number_value(text)
    unit_text = match.group("unit") or ""
    plural_unit = unit_text.lower().endswith("s") and unit in UNITS
    choice = new_value(value, unit, stated.get(unit, set()), rng, not text[0].isdigit())
    if choice is None:
        return None
    start, end, new = match.start("num"), match.end("num"), _format(choice, text)
    if value == 1 and unit in UNITS and unit_text and not plural_unit and unit != "per cent":
        adjective = match.group("adj") + " " if match.group("adj") else ""
        end, new = match.end("unit"), new + match.group("gap") + adjective + unit_text + "s"
    kind = {"money": "amount", "per cent": "rate", "time of day": "time", "": "number"}.get(unit, "duration")
    return replace(answer, start, end, new, f"factual.{kind}")


def number_candidates(answer: str, context: Sequence[str], rng: random.Random) -> list[Candidate]:
    """Every quantity of the answer changed once: amounts, rates, durations, times of day, counts."""
    stated = stated_values(context)
    out = [_quantity_candidate(answer, m, stated, rng) for m in quantities(answer)]
    return [c for c in out if c is not None]


def _context_text(context: Sequence[str]) -> str:
    return "\n".join(context)


def date_candidates(answer: str, context: Sequence[str], rng: random.Random) -> list[Candidate]:
    """Dates moved: a month name changed (or its day shifted), a numeric date shifted, a year moved by 1-3."""
    joined = _context_text(context)
    out: list[Candidate] = []
    for match in _DATE.finditer(answer):
        day = match.group("d1") or match.group("d2")
        if match.group("month") == "May" and not (day or match.group("year")):
            continue    # the modal verb
        months = [m for m in MONTHS if m != match.group("month")]
        index = MONTHS.index(match.group("month"))
        near = [m for m in months if abs(MONTHS.index(m) - index) <= 2]
        for month in rng.sample(near, len(near)):
            new = match.group().replace(match.group("month"), month)
            if new not in joined:
                out.append(replace(answer, match.start("month"), match.end("month"), month, "factual.date"))
                break
    for match in _NUMERIC_DATE.finditer(answer):
        text = match.group()
        try:
            if match.group("iso"):
                old = date.fromisoformat(text)
            else:
                d, m, y = map(int, text.split("/"))
                old = date(y, m, d)
        except ValueError:
            continue
        moved = old + timedelta(days=rng.choice((-30, -14, -7, 7, 14, 30, 45)))
        if match.group("iso"):
            new = moved.isoformat()
        elif text[0] == "0" or "/0" in text:
            new = moved.strftime("%d/%m/%Y")
        else:
            new = f"{moved.day}/{moved.month}/{moved.year}"
        if new not in joined:
            out.append(replace(answer, match.start(), match.end(), new, "factual.date"))
    stated = {int(m.group("year")) for m in _YEAR.finditer(joined)}
    for match in _YEAR.finditer(answer):
        year = int(match.group("year"))
        options = [year + d for d in (-3, -2, -1, 1, 2, 3) if year + d not in stated]
        if options:
            out.append(replace(answer, match.start(), match.end(), str(rng.choice(options)), "factual.year"))
    return [c for c in out if c is not None]


def ordinal_candidates(answer: str, context: Sequence[str], rng: random.Random) -> list[Candidate]:
    """An ordinal word (the fifteenth anniversary) or a multiple (twice, double) changed."""
    joined = _context_text(context).lower()
    out: list[Candidate] = []
    for match in finditer_words("|".join(ORDINALS[1:]), answer):
        following = re.match(r"\W+(\w+)", answer[match.end():])
        if not following or following.group(1).lower() not in _ORDINAL_NOUNS:
            continue
        index = ORDINALS.index(match.group().lower())
        options = [o for o in ORDINALS[1:] if o != ORDINALS[index] and abs(ORDINALS.index(o) - index) <= 5
                   and not re.search(rf"\b{o}\b", joined)]
        if options:
            out.append(replace(answer, match.start(), match.end(), keep_case(match.group(), rng.choice(options)),
                               "factual.ordinal"))
    for match in finditer_words("|".join(MULTIPLES), answer):
        word = match.group().lower()
        options = [m for m in MULTIPLES if m != word and m != "half"
                   and (m in ("double", "triple")) == (word in ("double", "triple"))]
        if options and word != "half":
            out.append(replace(answer, match.start(), match.end(), keep_case(match.group(), rng.choice(options)),
                               "factual.multiple"))
    return [c for c in out if c is not None]


def factual_candidates(answer: str, context: Sequence[str], rng: random.Random) -> list[Candidate]:
    """Every factual edit the rules can make to the answer (one candidate per place), with the swaps the taxonomy's
    rulings make factual: before/after that moves a period's anchor or a time in a kept condition, the form of what
    is covered (oral statements), received/sent naming which information, a party that is not the one said to
    hold, owe, do or say the thing, the other of two values the documents name, a stated point negated."""
    return (number_candidates(answer, context, rng) + date_candidates(answer, context, rng)
            + ordinal_candidates(answer, context, rng)
            + typed("factual", swap_candidates(answer, PROCEDURAL) + swap_candidates(answer, REASONING)
                    + role_candidates(answer, context, rng) + conclusion_candidates(answer, context)))
