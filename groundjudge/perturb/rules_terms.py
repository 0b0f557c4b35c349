"""Rule generators for words that carry the law: terms of art and modals (Terminological Errors), steps, order,
forum and form of notice (Procedural Errors), conditions, exceptions and qualifiers dropped (Contextual
Misinterpretations), and conclusions that the premises do not give (Reasoning Errors)."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from functools import lru_cache

from groundjudge.perturb.guards import (comparison_rule, form_rule, order_rule, scope_rule, swap_blocked,
                                       trigger_rule)
from groundjudge.perturb.lexicon import (CONTEXTUAL, EXCEPTION_WORDS, PROCEDURAL, QUALIFIERS, REASONING,
                                         TERMINOLOGICAL, Swap)
from groundjudge.perturb.rules_parties import institution_candidates
from groundjudge.perturb.spans import finditer_words, keep_case, replace, sentence_at, words
from groundjudge.perturb.types import Candidate
from groundjudge.text import sentence_spans

_MODAL_BEFORE = re.compile(r"\b(?:can|cannot|may|must|shall|will|would|to|could|should)\s+$", re.IGNORECASE)
_BEFORE_A_BODY = re.compile(r"^\s+(?:a|an|the)\s+(?:[\w-]+\s+){0,3}?(?:judge|court|tribunal|justice|magistrate|"
                            r"registrar|board|panel|arbitrator)\b", re.IGNORECASE)
_AUX = ("is", "are", "was", "were", "can", "will", "would", "should", "could", "must", "may", "shall", "has", "have",
        "had")
_ADVERBS = ("therefore", "probably", "likely", "also", "still", "then", "thus", "generally", "usually", "already",
            "now", "clearly", "automatically", "only", "instead", "always")
_CONNECTIVES = re.compile(r"[,;]\s*(?P<word>so(?!\s+(?:that|long|far)\b)|therefore|thus|hence|consequently|"
                          r"accordingly|which means)\s+|\b(?P<inner>therefore|thus|hence|consequently|accordingly)\b",
                          re.IGNORECASE)
_SUBORDINATE = re.compile(r"(?:if|where|when|once|unless|although|though|while|even if|provided)\b", re.IGNORECASE)
_PARTICIPLE = re.compile(r"(?:ed|en)$|^(?:been|done|made|paid|kept|held|sent|brought|found|lost|left|got|told|spent|"
                         r"set|put|let|met|won|read|shown|known|given|taken|had)$", re.IGNORECASE)
_COORDINATED = re.compile(r"\b(?:and|or|nor)\s+$", re.IGNORECASE)
_COPULA = re.compile(r"\b(?:is|are|was|were|be|been|being|seems?|appears?|remains?)\s+$", re.IGNORECASE)
_RECEIVE_SEND = ("receive", "receives", "received", "receiving", "send", "sends", "sent", "sending")
_DEONTIC = ("shall", "must", "may", "need")
_LIST_MARKER = re.compile(r"^\s*(?:\(?[0-9ivxlcdm]{1,6}\)|[0-9]+(?:\.[0-9]+)*\.?|\(?[a-z]\)|[a-z]\.)\s*$", re.IGNORECASE)
_BODY_NOUN = re.compile(r"\s+(?:authority|authorities|court|courts|officer|officers|body|bodies|party|parties|"
                        r"person|persons|tribunal|agency)\b", re.IGNORECASE)
TYPE_PREFIX: dict[str, str] = {"factual": "factual.", "contextual": "contextual.", "procedural": "procedure.",
                               "reasoning": "reasoning.", "misattribution": "misattribution.",
                               "terminological": "terms."}
"""The rule-name prefix of each type slug: a rule that can make more than one type names the one it made."""
RETYPED: dict[str, object] = {"procedure.order": order_rule, "procedure.notice_form": form_rule,
                               "procedure.trigger": trigger_rule, "reasoning.comparison": comparison_rule,
                               "terms.scope": scope_rule}
"""Swap rules whose type depends on what surrounds the swapped words: rule -> the function that names the rule (and
so the type) of one place (``guards``; the taxonomy's rulings)."""
VERB_WINDOW = 8
"""A consequence's verb is looked for in its first this many words (further on it is a clause inside it)."""


@lru_cache(maxsize=16)
def _swap_table(swaps: tuple[Swap, ...]) -> tuple[re.Pattern, dict[str, tuple[str, str]]]:
    table: dict[str, tuple[str, str]] = {}
    for phrase, replacement, rule in swaps:
        table.setdefault(phrase.lower(), (replacement, rule))
    pattern = re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(p).replace(r"\ ", r"\s+")
                                                    for p in sorted(table, key=len, reverse=True)) + r")(?![\w-])",
                         re.IGNORECASE)
    return pattern, table


