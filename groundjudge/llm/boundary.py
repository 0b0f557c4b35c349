"""Data that cannot close its own frame: per-block boundary codes and neutralised untrusted text.

Every judged text (answer, question, documents, claims taken from an answer) goes into a prompt inside
``<tag boundary="CODE"> ... </tag boundary="CODE">``. The code is a hash of the block's tag and its own text
(sha256, 16 base-32 characters): a text cannot know it (it would have to contain the hash of itself), so it cannot
close its block, and a new text gets a new code. Because the code depends on nothing else, a document's block
is the same for every answer judged against it, so the prompt's prefix stays the same (a local server's prefix
reuse and the providers' prompt caches keep working) and the call cache and replays stay exact. Before rendering, anything in the text that imitates the frame is neutralised:
block tags and chat-template tokens lose their angle brackets, role lines (``System:``, ``[INST]``, ``### Instruction``)
are marked as quoted, and JSON objects shaped like a verdict lose their braces and double quotes, so a model
cannot read them as the reply it is asked for.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import Any

BOUNDARY_CHARS = 16
"""Length of a boundary code (base-32, 80 bits)."""

_TAG = re.compile(r"<\s*(/?)\s*([A-Za-z_][\w:-]*)((?:\s[^<>]{0,200})?)(/?)\s*>")
_CHAT_TOKEN = re.compile(r"<\|[^<>|\n]{1,40}\|>|\[/?INST\]|<</?SYS>>|</?s>", re.IGNORECASE)
_ROLE_LINE = re.compile(
    r"(?im)^([ \t>*#\-\[(]*)(system|assistant|user|developer|tool|function|human|ai|instruction|instructions|"
    r"evaluator|grader|judge)(\s*(?:message|prompt|output|note)?\s*[\]):])")
_HEADER_LINE = re.compile(r"(?im)^(\s*#{2,}\s*)(system|instruction|instructions|response|assistant|user)\b")
_VERDICT_KEYS = re.compile(r"[\"']?(verdict|label|score|grounded|result|decision|pass|SCORE|REASONING|"
                           r"supported|verdicts|checks|answer)[\"']?\s*:", re.IGNORECASE)


def boundary_code(tag: str, text: Any) -> str:
    """The boundary code of one block: a hash of its tag and its text (what the text cannot know)."""
    payload = json.dumps([str(tag), "" if text is None else str(text)], ensure_ascii=False)
    digest = hashlib.sha256(payload.encode()).digest()
    return base64.b32encode(digest).decode()[:BOUNDARY_CHARS]


def _defuse_tag(match: re.Match) -> str:
    return "‹" + match.group(0)[1:-1] + "›"


def _defuse_json(text: str) -> str:
    """JSON-like objects that carry a verdict-shaped key lose their braces and double quotes."""
    depth, start = 0, None
    pieces, last = [], 0
    for i, ch in enumerate(text):
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0 and start is not None:
                body = text[start:i + 1]
                if _VERDICT_KEYS.search(body):
                    pieces.append(text[last:start])
                    pieces.append("(" + body[1:-1].replace("{", "(").replace("}", ")").replace('"', "'") + ")")
                    last = i + 1
                start = None
    pieces.append(text[last:])
    return "".join(pieces)


def neutralise(text: Any) -> str:
    """The text with whatever imitates the prompt's frame made inert (see the module docstring); plain prose is
    returned unchanged."""
    text = "" if text is None else str(text)
    text = _CHAT_TOKEN.sub(_defuse_tag, text)
    text = _TAG.sub(_defuse_tag, text)
    text = _ROLE_LINE.sub(lambda m: f"{m.group(1)}(quoted) {m.group(2)}{m.group(3)}", text)
    text = _HEADER_LINE.sub(lambda m: f"{m.group(1)}(quoted) {m.group(2)}", text)
    if "{" in text:
        text = _defuse_json(text)
    return text
