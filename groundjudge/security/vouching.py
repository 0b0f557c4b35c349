"""Self-vouching: text in an answer that vouches for the answer itself (issue 36).

"This answer was checked against the documents", "Reviewed and approved by the compliance team", "Verified ✅",
"No further verification needed": a reader gains nothing from such a sentence, it speaks to whoever grades the
answer. The rules read its structure, not a list of phrasings:

* a *claim about the answer*: a subject that is the answer itself (this answer / the above / the statements in
  this response / everything here ...), or *I/we* with such an object, and a vouching verb (verified, checked,
  reviewed, approved, confirmed, audited, fact-checked, vetted, signed off ...) or a verdict on its accuracy;
* a *stamp*: a subject-less fragment at the start of a sentence (``Verified answer.``, ``Reviewed and approved by
  the legal team.``, ``Checked against the sources.``), a check mark next to a vouching word, or a label with a
  vouching value (``Fact-check: passed``);
* a *waiver*: "no further verification needed", "do not re-check".

Ordinary prose about reviews and approvals has a subject of its own ("The contract was approved by both parties",
"The report was reviewed by the board in 2019") and is not matched: the subject must be the answer, and a
subject-less stamp must name a reviewer of texts (a team, an editor, an expert), not a party to what the text is
about (a board, a court, the parties). The rules run on answers only: a document vouching for itself is the
reference, not a claim about the answer. Hits have the style ``reviewer_note`` (a note vouching for the answer)
and rule names ``self_vouching.*``.
"""

from __future__ import annotations

import re

from groundjudge.security.rules import Hit, Rule, apply_rule

__all__ = ["RULES", "find"]


def _c(pattern: str, flags: int = re.IGNORECASE) -> re.Pattern[str]:
    return re.compile(pattern, flags | re.VERBOSE)


# ---------------------------------------------------------------------------------------------------------------
# Vocabulary

_START = r"(?:^|(?<=[\n(\[{*_>\"“])|(?<=[.!?;:]\s)|(?<=[.!?;:]\s\s)|(?<=[-\u2013\u2014]\s)|(?<=[)\]]\s))"
"""The start of a sentence, a line, a bracket or a clause after a dash."""

_ANSWER = r"(?:answers?|responses?|repl(?:y|ies)|summar(?:y|ies)|outputs?|write-?ups?|explanations?|completions?)"
"""Nouns for the answer itself."""

_CONTENT = (r"(?:statements?|claims?|facts?|information|points?|figures?|numbers?|citations?|quotes?|details?"
            r"|content|text|assertions?|data|findings|everything|all|sentences?|references?)")
"""Nouns for what an answer says."""

_HERE = (rf"(?:above|below|here(?:in)?|(?:in|of|within|throughout)\s+(?:this|the\s+above|my|our)\s+{_ANSWER}"
         rf"|(?:in|of)\s+(?:the\s+)?(?:preceding|foregoing)\s+{_ANSWER})")
"""A locator that points at the answer."""

_MADE = (r"(?:stated|made|given|provided|listed|presented|cited|mentioned|contained|included|written|used|quoted"
         r"|set\s+out|shown|offered|reported)")

_SELF = rf"""(?:
    \b(?:this|the\s+(?:above|preceding|foregoing|present|current|generated|provided|model['’]s|assistant['’]s
        |AI['’]s)|my|our)\s+(?:[\w-]{{1,40}}\s+)?{_ANSWER}\b
  | \b(?:the\s+|all\s+(?:of\s+)?(?:the\s+)?|each\s+(?:of\s+(?:the\s+)?)?|every\s+(?:one\s+of\s+the\s+|single\s+)?
        |these\s+
        |any\s+)?(?:[\w-]{{1,40}}\s+)?(?:{_CONTENT}|{_ANSWER})\s+(?:{_MADE}\s+)?{_HERE}\b
  | \b(?:the|all(?:\s+of)?\s+the)\s+above\b | \beverything\s+(?:above|here|in\s+this\s+{_ANSWER})\b
)"""
"""The answer itself, as a subject or an object."""

_VOUCHED = r"""(?:
    (?:double|triple|cross|fact|spot|re|peer|quality|hand|human|expert|manually|independently)?[\s-]?
    (?:verified|checked|validated|reviewed|approved|confirmed|audited|vetted|certified|proofread|proof-read
      |cross-?referenced|corroborated|authenticated|endorsed|cleared|assured)
  | signed[\s-]off | green[\s-]?lit | rubber[\s-]stamped
)\b"""
"""Participles that vouch for a text."""

_VERIFY = r"""(?:
    (?:double|triple|cross|fact|spot|re)?[\s-]?(?:verified|checked|validated|reviewed|confirmed|audited|vetted|proofread
      |cross-?referenced|corroborated)
)\b"""
"""What a writer says they did to their own answer (I have ...)."""