def _blocked(answer: str, match: re.Match) -> bool:
    """Matches a swap must not touch: May the month, void the verb, 'before' a court (a place, not a time), the
    receiving party (a role), 'received from' (a direction, not a trigger), 'including without limitation', and the
    'shall' of a definition."""
    word = match.group()
    low = word.lower()
    if low == "may" and (word == "May" and not _sentence_initial(answer, match.start())
                         or re.match(r"\s+\d", answer[match.end():]) or re.search(r"\d\s+$", answer[:match.start()])):
        return True
    if low in ("void", "credit") and _MODAL_BEFORE.search(answer[:match.start()]):
        return True     # the verb
    if word[0].isupper() and (re.match(r"\s+[A-Z]", answer[match.end():]) or not _sentence_initial(answer,
                                                                                       match.start())):
        return True     # part of a name or a defined term: "Receiving Party", "the Tribunal's Written Reasons"
    after = answer[match.end():]
    if low in ("receiving", "sending") and re.match(r"\s+part(?:y|ies)\b", after, re.IGNORECASE):
        return True     # a party's role ("the receiving party"): a misattribution, not a procedural step
    if low in _RECEIVE_SEND and re.match(r"(?:\s+[^\s,;.]+){0,6}?\s+from\b", after, re.IGNORECASE):
        return True     # "received from X" -> "sent from X" says the same, "sent by Y from X" nothing
    if low == "including" and re.match(r"[\s,]+(?:without limitation|but not limited)\b", after, re.IGNORECASE):
        return True     # "excluding without limitation" is not English
    if low in ("shall", "must") and re.match(r"\s+(?:mean|means|include|includes)\b", after, re.IGNORECASE):
        return True     # a definition ("shall mean") has no modality to change
    return low == "before" and _BEFORE_A_BODY.match(after) is not None


def _sentence_initial(answer: str, offset: int) -> bool:
    return sentence_at(answer, offset)[0] == offset


def swap_candidates(answer: str, swaps: tuple[Swap, ...]) -> list[Candidate]:
    """Every place where a phrase of ``swaps`` occurs, swapped (one candidate per place)."""
    pattern, table = _swap_table(swaps)
    out = []
    for match in pattern.finditer(answer):
        if _blocked(answer, match):
            continue
        replacement, rule = table[re.sub(r"\s+", " ", match.group().lower())]
        if swap_blocked(answer, match.start(), match.end(), replacement, rule):
            continue
        if rule in RETYPED:
            rule = RETYPED[rule](answer, match.start(), match.end())
        out.append(replace(answer, match.start(), match.end(), keep_case(match.group(), replacement), rule))
    return [c for c in out if c is not None]


def typed(slug: str, candidates: list[Candidate]) -> list[Candidate]:
    """The candidates whose rule makes type ``slug`` (a before/after swap can be Procedural, Factual or
    Contextual; an institution swap Procedural or a Misattribution; a party swap a Misattribution or Factual)."""
    return [c for c in candidates if c.rule.startswith(TYPE_PREFIX[slug])]


def terminological_candidates(answer: str, context: Sequence[str], rng: random.Random) -> list[Candidate]:
    """A modal or term of art swapped for its neighbour in the legal lexicon (shall/may, void/voidable, ...); not
    express/implied before a step noun (the form of consent: Procedural)."""
    return typed("terminological", swap_candidates(answer, TERMINOLOGICAL))


