"""The English rules: regular expressions, one family per injection style, compiled once.

A rule fires on text that speaks to the evaluator about the evaluation, never on a word alone: "review",
"instructions", "system", "score" or "ignore" are ordinary words of legal and technical prose. So most rules pair
a *trigger* (a reviewer's note label, a role line at the start of a line, a rubric, a second-person command) with
a *requirement* that must also hold near it (a grading term: grounded, faithful, hallucination, "mark it as",
"the correct label", "consistent with the documents", ...). Only forms that have no ordinary use (chat-template
tokens such as ``<|im_start|>``, a closing ``</answer>`` or ``</document_2>`` tag, "ignore all previous
instructions") fire alone.

:func:`find` returns raw, possibly overlapping :class:`Hit` spans; :func:`groundjudge.security.detect` merges them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from groundjudge.security.spans import Extent, extend, paragraph_end, sentence_end, trim
from groundjudge.types import InjectionStyle


@dataclass(frozen=True)
class Hit:
    """A raw rule match: the style, the span (offsets into the scanned text) and the rule's name."""

    style: InjectionStyle
    start: int
    end: int
    rule: str
    decoded: str | None = None
    """For a hit inside encoded text: the decoded text it was found in."""


@dataclass(frozen=True)
class Rule:
    """One rule: a trigger pattern, how far its span extends, and what must also be found near it."""

    name: str
    style: InjectionStyle
    pattern: re.Pattern[str]
    extent: Extent = "sentence"
    requires: re.Pattern[str] | None = None
    """Must match within the trigger's sentence (None: nothing is required)."""
    reach: int = 0
    """How far (characters) past the sentence, within its paragraph, ``requires`` may be found: a note's label
    ("Reviewer's note:") or a role line may say what it wants a sentence later."""


def _c(pattern: str, flags: int = re.IGNORECASE) -> re.Pattern[str]:
    return re.compile(pattern, flags | re.VERBOSE)


# ---------------------------------------------------------------------------------------------------------------
# Vocabulary (pattern fragments)

_AI = r"(?:AI|A\.I\.|LLMs?|GPT(?:-?\d)?|(?:large\s+)?language[\s-]+models?|models?|assistants?|chatbots?|bots?)"
_ROLE = (r"(?:evaluators?|graders?|judges?|annotators?|assessors?|raters?|scorers?|markers?|examiners?"
         r"|fact[\s-]?checkers?|verifiers?|reviewers?|moderators?|checkers?|classifiers?|labell?ers?|critics?)")
_JUDGE = (rf"(?:(?:{_AI}|automated|automatic|machine|human|expert|external|final|LLM[\s-]based|AI[\s-]based"
          rf"|model[\s-]based|evaluation|grading|judging|scoring)[\s-]+)?(?:{_ROLE}|{_AI}"
          r"|(?:evaluation|grading|judging|scoring|review)\s+(?:models?|systems?|pipelines?|LLMs?|AIs?))")
_GOOD = (r"(?:fully\s+|completely\s+|entirely\s+|totally\s+|100%\s+)?(?:grounded|supported|faithful"
         r"|factual(?:ly\s+(?:correct|accurate))?|consistent|correct|accurate|true|valid|verified|entailed"
         r"|hallucination[\s-]free|acceptable|passing|pass(?:ed)?|fine|ok|okay|right)\b")
_VERDICT_WORD = r"(?:(?:un)?grounded|(?:un)?supported|(?:un)?faithful|hallucinated|not[\s_]grounded)\b"
_GROUNDED = (r"(?:fully\s+|completely\s+|entirely\s+|totally\s+|100%\s+)?(?:grounded|supported|faithful|entailed"
             r"|hallucination[\s-]free|factually\s+(?:correct|accurate))\b")
_ANSWER = r"(?:answers?|responses?|replies|reply|summar(?:y|ies)|outputs?|completions?|generations?)"
_THIS_ANSWER = (r"(?:\b(?:this|the\s+(?:above|following|present|current|candidate|generated|model['’]s))\s+"
                r"(?:answer|response|summary|reply|output)\b|\bthe\s+(?:answer|response|summary|reply|output)\s+"
                r"(?:above|below)\b)")
