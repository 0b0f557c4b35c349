"""Misattributions by rule: an actor, court, authority, party or section named in the answer swapped for another
one that the same document names (``the Receiving Party`` <-> ``the Disclosing Party``, ``Landlord`` <-> ``Tenant``,
``High Court`` <-> ``Court of Appeal``, ``Section 12(3)`` <-> ``Section 12(4)``). Nothing fires when the document
names no second one."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from groundjudge.perturb.guards import institution_rule, party_rule, section_attributed
from groundjudge.perturb.lexicon import INSTITUTION_HEADS, ROLE_FAMILIES
from groundjudge.perturb.spans import finditer_words, keep_case, replace, sentence_at
from groundjudge.perturb.types import Candidate

_ROLES = sorted({r for family in ROLE_FAMILIES for r in family}, key=len, reverse=True)
_ROLE = re.compile(r"(?<![\w-])(?P<role>" + "|".join(re.escape(r).replace(r"\ ", r"\s+") for r in _ROLES)
                   + r")(?P<suffix>s|'s|s')?(?![\w-])", re.IGNORECASE)
_NAME = re.compile(r"(?<![\w'’-])[A-Z][\w-]*(?:(?:\s+(?:of|for|and|on|the)){0,2}\s+[A-Z][\w-]*)*")
_DEFINED = re.compile(r"\(\s*(?:the\s+)?[\"'“‘](?P<term>[A-Z][\w -]{1,40}?)[\"'”’]\s*\)")
_NAME_BEFORE = re.compile(r"(?P<name>[A-Z][\w.&-]*(?:\s+[A-Z][\w.&-]*){0,5})\s*,?\s*$")
_BETWEEN = re.compile(r"\bbetween\s+(?P<a>[A-Z][\w.&-]*(?:\s+[A-Z][\w.&-]*){0,4})\s+and\s+"
                      r"(?P<b>[A-Z][\w.&-]*(?:\s+[A-Z][\w.&-]*){0,4})")
_VERSUS = re.compile(r"(?P<a>[A-Z][\w.&-]*(?:\s+[A-Z][\w.&-]*){0,3})\s+v\.?\s+"
                     r"(?P<b>[A-Z][\w&-]*(?:\s+[A-Z][\w&-]*){0,3})")
_REF = re.compile(r"(?<![\w-])(?P<word>Section|Article|Clause|Rule|Regulation|Paragraph|section|article|clause|rule|"
                  r"regulation|paragraph|s\.)\s*(?P<num>\d+[A-Za-z]?(?:\.\d+)*)(?P<subs>(?:\(\w{1,4}\))*)")
_SUB = re.compile(r"\((\d{1,3}|[a-z]{1,3})\)")
_CORPORATE = {"Ltd", "Ltd.", "Inc", "Inc.", "LLC", "plc", "GmbH", "Limited", "Corp", "Corp.", "Co", "Co."}
_NOT_NAMES = {"The", "A", "An", "This", "That", "Under", "In", "If", "But", "Because", "Since", "Once", "Where",
              "When", "Any", "Each", "Even", "Section", "Article", "Clause", "Act", "Agreement", "Master", "However"}


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _mentions(text: str, phrase: str) -> bool:
    return re.search(r"(?<![\w-])" + re.escape(phrase).replace(r"\ ", r"\s+") + r"s?(?![\w-])", text,
                     re.IGNORECASE) is not None


def _in_name(answer: str, match: re.Match) -> bool:
    """A capitalised role word that is part of a longer name (``Director of Employment Standards``)."""
    if " " in match.group("role") or not match.group("role")[0].isupper():
        return False
    return re.match(r"\s+(?:of\s+)?[A-Z]", answer[match.end():]) is not None


def role_candidates(answer: str, context: Sequence[str], rng: random.Random) -> list[Candidate]:
    """A party role (landlord, employer, Receiving Party, ...) swapped for the other side the document names: rule
    ``misattribution.role`` where the party holds, owes, does or says the thing, else ``factual.party`` (the
    taxonomy's ruling, :func:`~groundjudge.perturb.guards.party_rule`)."""
    document = "\n".join(context)
    out: list[Candidate] = []
    for match in _ROLE.finditer(answer):
        role = _norm(match.group("role"))
        if _in_name(answer, match):
            continue
        others = sorted({r for family in ROLE_FAMILIES if role in family for r in family
                         if r != role and _mentions(document, r)})
        if not others:
            continue
        new = rng.choice(others)
        if match.group("role")[0].isupper():
            new = " ".join(w.capitalize() for w in new.split()) if " " in role or match.group("role").istitle() \
                else keep_case(match.group("role"), new)
        if not _repeated_in_clause(answer, match.start("role"), match.end("role"), new) \
                and not _repeated_in_list(answer, match.start("role"), match.end("role"), new):
            out.append(replace(answer, match.start("role"), match.end("role"), new,
                               party_rule(answer, match.start("role"), match.end())))
    return [c for c in out if c is not None]


def institutions(text: str) -> list[str]:
    """Names of courts, tribunals and authorities in a text (capitalised names holding a head word)."""
    found = []
    for match in _NAME.finditer(text):
        name = re.sub(r"^(?:The|the)\s+", "", match.group())
        if any(w in INSTITUTION_HEADS for w in name.split()) and name.split()[0] not in _NOT_NAMES:
            found.append(name)
    return found


def institution_candidates(answer: str, context: Sequence[str], rng: random.Random) -> list[Candidate]:
    """A court or authority swapped for another one the document names (the same kind of body first): rule
    ``procedure.institution`` where it is the body one files with, applies or gives notice to (a Procedural
    error, as blind readers typed it), else ``misattribution.institution``."""
    pool = sorted({n for n in institutions("\n".join(context)) if len(n.split()) > 1})
    out: list[Candidate] = []
    for match in _NAME.finditer(answer):
        name = re.sub(r"^(?:The|the)\s+", "", match.group())
        if name not in institutions(name):
            continue
        start = match.start() + match.group().index(name)
        mine = set(name.split()) - {"of", "the", "for", "and", "on"}
        others = [p for p in pool if not (set(p.split()) - {"of", "the", "for", "and", "on"}) <= mine
                  and not mine <= set(p.split())]
        heads = set(name.split()) & set(INSTITUTION_HEADS)
        alike = [p for p in others if heads & set(p.split())]
        if others:
            out.append(replace(answer, start, start + len(name), rng.choice(alike or others),
                               institution_rule(answer, start)))
    return [c for c in out if c is not None]


def _party_like(term: str, name: str | None) -> bool:
    """A defined term that names a party (the 'Supplier', the 'Receiving Party', Calder Ltd. (the 'Calder')), not a
    thing (the 'Agreement', the 'Notes')."""
    low = term.lower()
    if low in _ROLES or low.rstrip("s") in _ROLES or "party" in low or "parties" in low:
        return True
    return bool(name) and name.split()[-1].rstrip(".,") in {c.rstrip(".") for c in _CORPORATE}


def parties(context: Sequence[str]) -> dict[str, list[str]]:
    """The named parties of a document, by form: ``defined`` terms (the 'Supplier'), ``full`` names and ``short``
    names (their first word), from party definitions, "between A and B" and "A v. B"."""
    document = "\n".join(context)
    full: set[str] = set()
    defined: set[str] = set()
    for match in _DEFINED.finditer(document):
        before = _NAME_BEFORE.search(document[max(0, match.start() - 80):match.start()])
        name = before.group("name") if before else None
        if _party_like(match.group("term").strip(), name):
            defined.add(match.group("term").strip())
            if name:
                full.add(name)
    for pattern in (_BETWEEN, _VERSUS):
        for match in pattern.finditer(document):
            full.update((match.group("a"), match.group("b")))
    full = {re.sub(r"^(?:The|the)\s+", "", f).rstrip(".,") for f in full}
    full = {f for f in full if len(f) > 2 and f.split()[0] not in _NOT_NAMES}
    short = {f.split()[0] for f in full if len(f.split()) > 1 and f.split()[0] not in _CORPORATE}
    return {"defined": sorted(defined), "full": sorted(full - defined), "short": sorted(short - full - defined)}


def _repeated_in_clause(text: str, start: int, end: int, phrase: str) -> bool:
    """Whether ``phrase`` already occurs in the clause of ``text`` around ``[start:end)`` (outside it): a swap that
    makes "the Disclosing Party shall notify the Disclosing Party" reads as nonsense, not as a misattribution."""
    s, e = sentence_at(text, start)
    left = max([text.rfind(c, s, start) for c in ",;:"] + [s - 1]) + 1
    rights = [i for i in (text.find(c, end, e) for c in ",;:") if i >= 0]
    clause = text[left:start] + " " + text[end:min(rights) if rights else e]
    return re.search(r"(?<![\w-])" + re.escape(phrase) + r"(?![\w-])", clause, re.IGNORECASE) is not None


def _repeated_in_list(text: str, start: int, end: int, phrase: str) -> bool:
    """Whether ``[start:end)`` is an item of a comma list ("officers, shareholders, members") whose sentence already
    names ``phrase``: the swap doubles an item and drops one ("directors, ..., directors"), it attributes nothing."""
    if not (re.search(r",\s*(?:and\s+|or\s+)?$", text[:start]) or re.match(r"(?:s|'s)?\s*,", text[end:])):
        return False
    s, e = sentence_at(text, start)
    rest = text[s:start] + " " + text[end:e]
    return re.search(r"(?<![\w-])" + re.escape(phrase) + r"s?(?![\w-])", rest, re.IGNORECASE) is not None


def party_candidates(answer: str, context: Sequence[str], rng: random.Random) -> list[Candidate]:
    """A named party swapped for another party of the same document, in the same form (defined term, full name or
    short name); names inside a case name (A v. B) are left alone."""
    out: list[Candidate] = []
    taken: list[tuple[int, int]] = []
    for form, names in parties(context).items():
        for name in sorted(names, key=len, reverse=True):
            others = [n for n in names if n != name and n not in name and name not in n]
            if not others:
                continue
            for match in finditer_words(re.escape(name), answer, 0):
                around = answer[max(0, match.start() - 4):match.end() + 4]
                if " v. " in around or " v " in around or any(s < match.end() and match.start() < e for s, e in taken):
                    continue
                taken.append(match.span())
                new = rng.choice(others)
                if not _repeated_in_clause(answer, match.start(), match.end(), new):
                    out.append(replace(answer, match.start(), match.end(), new, f"misattribution.{form}"))
    return [c for c in out if c is not None]


def section_candidates(answer: str, context: Sequence[str], rng: random.Random) -> list[Candidate]:
    """A section, article or clause reference the answer says holds or states the rule ("under section 9",
    "section 9 provides") pointed at another one: another reference of the same kind in the answer or the
    document, or another subsection the document marks. A pointer to where something is found is left alone."""
    document = "\n".join(context)
    refs: dict[str, set[str]] = {}
    for match in _REF.finditer(answer + "\n" + document):
        refs.setdefault(match.group("word").lower(), set()).add(match.group("num") + match.group("subs"))
    markers = {m.group(1) for m in _SUB.finditer(document)}
    out: list[Candidate] = []
    for match in _REF.finditer(answer):
        ref = match.group("num") + match.group("subs")
        options = {o for o in refs.get(match.group("word").lower(), set())
                   if not o.startswith(ref) and not ref.startswith(o)}
        subs = _SUB.findall(match.group("subs"))
        if subs:
            last = subs[-1]
            same_kind = {m for m in markers if m.isdigit() == last.isdigit() and m != last}
            stem = ref[:ref.rindex("(")]
            options |= {f"{stem}({m})" for m in same_kind}
        options = sorted(options)
        if options and section_attributed(answer, match.start(), match.end("subs")):
            out.append(replace(answer, match.start("num"), match.end("subs"), rng.choice(options),
                               "misattribution.section"))
    return [c for c in out if c is not None]


def misattribution_candidates(answer: str, context: Sequence[str], rng: random.Random) -> list[Candidate]:
    """Every misattribution the rules can make to the answer (one candidate per place)."""
    institutions_named = [c for c in institution_candidates(answer, context, rng)
                          if c.rule.startswith("misattribution.")]
    roles = [c for c in role_candidates(answer, context, rng) if c.rule.startswith("misattribution.")]
    return (roles + institutions_named
            + party_candidates(answer, context, rng) + section_candidates(answer, context, rng))