def procedural_candidates(answer: str, context: Sequence[str], rng: random.Random) -> list[Candidate]:
    """A step, deadline mechanics, trigger, forum, form of notice or consent or the body to file with swapped (in
    writing/orally, no later/earlier than, arbitration/..., express/implied permission, the Revenue Agency/the Tax
    Tribunal, the earlier of/the later of)."""
    return typed("procedural", swap_candidates(answer, PROCEDURAL) + institution_candidates(answer, context, rng)
                 + swap_candidates(answer, REASONING) + swap_candidates(answer, TERMINOLOGICAL))


def _clause_end(answer: str, start: int, sentence_end: int) -> int:
    """Where the clause running from ``start`` ends: a semicolon, else the sentence's final punctuation."""
    semicolon = answer.find(";", start, sentence_end)
    end = semicolon if semicolon >= 0 else sentence_end
    while end > start and answer[end - 1] in ".!?":
        end -= 1
    return end


def exception_candidates(answer: str) -> list[Candidate]:
    """A condition or exception clause (unless, except, provided that, subject to, ...) dropped."""
    out = []
    for match in finditer_words("|".join(re.escape(w).replace(r"\ ", r"\s+") for w in EXCEPTION_WORDS), answer):
        s, e = sentence_at(answer, match.start())
        if _LIST_MARKER.match(answer[s:match.start()]):
            s = match.start()       # "2. Except as set forth ..., all ...": the clause opens after its number
        if match.start() == s:
            comma = answer.find(", ", match.end(), e)
            if comma < 0:
                continue
            if not _exception_blocked(answer, s, comma + 2):
                out.append(replace(answer, s, comma + 2, "", "contextual.exception"))
            continue
        start = match.start()
        lead = re.search(r",?\s*$", answer[s:start])
        start = s + lead.start() if lead else start
        comma = answer.find(",", match.end(), e)
        parenthetical = answer[start:match.start()].startswith(",") and comma >= 0 and \
            match.group().lower() in ("subject to", "save that")
        end = comma + 1 if parenthetical else _clause_end(answer, match.end(), e)
        if not _exception_blocked(answer, start, end):
            out.append(replace(answer, start, end, "", "contextual.exception"))
    return [c for c in out if c is not None]


def _exception_blocked(answer: str, start: int, end: int) -> bool:
    """Whether dropping ``answer[start:end]`` leaves no error or a broken sentence: a lead-in or a list ("subject
    to the following conditions:"), the complement of a verb ("is not subject to ...", "shall be subject to ..."),
    a whole sentence, or the answer's unpunctuated end (an excerpt that stops there reads as complete)."""
    dropped = answer[start:end]
    if ":" in dropped or ";" in dropped:
        return True
    if not answer[end:].strip():
        return True     # the answer ends with it, unpunctuated: the variant ends where an excerpt could (round 3)
    if re.search(r"\b(?:is|are|was|were|be|been|being|not|remain|remains)\s*$", answer[:start], re.IGNORECASE):
        return True
    s, e = sentence_at(answer, start)
    rest = (answer[s:start] + answer[end:e]).strip(" .,;")
    return len(rest.split()) < 4