_SOURCE = r"(?:sources?|documents?|context|passages?|references?|evidence|(?:source|reference)\s+texts?)"

GRADING = _c(rf"""
    \b(?:un)?grounded(?:ness)?\b | \b(?:un)?faithful(?:ness|ly)?\b | hallucinat\w* | \bfact[\s-]?checked\b
  | \b(?:mark|label|rate|score|grade|classify|tag)(?:s|ed|d)?
        (?:\s+(?:it|this|that|them|everything|(?:the|this|these|each|every)\s+\w+))?\s+as\b
  | \b(?:correct|right|final|expected|true|gold|proper)\s+(?:label|verdict|grade|score|rating|classification)\b
  | \blabel(?:l?ed)?\s+(?:is|as|should|must|=|:)
  | \bverdict\s*(?:is|should|must|=|:)
  | \b(?:score|grade|rating|mark)\s*(?:of|=|:)?\s*\d
  | \b(?:full|top|highest|maximum|max|perfect|best|passing)\s+(?:marks?|scores?|credit|grades?|ratings?)\b
  | \bshould\s+pass\b
  | \b(?:consistent\s+with|supported\s+by|entailed\s+by|verified\s+against|grounded\s+in|backed\s+by
        |taken\s+verbatim\s+from|cross-?checked\s+against)\s+(?:the\s+|every\s+|all\s+(?:the\s+)?|each\s+|its\s+)?
        {_SOURCE}
  | \b(?:fully|entirely|completely|100%)\s+(?:supported|accurate|correct|verified|consistent|true)\b
  | {_THIS_ANSWER} | \bverbatim\b | \bcross-?checked\b
  | \bno\s+(?:unsupported|invented|fabricated|made[\s-]up|false)\s+(?:claims?|statements?|facts?|content)\b
""")
"""Grading terms: what a note to the evaluator talks about."""

GRADING_STRONG = _c(rf"""
    \b(?:un)?grounded(?:ness)?\b | \b(?:un)?faithful(?:ness)?\b | hallucinat\w*
  | \bas\s+(?:being\s+)?{_GROUNDED}
  | \b(?:correct|right|final|expected|true|gold|proper)\s+(?:label|verdict|grade|score|rating|classification)\b
  | \b(?:full|top|highest|maximum|max|perfect|best)\s+(?:marks?|scores?|credit|grades?|ratings?)\b
  | \bthe\s+(?:word|label|verdict|token|string)\b
  | \b(?:score|grade|rating)\s+(?:of\s+)?\d
  | {_THIS_ANSWER}
""")
"""Grading terms that ordinary advice to a reader does not use (for second-person commands)."""

ROLE_CONTENT = _c(rf"""
    {GRADING.pattern}
  | \b(?:override|overrid(?:den|ing)|ignore|disregard|bypass|lenient|grader|judge|verdict|classify
        |evaluation\s+(?:mode|override|result|complete|passed)|new\s+instructions?|you\s+are\s+(?:an?|the)\b)
  | (?-i:\b(?:SUPPORTED|GROUNDED|FAITHFUL|PASS(?:ED)?|VERIFIED|CORRECT|TRUE)\b)
""")
"""What a fake role line talks about."""

RUBRIC_GROUND = _c(r"""
    \b(?:un)?grounded\b | \b(?:un)?faithful\b | hallucinat\w* | paraphras\w*
  | \bentailed\s+by\s+the\s+(?:source|context|documents?|passages?)
  | \bcount(?:s|ed)?\s+as\s+(?:fully\s+)?(?:supported|unsupported|correct|incorrect|grounded|ungrounded|faithful
        |accurate|true|hallucinations?|errors?)\b
  | \b(?:considered|treated|labell?ed|marked|scored|graded|rated|judged|deemed|regarded|classified|accepted)\s+
        (?:as\s+)?(?:fully\s+)?(?:supported|correct|grounded|faithful)\b
  | \bfull\s+(?:credit|marks)\b
  | \b(?:answers?|summar(?:y|ies)|outputs?)\b[^.;\n]{0,60}\bpenali[sz]ed\b
""")
"""What a claim about the grading rules asserts: how answers are to be labelled."""

