"""The readers' instructions of a blind benchmark check: the ``README.md`` that ``label-benchmark draw`` writes
beside the blind files. The six error types, their definitions and the rulings for where two types seem to fit
come from the taxonomy file the error-types judge uses (``judges/taxonomies/legal_error_types.json``), so readers,
judge and generator read one text."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from groundjudge.labels.interchange_common import DEFAULT_TAXONOMY
from groundjudge.labels.store import LabelsError

RULING = " Ruling: "
"""Where a taxonomy definition's ruling starts (the text after it decides between two types that seem to fit)."""

_HEAD = """# Labelling sample {sample}: is each answer supported by its documents?

You are a reader. Each item in your file is a **question**, the **documents** an answer must rest on (excerpts of
non-disclosure agreements, or statutes and rules of fictional jurisdictions), and an **answer**. For every item,
decide whether everything the answer says is supported by the documents, and if not, what kind of error it makes.

## Your files

| you are | read | write |
|---|---|---|
{files}

Read **only your own blind file** and this README. Do not open any other file in this folder (another labeller's
file or labels, or any key), do not search the groundjudge repository, its datasets or its results for the items,
and do not use any tool that judges the answers for you: the point is your own, independent reading. Judge each
item against **its own documents only**, not against what you know of the law.

## How to judge an item

1. Read the question, then the documents, then the answer.
2. Label it:
   - **`grounded`**: everything the answer states is supported by the documents. A verbatim copy and a faithful
     rewording are both grounded. Leaving out details that do not change what the answer states is not an error.
   - **`ungrounded`**: at least one thing the answer states is not supported by, or contradicts, the documents:
     a changed number, party, term, condition, step or conclusion, or a rule stated more broadly than the documents
     state it (a condition, limitation or exception the documents attach to it is dropped).
   - **`unsure`**: you have read carefully and still cannot decide. Use it sparingly.
3. If `ungrounded`, give the **error type(s)** from the six below, written exactly as named. Usually one fits; give
   two only if the answer truly makes two different errors. Where two types seem to fit one error, the rulings
   below the table decide which one it is.
4. Say whether the answer is **fluent**: `false` if it is ungrammatical, garbled or reads as nonsense (for example
   a doubled or misplaced word), whatever its grounding; otherwise `true`.
5. Write a one-line **note**: for an ungrounded answer, quote the wrong words and what the documents say instead;
   for a grounded one, anything worth saying (may be empty).

Some things are **not** errors by themselves: an answer that is an excerpt of the contract and starts with a
clause number ("2. The Recipient shall ...") or a list marker ("(iii) ..."), or ends where the excerpt ends; a
generic question that the answer addresses only in part. Judge what the answer *states*.

Items are independent. Several items may share a question and documents; judge each answer on its own, and do not
assume anything about how many answers are right or wrong.

## The six error types

| name (write exactly this) | definition |
|---|---|
{types}

**Where two types seem to fit** (these rulings decide; they are part of the definitions):

{rulings}

## Output format

One JSON object per line, **one line per item** of your blind file, in any order (the file's order is fine),
UTF-8, no other text in the file:

```json
{{"id": "EXAMPLE-1", "label": "ungrounded", "error_types": ["Factual Inaccuracies"], "fluent": true, "note": "says 30 days; clause 4 says 60 days", "labeller": "A"}}
{{"id": "EXAMPLE-2", "label": "grounded", "error_types": [], "fluent": true, "note": "", "labeller": "A"}}
{{"id": "EXAMPLE-3", "label": "unsure", "error_types": [], "fluent": false, "note": "garbled second sentence; cannot tell which party it means", "labeller": "A"}}
```

(The examples show the format only: `EXAMPLE-n` is not an id of any item; use the ids of your blind file, which
look like `{sample}-123`.)

| field | value |
|---|---|
| `id` | the item's id, copied from the blind file |
| `label` | `"grounded"`, `"ungrounded"` or `"unsure"` |
| `error_types` | a list of the names above; `[]` unless the label is `ungrounded` |
| `fluent` | `true` or `false` |
| `note` | one line of text (may be `""`) |
| `labeller` | {labellers} |

A line with an id that is not in your blind file, a label other than the three, or an error type that is not one
of the six names is rejected when the labels are read, so copy ids and names exactly. If you relabel an item, you
may add a new line for it: the last line of an id counts.
"""


def taxonomy_entries(path: str | Path | None = None) -> list[tuple[str, str]]:
    """(name, definition) of each type of a taxonomy file (default: the six legal error types); a file that is not
    one is a LabelsError naming it."""
    source = Path(path) if path else DEFAULT_TAXONOMY
    try:
        return [(str(e["name"]), str(e["definition"])) for e in json.loads(source.read_text(encoding="utf-8"))]
    except (OSError, ValueError, TypeError, KeyError) as err:
        raise LabelsError(f"taxonomy {source}: not a JSON list of {{name, definition}} ({err})") from None


def split_ruling(definition: str) -> tuple[str, str | None]:
    """A taxonomy definition as (what the type is, its ruling or None): the ruling is the text after ``Ruling:``."""
    head, sep, ruling = definition.partition(RULING)
    return head, (ruling if sep else None)


def readers_readme(sample: str, parts: Mapping[str, tuple[str, int]], taxonomy: str | None = None) -> str:
    """The readers' README of a drawn sample: ``parts`` maps each part (A, B) to its blind file's name and item
    count; the types, definitions and rulings are those of ``taxonomy`` (default: the legal taxonomy)."""
    entries = taxonomy_entries(taxonomy)
    files = "\n".join(f"| labeller {part} | `{name}` ({count} items) | `labels_{part}.jsonl` in this folder |"
                      for part, (name, count) in parts.items())
    types, rulings = [], []
    for name, definition in entries:
        head, ruling = split_ruling(definition)
        types.append(f"| `{name}` | {head} |")
        if ruling:
            rulings.append(f"- **{name}.** {ruling[:1].upper()}{ruling[1:]}")
    labellers = " or ".join(f'`"{part}"`' for part in parts)
    return _HEAD.format(sample=sample, files=files, types="\n".join(types),
                        rulings="\n".join(rulings) or "- (this taxonomy gives none)", labellers=labellers)