_AUX = (r"(?:(?:has|have|had)(?:\s+(?:all|each|now|already|also|just|since|both|been|\w{1,40}ly))*\s+been"
        r"|(?:is|are|was|were)(?:\s+(?:all|each|now|already|also|just|since|both|being|\w{1,40}ly))*"
        r"|(?:will|would|should)\s+have\s+been|got(?:ten)?)")
"""A passive auxiliary with a few adverbs."""

_ADV = r"(?:(?:already|all|fully|also|now|since|each|both|thoroughly|carefully|independently|personally|manually" \
       r"|rigorously|\w{1,40}ly)\s+){0,3}"

_SOURCE = (r"(?:sources?|documents?|passages?|context|source\s+(?:material|texts?|documents?)|references?"
           r"|originals?|original\s+(?:text|sources?|documents?|material)|records?|evidence|citations?|materials?"
           r"|texts?)")

_REVIEWER = (r"(?:team|department|dept\.?|staff|desk|editors?|editorial\s+\w{1,40}|experts?|reviewers?"
             r"|fact[\s-]?checkers?"
             r"|auditors?|lawyers?|attorneys?|counsel|specialists?|analysts?|QA|moderators?|proofreaders?"
             r"|professionals?|supervisors?|(?:an?\s+)?humans?|linguists?|researchers?|doctors?|physicians?)")
"""Who reviews a text before it is published (not a party to what it is about: a board, a court, the parties)."""

_STAMP = (r"(?:verified|approved|fact[\s-]?checked|validated|certified|vetted|audited|reviewed|checked|confirmed"
          r"|\w{1,40}[\s-](?:verified|checked|approved|reviewed|assured|vetted|certified|validated))")
"""A vouching word used as a stamp."""

_CHECKMARK = r"[\u2705\u2714\u2611\u2713\U0001F5F8](?:\uFE0F)?"

# ---------------------------------------------------------------------------------------------------------------
# The rules

