"""3-way NLI rows (MNLI / SNLI TSV: label, premise, hypothesis) as training pairs for the NLI head."""

from __future__ import annotations

from pathlib import Path

from groundjudge.formats import RowError
from groundjudge.formats._common import read_lines
from groundjudge.formats.load import DataError
from groundjudge.formats.nli_tsv import detokenize
from groundjudge.local_nli.pairs import Pair

detokenize_ptb = detokenize
"""PTB detokenisation, shared with the NLI TSV data adapter."""


NLI_LABELS = ("entailment", "neutral", "contradiction")
"""The three NLI labels, in head order."""


def read_nli_tsv(path: str | Path) -> list[Pair]:
    """Rows of a ``label<TAB>premise<TAB>hypothesis`` file as NLI pairs; bad rows raise DataError."""
    path = Path(path)
    if not path.is_file():
        raise DataError([RowError(file=str(path), line=0, field="<file>", message="no such file")])
    pairs: list[Pair] = []
    errors: list[RowError] = []
    for number, line in read_lines(path):   # the shared reader: a non-UTF-8 line is a named RowError
        if isinstance(line, RowError):
            errors.append(line)
            continue
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 3:
            errors.append(RowError(file=str(path), line=number, field="<row>",
                                   message=f"expected 3 tab-separated fields, got {len(parts)}"))
            continue
        label, premise, hypothesis = (p.strip() for p in parts)
        if number == 1 and label.lower() == "label":
            continue
        if label.lower() not in NLI_LABELS:
            errors.append(RowError(file=str(path), line=number, field="label",
                                   message=f"{label!r} is not one of {', '.join(NLI_LABELS)}"))
            continue
        pairs.append(Pair(premise=detokenize_ptb(premise), hypothesis=detokenize_ptb(hypothesis),
                          label=label.lower(), source=f"nli:{path.name}", group=f"nli:{path.name}:{number}"))
    if errors:
        raise DataError(errors)
    return pairs