def qualifier_candidates(answer: str) -> list[Candidate]:
    """A qualifier removed (reasonable, material, only, generally, where feasible, ...): the rule gets wider."""
    out = []
    for match in finditer_words("|".join(re.escape(q).replace(r"\ ", r"\s+") for q in QUALIFIERS), answer):
        start, end = match.start(), match.end()
        adjective = not match.group().lower().endswith("ly") and " " not in match.group()
        if adjective and (not re.match(r" [a-z]", answer[end:end + 2]) or re.match(r" (?:and|or|but|to)\b",
                                                                                   answer[end:end + 5])
                          or _COORDINATED.search(answer[:start]) or _COPULA.search(answer[:start])):
            continue    # predicative or coordinated: removing it breaks the sentence
        if re.search(r"\bthan\s+(?:a\s+|an\s+)?$", answer[:start], re.IGNORECASE):
            continue    # "no less than reasonable efforts" -> "no less than efforts" is not English
        if match.group()[0].isupper() and start > sentence_at(answer, start)[0]:
            continue    # part of a defined term: "the Evaluation Material"
        if match.group().lower() == "proper" and _BODY_NOUN.match(answer[end:]):
            continue    # "the proper authority" names the body, it does not qualify a rule
        if answer[max(0, start - 2):start] == ", " and answer[end:end + 1] == ",":
            start, end = start - 2, end + 1     # ", where feasible," goes with its commas
        elif answer[end:end + 1] == " ":
            end += 1
        elif answer[start - 1:start] == " ":
            start -= 1
        out.append(replace(answer, start, end, "", "contextual.qualifier"))
    for match in finditer_words("only", answer):
        if re.search(r"\b(?:not|the|an|one|if|one's)\s+$", answer[:match.start()], re.IGNORECASE):
            continue
        end = match.end() + 1 if answer[match.end():match.end() + 1] == " " else match.end()
        out.append(replace(answer, match.start(), end, "", "contextual.only"))
    return [c for c in out if c is not None]


def contextual_candidates(answer: str, context: Sequence[str], rng: random.Random) -> list[Candidate]:
    """Every contextual edit: an exception dropped, a qualifier or 'only' removed, a scope inverted (including ->
    excluding), a before/after that says what a rule covers swapped, a condition stated as a fact ('If X, Y' ->
    'Because X, Y': the rule applied outside its condition, as blind readers typed it)."""
    out = exception_candidates(answer) + qualifier_candidates(answer) + swap_candidates(answer, CONTEXTUAL)
    out += typed("contextual", swap_candidates(answer, PROCEDURAL))
    for start, end in sentence_spans(answer):
        if re.match(r"If\s", answer[start:end]) and "," in answer[start:end]:
            out.append(replace(answer, start, start + 2, "Because", "contextual.conditional_as_fact"))
    return [c for c in out if c is not None]


def negate(text: str) -> tuple[int, int, str] | None:
    """The first verb group of ``text`` negated (or its negation removed): (start, end, replacement)."""
    adverbs = r"(?:\s+(?:" + "|".join(_ADVERBS) + r"))*"
    pattern = re.compile(r"\bcannot\b|\bcan no longer\b|\bno longer\b|\bneed not\b|\b(?:" + "|".join(_AUX)
                         + r"|does|do|did)(?:" + adverbs + r"\s+not\b|n't\b)|\b(?:" + "|".join(_AUX) + r")\b",
                         re.IGNORECASE)
    found = next((m for m in pattern.finditer(text)
                  if len(text[:m.start()].split()) < VERB_WINDOW
                  and not re.search(r"\b(?:that|who|which|whom|whose)\s+(?:\S+\s+){0,2}$", text[:m.start()])), None)
    if found is None:
        return None
    word = found.group()
    low = word.lower()
    if low.split()[0] in _DEONTIC:
        return None     # "shall not destroy", "may not extend": a duty or a permission changed, not a conclusion
    if low == "cannot":
        return found.start(), found.end(), keep_case(word, "can")
    if low in ("can no longer", "no longer"):
        return found.start(), found.end(), keep_case(word, low.replace("no longer", "still"))
    if low == "need not":
        return found.start(), found.end(), keep_case(word, "must")
    if low.endswith(" not") or low.endswith("n't"):
        if low.startswith(("do", "did")):
            return _undo_support(text, found)
        if low.endswith("n't"):
            return found.start(), found.end(), word[:-3]
        return found.start() + len(word) - 4, found.end(), ""
    rest = text[found.end():]
    adverbs = re.match(r"(?:\s+(?:" + "|".join(_ADVERBS) + r"))*", rest, re.IGNORECASE)
    at = found.end() + adverbs.end()
    following = re.match(r"\s+(\w+)", text[at:])
    if low in ("has", "have", "had") and not (following and _PARTICIPLE.search(following.group(1))):
        return None
    if low == "can" and at == found.end():
        return found.start(), found.end(), keep_case(word, "cannot")
    return at, at, " not"


