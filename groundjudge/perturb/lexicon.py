"""The legal lexicon of the rule generators: word swaps that change the legal meaning, by error type, and the
word lists the number and party rules read.

A swap is ``(phrase, replacement, rule)``; phrases match as whole words, case-insensitively, longest first, and
the replacement takes the matched text's capitalisation. A pair written once is used both ways only when it is
listed both ways. Everything here is data: the rules live in ``rules_facts`` and ``rules_terms``.
"""

from __future__ import annotations

Swap = tuple[str, str, str]


def _both(rule: str, *pairs: tuple[str, str]) -> list[Swap]:
    return [s for a, b in pairs for s in ((a, b, rule), (b, a, rule))]


TERMINOLOGICAL: tuple[Swap, ...] = tuple([
    # modality: obligation <-> permission, prohibition <-> no duty
    ("shall not", "need not", "terms.modal"), ("must not", "need not", "terms.modal"),
    ("may not", "need not", "terms.modal"), ("cannot", "need not", "terms.modal"),
    ("is required to", "may", "terms.modal"), ("are required to", "may", "terms.modal"),
    ("shall", "may", "terms.modal"), ("must", "may", "terms.modal"), ("may", "must", "terms.modal"),
    # terms of art
    *_both("terms.validity", ("void", "voidable"), ("revocable", "irrevocable")),
    *_both("terms.remedy", ("indemnify", "reimburse"), ("indemnifies", "reimburses"), ("indemnified", "reimbursed"),
           ("indemnity", "guarantee"), ("rescind", "terminate"), ("rescinded", "terminated"),
           ("rescission", "termination")),
    ("jointly and severally", "severally", "terms.liability"),
    *_both("terms.liability", ("jointly", "severally"), ("strict liability", "negligence"),
           ("balance of probabilities", "beyond reasonable doubt")),
    *_both("terms.scope", ("exclusive", "non-exclusive"), ("express", "implied"),
           ("expressly", "impliedly"), ("direct", "consequential")),
    *_both("terms.transfer", ("licence", "assignment"), ("license", "assignment"), ("licences", "assignments"),
           ("ownership", "possession"), ("joint tenancy", "tenancy in common"), ("easement", "covenant")),
    *_both("terms.contract", ("condition", "warranty"), ("conditions", "warranties"),
           ("liquidated", "unliquidated"), ("reasonable efforts", "best efforts")),
    *_both("terms.tax", ("deduction", "credit"), ("deductions", "credits"), ("deduct", "credit")),
    *_both("terms.proof", ("deemed", "presumed"), ("rebuttable", "conclusive")),
    *_both("terms.offence", ("felony", "misdemeanour"), ("indictable", "summary")),
])
"""Terms of art and modals swapped for a neighbour that changes the legal meaning (Terminological Errors)."""

PROCEDURAL: tuple[Swap, ...] = tuple([
    *_both("procedure.notice_form", ("in writing", "orally"), ("written", "oral"),
           ("registered mail", "ordinary mail"), ("signed", "witnessed")),
    *_both("procedure.order", ("before", "after"), ("prior to", "following"), ("no later than", "no earlier than"),
           ("at least", "at most")),
    *_both("procedure.trigger", ("receiving", "sending"), ("received", "sent"), ("receives", "sends"),
           ("receipt", "dispatch"), ("working days", "calendar days"), ("business days", "calendar days")),
    *_both("procedure.forum", ("arbitration", "litigation"), ("mediation", "arbitration"),
           ("judicial review", "appeal"), ("ex parte", "on notice")),
    *_both("procedure.step", ("serve", "file"), ("served", "filed"), ("serving", "filing")),
])
"""Steps, order, deadlines' triggers, forum and form of notice swapped (Procedural Errors). A word listed twice
(arbitration) keeps its first replacement."""

CONTEXTUAL: tuple[Swap, ...] = tuple(_both("contextual.scope", ("including", "excluding")))
"""What a rule covers, inverted: "(including electronic form)" -> "(excluding electronic form)". Blind readers
called it a change of scope (Contextual Misinterpretations), not a misused term (round 1: 6 of 8)."""

REASONING: tuple[Swap, ...] = tuple(_both(
    "reasoning.comparison", ("the earlier of", "the later of"), ("the lesser of", "the greater of"),
    ("the lower of", "the higher of")))
"""Which of two values a rule picks, inverted. By the taxonomy's rulings (``perturb.guards.comparison_rule``) the
earlier/later of two dates is the event that starts a period (Procedural Errors) and the lesser/greater of two
values the documents name is the opposite of what they state (Factual Inaccuracies), not a Reasoning Error."""