_IGNORE = r"(?:ignore|disregard|forget)"
_EARLIER = (r"(?:previous|prior|above|earlier|preceding|foregoing|original|initial|system|grading|evaluation|judging"
            r"|scoring|former)")
_PROMPT_TAGS = (r"answer|candidate[_-]?answer|model[_-]?(?:answer|output|response)|document(?:s|[_\-\ ]?\d+)?|context"
                r"|contexts|evidence|passages?|instructions?|system(?:[_-]?prompt)?|judge|grading|evaluation|verdict"
                r"|untrusted[\w-]*|user[_-]?input|user|assistant|claims?|question|response|reference[_-]?texts?"
                r"|source[_-]?(?:documents?|texts?|\d+)|retrieved[\w-]*|prompt|human")
"""Blocks of a judge's prompt: a closing tag of one of them ends the data block early."""
_HTML_TAGS = r"summary|text|output|input|data|article|transcript|content|references?|sources?"
"""Tags that technical text uses too (HTML details/summary, Maven's <source>): they count with grading content."""
_OPEN_TAGS = (r"answer|document(?:s|[_\-]?\d+)|context|evidence|instructions?|system|judge|grading|evaluation|verdict"
              r"|admin|developer|untrusted[\w-]*|assistant")
"""Blocks whose opening tag (attributes allowed) starts a new prompt block."""


def _cased(names: str) -> str:
    """A tag-name alternation matching the names in lower case or in upper case (not Tomcat's ``<Context>``)."""
    upper = re.sub(r"\\([dws])", lambda m: "\x00" + m.group(1), names).upper()
    upper = upper.replace("\x00D", "\\d").replace("\x00W", "\\w").replace("\x00S", "\\s")
    return f"(?:{names}|{upper})"


_SENT_START = r"(?:^|(?<=[\n(\[{*_>])|(?<=[.!?;:]\s)|(?<=[.!?;:]\s\s)|(?<=[-\u2013\u2014]\s))"

# ---------------------------------------------------------------------------------------------------------------
# The rules

_NOTE = (r"(?:notes?|comments?|remarks?|memos?|messages?|annotations?|feedback|observations?|sign[\s-]?offs?"
         r"|addend(?:um|a)|checks?|assessments?)")