def _third_person(verb: str) -> str | None:
    """The third person singular of a regular base verb ("help" -> "helps", "apply" -> "applies"); None for "be"."""
    low = verb.lower()
    if low == "be" or not low.isalpha():
        return None
    if low == "have":
        return keep_case(verb, "has")
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + ("es" if re.search(r"(?:s|sh|ch|x|z|o)$", low) else "s")


def _undo_support(text: str, found: re.Match) -> tuple[int, int, str] | None:
    """"does not help" -> "helps", "do not need" -> "need": a negation with "do" removed (the verb inflected);
    None for "did not" (the past tense of an irregular verb cannot be made by rule) or no verb after it."""
    low = found.group().lower()
    verb = re.match(r"\s+([a-z]+)\b", text[found.end():])
    if low.startswith("did") or verb is None or verb.group(1) in _AUX + ("not", "be", "to"):
        return None
    base = verb.group(1)
    new = _third_person(base) if low.startswith("does") else base
    if new is None:
        return None
    return found.start(), found.end() + verb.end(), keep_case(found.group().split()[0], new)


def consequence(answer: str, start: int, end: int) -> tuple[int, int] | None:
    """The span of a sentence's consequence: after 'Because ...,', after 'so/therefore', the clause holding an
    inner 'therefore', or before a mid-sentence 'because/since'; None when the sentence draws no conclusion."""
    text = answer[start:end]
    span = _consequence(answer, start, end)
    if span is None:
        return None
    head = answer[span[0]:span[1]]
    if _SUBORDINATE.match(head):
        comma = head.find(", ")
        return (span[0] + comma + 2, span[1]) if comma >= 0 else None
    return span


def _consequence(answer: str, start: int, end: int) -> tuple[int, int] | None:
    text = answer[start:end]
    lead = re.match(r"(?:Because|Since|As)\b[^,]*,\s*", text)
    if lead:
        return start + lead.end(), _clause_end(answer, start + lead.end(), end)
    found = _CONNECTIVES.search(text)
    if found and found.group("word"):
        return start + found.end(), _clause_end(answer, start + found.end(), end)
    if found:
        clause_start = max(text.rfind(",", 0, found.start()), text.rfind(";", 0, found.start())) + 1
        return start + clause_start, _clause_end(answer, start + found.end(), end)
    cause = re.search(r",?\s+(?:because|since)\s", text)
    if cause and cause.start() > 0:
        clause_start = text.rfind(";", 0, cause.start()) + 1
        return start + clause_start, start + cause.start()
    return None


STATED_SHARE = 0.8
"""A consequence is stated by the documents when one context sentence holds this share of its content words."""


def stated(text: str, context: Sequence[str]) -> bool:
    """Whether one sentence of the context holds at least :data:`STATED_SHARE` of ``text``'s content words (the
    documents state that point themselves)."""
    mine = set(words(text))
    if not mine:
        return False
    for doc in context:
        for s, e in sentence_spans(doc):
            if len(mine & set(words(doc[s:e]))) >= STATED_SHARE * len(mine):
                return True
    return False


def conclusion_candidates(answer: str, context: Sequence[str]) -> list[Candidate]:
    """Every consequence negated, the rule naming its type by the taxonomy's ruling: ``factual.negated`` when the
    documents state the consequence themselves (the answer now says the opposite of what they state),
    ``reasoning.negated_consequence`` when the answer drew it."""
    out = []
    for start, end in sentence_spans(answer):
        span = consequence(answer, start, end)
        if span is not None:
            edit = negate(answer[span[0]:span[1]])
            if edit is not None:
                rule = "factual.negated" if stated(answer[span[0]:span[1]], context) \
                    else "reasoning.negated_consequence"
                out.append(replace(answer, span[0] + edit[0], span[0] + edit[1], edit[2], rule))
    return [c for c in out if c is not None]


def reasoning_candidates(answer: str, context: Sequence[str], rng: random.Random) -> list[Candidate]:
    """A conclusion the premises do not give: a consequence the answer drew (one the documents do not state
    themselves) negated."""
    return typed("reasoning", conclusion_candidates(answer, context) + swap_candidates(answer, REASONING))
