"""Grounded controls by rule: meaning-preserving rewrites of one place of the answer (number words <-> digits,
"within N days of/after" <-> "no later than N days after", date formats, "per cent" <-> "percent", "twice" <->
"two times").

Each paraphrase, like each variant, carries exactly one edit: a judge that flags any change at all then loses on
the controls what it gains on the variants, and balanced accuracy shows it. Modal swaps (must <-> shall) are left
out on purpose: they do not preserve the meaning in every context.
"""

from __future__ import annotations

import re
from datetime import date

from groundjudge.perturb.lexicon import MONTHS, NUMBER_WORDS
from groundjudge.perturb.rules_facts import number_value, quantities, unit_of
from groundjudge.perturb.spans import finditer_words, keep_case, replace
from groundjudge.perturb.types import Candidate

_ONES = {v: k for k, v in NUMBER_WORDS.items() if v < 20}
_TENS = {v: k for k, v in NUMBER_WORDS.items() if v >= 20}
_WITHIN = re.compile(r"(?<![\w-])(?P<within>[Ww]ithin) (?P<amount>(?:\w+|\d+) (?:working |business |calendar )?"
                     r"(?:minutes?|hours?|days?|weeks?|months?|years?)) (?P<link>of|after|from)\b")
_NO_LATER = re.compile(r"(?<![\w-])(?P<phrase>[Nn]o later than) (?P<amount>(?:\w+|\d+) (?:working |business |"
                       r"calendar )?(?:minutes?|hours?|days?|weeks?|months?|years?)) after\b")
_MONTH = "|".join(MONTHS)
_DAY_MONTH = re.compile(r"(?<![\w-])(?P<day>\d{1,2}) (?P<month>" + _MONTH + r")(?: (?P<year>\d{4}))?(?![\w-])")
_MONTH_DAY = re.compile(r"(?<![\w-])(?P<month>" + _MONTH + r") (?P<day>\d{1,2})(?:, (?P<year>\d{4}))?(?![\w-])")
_ISO = re.compile(r"(?<![\w/-])(\d{4})-(\d{2})-(\d{2})(?![\w/-])")


def number_words(value: int) -> str | None:
    """``value`` (1-99) in words: 21 -> 'twenty-one'; None outside that range."""
    if 0 < value < 20:
        return _ONES[value]
    if 20 <= value < 100:
        tens, ones = divmod(value, 10)
        return _TENS[tens * 10] + (f"-{_ONES[ones]}" if ones else "")
    return None


def number_candidates(answer: str) -> list[Candidate]:
    """A counted quantity (days, years, per cent) written the other way: digits as words or words as digits."""
    out = []
    for match in quantities(answer):
        unit = unit_of(match)
        if unit in ("", "money", "time of day") or match.group("pct"):
            continue
        text = match.group("num")
        value = number_value(text)
        if text[0].isdigit():
            words = number_words(value)
            if words is None or "," in text:
                continue
            new = words
        else:
            new = str(value)
        out.append(replace(answer, match.start("num"), match.end("num"), new, "paraphrase.number_form"))
    return [c for c in out if c is not None]


def deadline_candidates(answer: str) -> list[Candidate]:
    """"within N days of/after X" <-> "no later than N days after X"."""
    out = []
    for match in _WITHIN.finditer(answer):
        new = keep_case(match.group("within"), "no later than") + f" {match.group('amount')} after"
        out.append(replace(answer, match.start(), match.end(), new, "paraphrase.deadline"))
    for match in _NO_LATER.finditer(answer):
        new = keep_case(match.group("phrase"), "within") + f" {match.group('amount')} after"
        out.append(replace(answer, match.start(), match.end(), new, "paraphrase.deadline"))
    return [c for c in out if c is not None]


def date_candidates(answer: str) -> list[Candidate]:
    """A date in another format: '1 May 2024' <-> 'May 1, 2024', '2024-05-01' -> '1 May 2024'."""
    out = []
    for match in _DAY_MONTH.finditer(answer):
        year = f", {match.group('year')}" if match.group("year") else ""
        out.append(replace(answer, match.start(), match.end(), f"{match.group('month')} {match.group('day')}{year}",
                           "paraphrase.date_format"))
    for match in _MONTH_DAY.finditer(answer):
        year = f" {match.group('year')}" if match.group("year") else ""
        out.append(replace(answer, match.start(), match.end(), f"{match.group('day')} {match.group('month')}{year}",
                           "paraphrase.date_format"))
    for match in _ISO.finditer(answer):
        try:
            day = date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
        except ValueError:
            continue
        out.append(replace(answer, match.start(), match.end(), f"{day.day} {MONTHS[day.month - 1]} {day.year}",
                           "paraphrase.date_format"))
    return [c for c in out if c is not None]


def spelling_candidates(answer: str) -> list[Candidate]:
    """Spellings of one meaning: 'per cent' <-> 'percent', 'twice' <-> 'two times'."""
    out = []
    for old, new in (("per cent", "percent"), ("percent", "per cent"), ("twice", "two times"),
                     ("two times", "twice")):
        for match in finditer_words(re.escape(old).replace(r"\ ", r"\s+"), answer):
            out.append(replace(answer, match.start(), match.end(), keep_case(match.group(), new),
                               "paraphrase.spelling"))
    return [c for c in out if c is not None]


def paraphrase_candidates(answer: str) -> list[Candidate]:
    """Every meaning-preserving rewrite the rules can make to the answer (one place each)."""
    return number_candidates(answer) + deadline_candidates(answer) + date_candidates(answer) \
        + spelling_candidates(answer)