QUALIFIERS: tuple[str, ...] = (
    "reasonable", "reasonably", "material", "materially", "substantial", "substantially", "significant",
    "significantly", "undue", "unreasonable", "manifestly", "ordinary", "genuinely", "proper", "gross", "wilful",
    "willful", "extraordinary", "serious", "ordinarily", "normally", "usually", "where feasible", "where possible",
    "where appropriate", "in principle",
)
"""Qualifiers whose removal widens a rule (Contextual Misinterpretations). Not "specific", "particular" or
"generally": blind readers found "the specific purpose" -> "the purpose" and "Generally she cannot" -> "She cannot"
no change of what is stated (round 1: 0 of 3)."""

EXCEPTION_WORDS: tuple[str, ...] = ("unless", "except", "subject to", "save that", "other than where", "as long as",
                                    "so long as")
"""Words that open a condition or exception clause (dropped by the contextual rule). Not "provided that": a proviso
in a contract excerpt mostly adds a duty ("provided that Recipient promptly notifies Discloser"), and blind readers
read its omission as an answer that stops early, not as an error (round 1: 0 of 2)."""

ROLE_FAMILIES: tuple[tuple[str, ...], ...] = (
    ("landlord", "tenant"), ("lessor", "lessee"), ("licensor", "licensee"), ("employer", "employee"),
    ("buyer", "seller"), ("purchaser", "vendor"), ("supplier", "customer"), ("supplier", "consumer"),
    ("plaintiff", "defendant"), ("claimant", "respondent"), ("applicant", "respondent"),
    ("appellant", "respondent"), ("prosecutor", "accused"), ("prosecution", "defence"), ("controller", "processor"),
    ("disclosing party", "receiving party"), ("discloser", "recipient"), ("mother", "father"), ("husband", "wife"),
    ("producer", "importer"), ("lender", "borrower"), ("insurer", "insured"), ("debtor", "creditor"),
    ("trustee", "beneficiary"), ("company", "consultant"), ("director", "shareholder"),
    ("contractor", "subcontractor"), ("franchisor", "franchisee"), ("guarantor", "borrower"),
)
"""Parties that stand opposite each other: one is swapped for another of its family that the document names."""

INSTITUTION_HEADS: tuple[str, ...] = (
    "Court", "Tribunal", "Commissioner", "Commission", "Agency", "Office", "Board", "Registrar", "Ministry",
    "Authority", "Centre", "Center", "Division", "Department", "Service", "Ombudsman", "Council", "Bureau",
    "Director", "Minister", "Regulator",
)
"""The last (or a) word of an institution's name: courts, tribunals, regulators."""

REF_WORDS: tuple[str, ...] = ("section", "sections", "article", "articles", "clause", "clauses", "rule", "rules",
                              "regulation", "regulations", "paragraph", "paragraphs", "para", "paras", "part",
                              "schedule", "subsection", "form", "s", "ss", "art", "reg", "no", "chapter", "title")
"""Words before a number that make it a reference, not a quantity."""

NUMBER_WORDS: dict[str, int] = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90,
}
"""Number words read and written by the number rules and the paraphrases."""

ORDINALS: tuple[str, ...] = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
                             "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
                             "seventeenth", "eighteenth", "nineteenth", "twentieth")
"""Ordinal words 1st-20th (an anniversary, the n-th day)."""

MULTIPLES: tuple[str, ...] = ("twice", "three times", "four times", "double", "triple", "half")
"""Multiples of an amount, swapped among themselves."""

UNITS: dict[str, tuple[int, ...]] = {
    "minute": (5, 10, 15, 20, 30, 45, 60, 90),
    "hour": (6, 12, 24, 36, 48, 72, 96, 120),
    "day": (3, 5, 7, 10, 14, 15, 20, 21, 28, 30, 45, 60, 90, 120, 180),
    "week": (1, 2, 3, 4, 6, 8, 10, 12, 26),
    "month": (1, 2, 3, 4, 6, 9, 12, 18, 24, 36),
    "year": (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20, 25, 30),
    "per cent": (1, 2, 3, 5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 80, 90),
}
"""Units of time and rates, with the values a changed number is drawn from (a plausible, different value)."""

UNIT_ALIASES: dict[str, str] = {
    "minutes": "minute", "minute": "minute", "hours": "hour", "hour": "hour", "days": "day", "day": "day",
    "weeks": "week", "week": "week", "months": "month", "month": "month", "years": "year", "year": "year",
    "per cent": "per cent", "percent": "per cent", "%": "per cent", "per-cent": "per cent",
}
"""The unit words (and their plurals) that follow a number, by unit."""

CURRENCY_WORDS: tuple[str, ...] = ("crowns", "marks", "dollars", "euros", "pounds", "francs", "rupees", "yen",
                                   "crown", "mark", "dollar", "euro", "pound")
"""Money after a number (``400 crowns``); a currency sign before it is read too."""

MONTHS: tuple[str, ...] = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
                           "October", "November", "December")