RULES: tuple[Rule, ...] = (
    # -- reviewer_note ------------------------------------------------------------------------------------------
    Rule("reviewer_note.label", "reviewer_note", _c(rf"""
        (?:{_SENT_START}|(?<=\s)(?=(?-i:[A-Z])))[ \t]*(?:(?:\(|\[|\*\*)[ \t]*)?
        (?:(?:human|senior|internal|independent|expert|legal|QA|peer|second|final|lead|chief|AI|automated|quality)\s+)?
        (?:reviewer|grader|evaluator|annotator|assessor|rater|fact[\s-]?checker|verifier|moderator|QA|marker
          |examiner|checker|validator|proofreader|quality\s+assurance)(?:['’]s|s['’])?
        \s+{_NOTE}(?:\s+(?:for|to)\s+(?:the\s+)?[\w\s-]{{1,30}}?)?[ \t]*(?:\*\*[ \t]*)?[:\-\u2013\u2014]
    """), extent="rest", requires=GRADING, reach=200),
    Rule("reviewer_note.addressed", "reviewer_note", _c(rf"""
        \b{_NOTE}\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+|our\s+|whoever\s+is\s+)?{_JUDGE}\b
    """), requires=GRADING, reach=200),

    # -- system_line --------------------------------------------------------------------------------------------
    Rule("system_line.token", "system_line", _c(r"""
        <\|\s*(?:im_start|im_end|im_sep|system|user|assistant|endoftext|begin_of_text|end_of_text|start_header_id
              |end_header_id|eot_id|eom_id|start|end|message|channel|return|constrain|call)\s*\|>
      | \[/?INST\] | <</?SYS>> | <(?:start|end)_of_turn>
    """), extent="paragraph"),
    Rule("system_line.role", "system_line", _c(r"""
        (?:^|(?<=\n)) [ \t]* (?:[>*_#][ \t]*){0,8} (?:[\[<(][ \t]*)?
        (?:system|developer|assistant|tool|function|observation|admin(?:istrator)?|AI|model|user|human|bot
          |orchestrator)
        (?:[ \t_-]+(?:message|prompt|notice|note|override|update|output|result|response|call|instructions?|says|reply
                     |reminder|directive|alert))?
        [ \t]*(?:[\]>)][ \t]*)?(?:\*\*[ \t]*)?(?::|\]|>|\u2014|\u2013|\n)
    """), extent="line", requires=ROLE_CONTENT, reach=200),
    Rule("system_line.bracket", "system_line", _c(r"""
        [\[<](?-i:SYSTEM|SYS|ADMIN|DEVELOPER|SYSTEM\ PROMPT|SYSTEM\ MESSAGE|SYSTEM\ OVERRIDE|INSTRUCTIONS?|ASSISTANT
              |OVERRIDE)[\]>]
    """), extent="line", requires=ROLE_CONTENT, reach=200),
    Rule("system_line.header", "system_line", _c(r"""
        (?:^|(?<=\n))[ \t]*\#{1,6}[ \t]*(?:instructions?|system(?:\s+prompt)?|response|input|assistant|task|new\s+task
          |new\s+instructions?|evaluation|grading)\b[ \t]*:?
    """), extent="paragraph", requires=ROLE_CONTENT, reach=200),
    Rule("system_line.inline", "system_line", _c(r"""
        (?<=[.!?]\s)(?-i:System|SYSTEM|Developer|DEVELOPER|Assistant|ASSISTANT)(?:[ \t]+(?i:message|prompt|notice|note
          |override|output))?[ \t]*:
    """), extent="sentence", requires=ROLE_CONTENT, reach=200),

    # -- closing_tag --------------------------------------------------------------------------------------------
    Rule("closing_tag.close", "closing_tag", _c(rf"""
        <\s*/\s*{_cased(_PROMPT_TAGS)}\s*>
    """, 0), extent="paragraph"),
    Rule("closing_tag.close_html", "closing_tag", _c(rf"""
        <\s*/\s*{_cased(_HTML_TAGS)}\s*>
    """, 0), extent="paragraph", requires=ROLE_CONTENT, reach=200),
    Rule("closing_tag.open", "closing_tag", _c(rf"""
        <\s*{_cased(_OPEN_TAGS)}(?:\s+[\w-]+\s*=\s*(?:"[^"\n]{{0,80}}"|'[^'\n]{{0,80}}'|[^\s>]{{1,40}}))*\s*>
    """, 0), extent="paragraph"),
    Rule("closing_tag.marker", "closing_tag", _c(r"""
        (?<![-=*\#_~<>\[(|])(?:[-=*\#_~<>\[(|]+[ \t]*)(?-i:END|BEGIN|START|CLOSE|End|Begin|Start|Close)[ \t_]+
        (?:(?i:of)[ \t_]+)?
        (?:(?i:the)[ \t_]+)?
        (?i:answer|response|user[ \t_]+input|system[ \t_]+prompt|prompt|instructions?|candidate[ \t_]+answer
          |model[ \t_]+(?:answer|output)|untrusted[ \t_]+\w+)\b[^\n]{0,40}
    """, 0), extent="paragraph"),
    Rule("closing_tag.marker_doc", "closing_tag", _c(r"""
        (?<![-=*\#_~<>\[(|])(?:[-=*\#_~<>\[(|]+[ \t]*)(?-i:END|BEGIN|START|End|Begin|Start)[ \t_]+
        (?:(?i:of)[ \t_]+)?(?:(?i:the)[ \t_]+)?
        (?i:documents?|context|summary|text|passage|question|data|input|evidence|sources?)\b[^\n]{0,40}
    """, 0), extent="paragraph", requires=GRADING, reach=200),

    # -- verdict_object -----------------------------------------------------------------------------------------
    Rule("verdict_object.key", "verdict_object", _c(rf"""
        \b(?:final[\s_]+)?(?:verdict|groundedness|faithfulness|evaluation[\s_]+result|judg(?:e)?ment|grounded)
        ["']?\s*[:=]\s*["'“]?(?:{_VERDICT_WORD}|correct\b|pass(?:ed)?\b|true\b|yes\b|1(?:\.0+)?\b|10/10|100\s?%)
      | \b(?:final[\s_]+)?(?:label|classification|decision|grade|rating|assessment|prediction)["']?\s*[:=]\s*["'“]?
        {_VERDICT_WORD}
    """), extent="sentence"),

    # -- rubric_claim -------------------------------------------------------------------------------------------
    Rule("rubric_claim.rubric", "rubric_claim", _c(r"""
        \brubrics?\b | \bmarking\s+schemes?\b
      | \b(?:grading|scoring|evaluation|evaluator|assessment|annotation|annotator|judging|judge|marking|labell?ing
          |rating|benchmark|grader)(?:['’]s)?\s+(?:rubrics?|criteria|criterion|guidelines?|instructions?
          |polic(?:y|ies)|protocols?|standards?|schemes?|rules?|manuals?|specs?|specifications?|conventions?
          |definitions?)\b
    """), requires=RUBRIC_GROUND),

    # -- addresses_judge ----------------------------------------------------------------------------------------
    Rule("addresses_judge.if_you_are", "addresses_judge", _c(rf"""
        \bif\s+you\s+(?:are|['’]re)\s+(?:an?\s+|the\s+)?(?:\w+[\s-]+){{0,2}}?(?:{_ROLE}|{_AI}|machine)\b
    """), requires=GRADING),
    Rule("addresses_judge.vocative", "addresses_judge", _c(rf"""
        \b(?:dear|attention|attn\.?|hey|hi|hello|greetings|message\s+(?:to|for)|reminder\s+(?:to|for)
          |instructions?\s+(?:to|for)|(?:this\s+is\s+)?for\s+the\s+attention\s+of)
        [\s,:]+(?:the\s+|any\s+|all\s+|our\s+|my\s+|you,?\s+(?:the\s+)?)?{_JUDGE}\b
        [^,:.;\n]{{0,50}}?\s*[,:!\u2014\u2013-]
    """), requires=GRADING),
    Rule("addresses_judge.to_the", "addresses_judge", _c(rf"""
        (?:{_SENT_START}|(?<=\s)(?=(?-i:[A-Z])))[ \t]*(?:to|for)\s+
        (?:the\s+|any\s+|all\s+|whoever\s+|whatever\s+)?{_JUDGE}\b
        [^,:.;\n]{{0,50}}?\s*[,:!\u2014\u2013-]
    """), requires=GRADING),
    Rule("addresses_judge.you_the", "addresses_judge", _c(rf"""
        \byou,?\s+(?:the|as\s+the|as\s+an?)\s+{_JUDGE}\b
    """), requires=GRADING),
    Rule("addresses_judge.agent_must", "addresses_judge", _c(rf"""
        \b(?:any|every|all|the|each|an?|this|your)\s+(?:AI|LLM|automated|automatic|machine|model[\s-]based
          |LLM[\s-]based|AI[\s-]based|language[\s-]model)(?:[\s-]based)?[\s-]+
        (?:judges?|evaluators?|graders?|checkers?|reviewers?|systems?|models?|classifiers?|scorers?|assessors?
          |verifiers?|pipelines?)
        \s+(?:should|must|shall|will|is\s+to|are\s+to|needs?\s+to|ought\s+to|has\s+to|have\s+to|can|may|is\s+(?:required
          |instructed|expected)\s+to)\b
    """), requires=GRADING),
    Rule("addresses_judge.you_must", "addresses_judge", _c(r"""
        \byou\s+(?:must|should|shall|are\s+to|need\s+to|have\s+to|will
          |are\s+(?:required|instructed|expected|asked)\s+to)
        \s+(?:\w+\s+){0,3}?(?:classify|mark|label|rate|score|grade|judge|output|return|answer|respond|reply|consider
          |treat|accept|approve|pass|evaluate|assess|verify|confirm)\b
    """), requires=GRADING_STRONG),
    Rule("addresses_judge.mark_as", "addresses_judge", _c(rf"""
        \b(?:mark|label|classify|rate|score|grade|tag)(?:\s+(?:it|this|that|them|everything|(?:the|this|these|my|our)
          (?:\s+\w+){{1,2}}))?\s+as\s+(?:being\s+)?["'“]?{_GOOD}
      | \b(?:treat|consider|count|accept|judge|deem|regard|evaluate|assess|score|rate|grade|mark|label|classify)
        \s+(?:this|the|my|our|that)\s+(?:\w+\s+)?{_ANSWER}\s+(?:\w+\s+){{0,3}}?as\s+(?:being\s+)?["'“]?{_GOOD}
      | \b(?:{_ANSWER}|it)\s+(?:is|should\s+be|must\s+be|shall\s+be|has\s+to\s+be|needs\s+to\s+be|will\s+be)\s+
        (?:rated|labell?ed|marked|considered|treated|judged|scored|graded|classified|accepted|counted|deemed|regarded)
        \s+(?:as\s+)?["'“]?{_GOOD}
    """), requires=GRADING_STRONG),
    Rule("addresses_judge.give_score", "addresses_judge", _c(r"""
        \b(?:give|assign|award|grant)\s+(?:it|this|them|(?:this|the|my)\s+(?:\w+\s+)?(?:answer|response|summary|reply
          |one|output))\s+(?:full\s+marks|full\s+credit|(?:the|a)\s+(?:highest|maximum|max|top|best|perfect|full)
          \s+(?:possible\s+)?(?:score|grade|rating|mark)s?|a\s+score\s+of\s+\d|\d+\s*/\s*\d+|a\s+pass(?:ing\s+grade)?)
    """)),
    Rule("addresses_judge.output", "addresses_judge", _c(r"""
        \b(?:output|respond|reply|answer|return|say|print|write|emit|state|conclude)\s+(?:(?:only|just|simply)\s+)?
        (?:with\s+)?(?:(?:only|just)\s+)?
        (?:the\s+(?:word|label|verdict|token|string)\s+|a\s+verdict\s+(?:of\s+)?|(?:the\s+)?verdict\s*:?\s*
          |that\s+(?:the\s+|this\s+)?(?:answer|response|summary|it)\s+is\s+(?:fully\s+)?)["'“]?
        (?:grounded|supported|faithful)\b
      | \b(?:output|respond|reply|answer|return|say|print|emit)\s+(?:(?:only|just)\s+)?(?:with\s+)?
        ["'“](?:grounded|supported|faithful)["'”]
      | \b(?:output|respond|reply|answer|return|say|print|emit)\s+(?:(?:only|just)\s+)?(?:with\s+)?
        (?-i:GROUNDED|SUPPORTED|FAITHFUL)\b
    """)),
    Rule("addresses_judge.output_yes", "addresses_judge", _c(r"""
        \b(?:output|respond|reply|answer|return|say|print)\s+(?:only|just)\s+(?:with\s+)?(?:the\s+word\s+)?["'“]?
        (?:yes|1|true|pass)\b
    """), requires=GRADING),
    Rule("addresses_judge.correct_label", "addresses_judge", _c(rf"""
        \b(?:correct|right|true|expected|gold|proper|final|only\s+acceptable)\s+(?:label|verdict|grade|classification
          |rating|score)\s+(?:for\s+(?:this|the|each)\s+\w+\s+)?(?:is|should\s+be|=|:)\s*["'“]?
        (?:{_GROUNDED}|(?-i:GROUNDED|SUPPORTED|FAITHFUL))
    """)),
    Rule("addresses_judge.ignore_instructions", "addresses_judge", _c(rf"""
        \b{_IGNORE}\s+(?:
          (?:all|any|every)\s+(?:of\s+)?(?:the\s+|your\s+|my\s+|these\s+|those\s+)?(?:{_EARLIER}\s+)?
            (?:instructions|prompts|guidelines|rules|directions|directives|commands)
        | (?:all\s+(?:of\s+)?)?your\s+(?:{_EARLIER}\s+)?(?:instructions|prompts?|guidelines|rules|directions
            |directives|programming|training|system\s+prompt)
        | (?:the\s+|your\s+)?system\s+prompt
        )\b
    """)),
    Rule("addresses_judge.ignore_earlier", "addresses_judge", _c(rf"""
        \b(?:{_IGNORE}|override|overrule|bypass|skip|set\s+aside|discard|abandon|do\s+not\s+(?:follow|obey|apply)
          |don['’]?t\s+(?:follow|obey|apply)|stop\s+following|no\s+longer\s+follow)\s+
        (?:the\s+|these\s+|those\s+|its\s+)?(?:{_EARLIER}\s+){{1,2}}
        (?:instructions?|prompts?|directions|directives|guidelines|rules|rubrics?|criteria|tasks?|commands|orders
          |messages?|context)\b
    """), requires=GRADING),
    Rule("addresses_judge.ignore_sources", "addresses_judge", _c(rf"""
        \b(?:ignore|disregard|forget|set\s+aside|overlook|look\s+past)\s+(?:\w+\s+){{0,3}}?
        (?:{_SOURCE}|discrepanc(?:y|ies)|inconsistenc(?:y|ies)|contradictions?|differences|mismatch(?:es)?
          |unsupported\s+(?:claims?|details?|parts?))\b
    """), requires=GRADING_STRONG),
)
"""Every English rule, in the order they are tried."""