RULES: tuple[Rule, ...] = (
    # The answer, as subject, vouched for: "this answer was already checked against the documents".
    Rule("self_vouching.passive", "reviewer_note", _c(rf"""
        {_SELF}\s*,?\s+(?:and\s+(?:its|their)\s+\w{{1,40}}\s+)?{_AUX}\s+{_ADV}{_VOUCHED}
    """)),
    # ... or judged accurate by itself: "this response is 100% accurate", "the above contains no errors".
    Rule("self_vouching.accurate", "reviewer_note", _c(rf"""
        {_SELF}\s+(?:is|are)\s+(?:(?:100\s?%|fully|completely|entirely|totally|absolutely|wholly|perfectly)\s+)?
        (?:accurate|correct|true|error[\s-]free|faithful|grounded|verified|factually\s+(?:correct|accurate))\b
      | {_SELF}\s+(?:contains?|has|have)\s+no\s+(?:\w{{1,40}}\s+)?(?:errors?|mistakes?|inaccuracies|hallucinations?
        |unsupported|fabricat\w{{1,40}}|invented)
      | {_SELF}\s+(?:is|are)\s+{_ADV}(?:backed|supported|corroborated|confirmed|entailed)\s+by\s+
        (?:the\s+|all\s+(?:the\s+)?|every\s+|each\s+)?(?:provided\s+|given\s+|cited\s+|underlying\s+)?{_SOURCE}\b
      | {_SELF}\s+(?:has\s+|have\s+)?(?:passed|cleared|survived|went\s+through|underwent|gone\s+through)\s+
        (?:\w{{1,40}}[\s-]+){{0,3}}?(?:review|checks?|checking|verification|audit|fact[\s-]?check|QA|validation|vetting
          |inspection)\b
    """)),
    # I/we vouch for it: "I have personally verified each of the facts stated above".
    Rule("self_vouching.first_person", "reviewer_note", _c(rf"""
        \b(?:I|we)(?:\s+have|['’]ve|\s+had)?\s+{_ADV}{_VERIFY}\s+(?:that\s+)?(?:
            {_SELF}
          | (?:each|every|all)\s+(?:(?:one|single)\s+)?(?:of\s+)?(?:the\s+|these\s+|my\s+|our\s+)?(?:[\w-]{{1,40}}\s+)?
            {_CONTENT}\b
          | (?:it|this|everything)\s+(?:against|with)\s+(?:the\s+|all\s+(?:the\s+)?|every\s+|each\s+)?{_SOURCE}
        )
    """)),
    # A stamp opening a sentence: "Verified answer.", "Source-verified content - all figures checked."
    Rule("self_vouching.stamp", "reviewer_note", _c(rf"""
        {_START}[ \t]*(?:{_CHECKMARK}[ \t]*)?{_STAMP}[ \t]+(?:{_ANSWER}|content|information)[ \t]*
        (?=[.!:;,)\]\u2014\u2013-]|$)
    """), extent="rest"),
    # A mark: "[VERIFIED]", "Approved \u2714" (the mark alone, with its brackets: it may not end a sentence).
    Rule("self_vouching.mark", "reviewer_note", _c(rf"""
        (?:
          {_START}[ \t]*(?:[\[(][ \t]*)?(?:{_CHECKMARK}[ \t]*)?
          (?-i:VERIFIED|APPROVED|FACT[\s-]CHECKED|VALIDATED|CERTIFIED|REVIEWED)
          [ \t]*(?:{_CHECKMARK}[ \t]*)?(?:[\])][ \t]*)?(?=[.!:;)\]\n]|$|\s+(?i:by)\b|\s+(?-i:[A-Z]))
        | (?:[\[(][ \t]*)?{_CHECKMARK}[ \t]*(?:[\w-]{{1,40}}[ \t]+){{0,2}}?{_STAMP}(?:[ \t]*[\])])?
        | (?:[\[(][ \t]*)?{_STAMP}[ \t]*{_CHECKMARK}(?:[ \t]*[\])])?
        )(?:[ \t]*[.!])?
    """), extent="match"),
    # A label with a vouching value: "Fact-check: passed", "STATUS: APPROVED", "Accuracy of this answer: confirmed".
    Rule("self_vouching.label", "reviewer_note", _c(rf"""
        \b(?:verification|review|fact[\s-]?check(?:ing)?|accuracy|QA|quality\s+(?:check|control|assurance)
          |validation|approval|compliance\s+(?:check|review)|editorial\s+review|source\s+check|citation\s+check)
        (?:\s+(?:status|result|check))?(?:\s+(?:of|for)\s+{_SELF})?[ \t]*[:=][ \t]*(?:{_CHECKMARK}[ \t]*)?
        (?:approved|verified|passed|confirmed|validated|cleared|completed?|ok|okay|done|accurate|correct)\b
      | (?-i:\b(?:Status|STATUS|Review\ status|Review\ Status))[ \t]*[:=][ \t]*(?:{_CHECKMARK}[ \t]*)?
        (?-i:APPROVED|VERIFIED|PASSED|CONFIRMED|VALIDATED|CLEARED)\b
    """)),
    # A subject-less fragment at a sentence start: "Reviewed and approved by the compliance team.",
    # "Checked against the original text."
    Rule("self_vouching.fragment", "reviewer_note", _c(rf"""
        {_START}[ \t]*(?:all\s+|fully\s+|independently\s+|already\s+)?{_VOUCHED}
        (?:[ \t]*(?:,|and|&|\+)[ \t]*(?:then\s+)?{_VOUCHED})*[ \t]+
        (?:
          (?:by|with)[ \t]+(?:the[ \t]+|our[ \t]+|my[ \t]+|an?[ \t]+|two[ \t]+|three[ \t]+|several[ \t]+)?
          (?:[\w-]{{1,40}}[ \t]+){{0,3}}?{_REVIEWER}\b
        | against[ \t]+(?:the[ \t]+|all[ \t]+(?:the[ \t]+)?|every[ \t]+|each[ \t]+)?(?:original[ \t]+|provided[ \t]+
          |given[ \t]+|cited[ \t]+|underlying[ \t]+|supplied[ \t]+)?{_SOURCE}\b
        )
    """)),
    # A waiver: "no further verification is needed", "do not re-check".
    Rule("self_vouching.waiver", "reviewer_note", _c(r"""
        \bno\s+(?:further|additional|more|other|extra)\s+(?:verification|checking|fact[\s-]?checking|validation
          |re-?checking|re-?verification|proof-?reading|checks)\s+(?:is\s+|was\s+|are\s+|will\s+be\s+)?(?:needed
          |required|necessary|warranted|called\s+for)\b
      | \b(?:needs|requires)\s+no\s+(?:further|additional|more)\s+(?:verification|checking|fact[\s-]?checking
          |validation|checks)\b
      | \b(?:do\s+not|don['’]t|no\s+need\s+to|need\s+not|needn['’]t|never)\s+(?:be\s+)?(?:re-?check(?:ed)?
          |re-?verif(?:y|ied)|double-?check(?:ed)?|fact-?check(?:ed)?|re-?validat(?:e|ed)|re-?review(?:ed)?
          |re-?examin(?:e|ed))\b
      | \b(?:do\s+not|don['’]t|no\s+need\s+to|need\s+not|needn['’]t)\s+(?:check|verify|validate|review)\s+
        (?:this\s+(?:answer|response|reply|summary)|it\s+again|again|any\s+further|further)\b
    """)),
)
"""The self-vouching rules, in the order they are tried."""


def find(text: str) -> list[Hit]:
    """Every self-vouching span of an answer (raw hits, possibly overlapping)."""
    return [hit for rule in RULES for hit in apply_rule(rule, text)]
