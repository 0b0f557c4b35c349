"""Three-way NLI pairs as TSV (``label<TAB>premise<TAB>hypothesis``), e.g. MNLI / SNLI samples.

The premise is the context and the hypothesis the answer: entailment is
grounded; contradiction and neutral (not supported by the premise) are
ungrounded, with the NLI label kept in meta and as the error type. PTB
tokenisation (``-LRB-``, `` n't``) is undone so the text reads naturally.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from groundjudge.formats._common import RowError, head_text, make_example, read_lines
from groundjudge.types import Example

NAME = "nli_tsv"
LABELS = {"entailment": "grounded", "neutral": "ungrounded", "contradiction": "ungrounded"}
_PTB = (
    (re.compile(r"-LRB-|-LCB-|-LSB-"), lambda m: {"-LRB-": "(", "-LCB-": "{", "-LSB-": "["}[m.group()]),
    (re.compile(r"-RRB-|-RCB-|-RSB-"), lambda m: {"-RRB-": ")", "-RCB-": "}", "-RSB-": "]"}[m.group()]),
    (re.compile(r"``\s*"), lambda m: '"'),
    (re.compile(r"\s*''"), lambda m: '"'),
    (re.compile(r" (n't|'s|'re|'ve|'ll|'d|'m|')(?=\s|$)", re.IGNORECASE), lambda m: m.group(1)),
    (re.compile(r" ([,.;:!?%)\]}])"), lambda m: m.group(1)),
    (re.compile(r"([(\[{$]) "), lambda m: m.group(1)),
    (re.compile(r"\s+"), lambda m: " "),
)


def detokenize(text: str) -> str:
    """Undo PTB tokenisation: brackets, quotes, split clitics (" n't"), spaces around punctuation."""
    for pattern, replacement in _PTB:
        text = pattern.sub(replacement, text)
    return text.strip()


def detect(path: Path) -> bool:
    """A .tsv/.txt file whose first line is an NLI label and two texts."""
    first = head_text(path, 65536).split("\n", 1)[0].rstrip("\r").split("\t")
    return len(first) == 3 and first[0].strip().lower() in LABELS


def load(path: Path) -> Iterator[Example | RowError]:
    """One example per line: premise -> context, hypothesis -> answer."""
    for line, text in read_lines(path):
        if isinstance(text, RowError):
            yield text
            continue
        if not text.strip():
            continue
        parts = text.split("\t")
        if len(parts) != 3:
            yield RowError(file=str(path), line=line, field="<row>",
                           message=f"expected 3 tab-separated fields, got {len(parts)}")
            continue
        label, premise, hypothesis = parts
        label = label.strip().lower()
        if label not in LABELS:
            yield RowError(file=str(path), line=line, field="label", message=f"unknown NLI label {label!r}")
            continue
        premise = detokenize(premise)
        yield make_example(path, line, id=f"{path.stem}-{line}", context=[premise], answer=detokenize(hypothesis),
                           label=LABELS[label], error_types=() if label == "entailment" else (label,),
                           meta={"group": f"{path.stem}-{line}", "nli_label": label, "source": "nli_tsv"})