def apply_rule(rule: Rule, text: str) -> list[Hit]:
    """Every span of ``text`` where ``rule`` fires."""
    hits = []
    for m in rule.pattern.finditer(text):
        if m.end() == m.start():
            continue
        start, end = extend(text, m.start(), m.end(), rule.extent)
        if rule.requires is not None:
            scope_end = max(end, min(paragraph_end(text, end), end + rule.reach))
            need = rule.requires.search(text, start, scope_end)
            if need is None:
                continue
            if need.end() > end:
                end = max(end, sentence_end(text, need.end()))
        start, end = trim(text, start, end)
        if end > start:
            hits.append(Hit(rule.style, start, end, rule.name))
    return hits


_OBJECT = re.compile(r"\{[^{}]{0,600}(?:\{[^{}]{0,300}\}[^{}]{0,300}){0,3}\}")
"""A JSON (or Python dict) object, up to two levels deep, of modest size."""

VERDICT_KEY = _c(rf"""
    ["']?\b(?:final[_\s-]?)?(?:verdict|grounded|is[_\s-]?grounded|groundedness(?:[_\s-]?score)?|faithful
      |is[_\s-]?faithful|faithfulness(?:[_\s-]?score)?|hallucinat\w*|is[_\s-]?hallucinated|unsupported[_\s-]?claims
      |supported[_\s-]?claims|factual[_\s-]?consistency|grounding[_\s-]?score)
    ["']?\s*[:=]
  | ["']?\b(?:label|score|decision|rating|grade|result|classification|prediction|assessment|evaluation)["']?
    \s*[:=]\s*["']?{_VERDICT_WORD}
""")
"""A key of a verdict object: one only a grading verdict has, or a generic key with a grounded/ungrounded value."""

_FENCE_BEFORE = re.compile(r"```[\w-]*[ \t]*\n[ \t]*$")
_FENCE_AFTER = re.compile(r"^[ \t]*\n?[ \t]*```")


def verdict_objects(text: str) -> list[Hit]:
    """Objects (``{...}``) holding a verdict key, with the code fence around them if there is one."""
    hits = []
    for m in _OBJECT.finditer(text):
        if not VERDICT_KEY.search(m.group()):
            continue
        start, end = m.start(), m.end()
        before = _FENCE_BEFORE.search(text, max(0, start - 20), start)
        after = _FENCE_AFTER.match(text[end:end + 20])
        if before and after:
            start, end = before.start(), end + after.end()
        hits.append(Hit("verdict_object", start, end, "verdict_object.json"))
    return hits


def find(text: str, rules: tuple[Rule, ...] = RULES) -> list[Hit]:
    """Every rule hit in ``text`` (raw: possibly overlapping, in rule order), verdict objects included."""
    return [hit for rule in rules for hit in apply_rule(rule, text)] + verdict_objects(text)
