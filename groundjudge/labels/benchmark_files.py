"""The files of a benchmark check (:mod:`groundjudge.labels.benchmark_sample`): a **blind** file per labeller and
one hidden **key**.

* ``blind_A.jsonl`` / ``blind_B.jsonl``: one item a line, ``{"id", "question", "documents", "answer"}`` (the shape
  ``groundjudge label --export`` gives an answer), in an order shuffled apart for each file. The id is the
  sample's tag and a number from a seeded permutation: it says nothing of the row, its kind, rule or type.
* ``key.jsonl``: a header line (the sample's tag, the data file's hash, the settings, the judges whose verdicts
  made strata, every stratum's size and its rules' sizes, the taxonomy) and one line per item: its id, row id,
  kind, intended type, rule, source, split, verdict pattern, stratum, and inclusion probability per part.

:func:`leaks` checks a written blind file against its key: an item holds exactly the four fields, the row's own
text, and no key value (row id, source id, rule, type, stratum) appears in it except where the row's own question,
documents or answer already contain it.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from groundjudge.labels.benchmark_sample import PARTS, Drawn, DrawSettings, Unit
from groundjudge.labels.store import LabelsError
from groundjudge.types import Example

BLIND_FILES = {"A": "blind_A.jsonl", "B": "blind_B.jsonl"}
"""The blind file of each part, by default in the output folder."""

KEY_FILE = "key.jsonl"
"""The key's default name."""


class BlindItem(BaseModel):
    """What a reader sees of one item: an opaque id, the question, the documents and the answer."""

    model_config = ConfigDict(extra="forbid")

    id: str
    question: str | None
    documents: list[str]
    answer: str


class KeyItem(Unit):
    """The hidden truth of one item: its row and how it was drawn."""

    id: str
    stratum_name: str = Field(description="The stratum it was drawn from (cell | verdict pattern).")
    pi: dict[str, float] = Field(description="Inclusion probability per part it is in (A, and B for part B).")


class KeyHeader(BaseModel):
    """The key's first line: which sample this is and every figure the weights need."""

    kind: Literal["header"] = "header"
    sample: str = Field(description="The sample's tag: the prefix of every item id.")
    dataset: str = Field(description="The data file's name.")
    dataset_sha256: str
    settings: DrawSettings
    judges: list[str] = Field(default_factory=list, description="The judges whose verdict patterns made strata.")
    parts: dict[str, str] = Field(description="Part -> its blind file's name.")
    strata: dict[str, int] = Field(description="Stratum -> rows of the benchmark in it.")
    rules: dict[str, dict[str, int]] = Field(description="Stratum -> generator rule -> rows of the benchmark in it.")
    taxonomy: list[str]
    excluded: dict[str, int] | None = Field(default=None, description=(
        "Sample tag of each earlier key whose row ids were left out of the benchmark before the draw -> rows of the "
        "benchmark left out for it (None: nothing left out). The strata, and so the weights, count only the rows "
        "left in."))

    def dump(self) -> dict:
        """The header as written: without ``excluded`` when nothing was left out (keys as before it existed)."""
        data = self.model_dump()
        if data["excluded"] is None:
            data.pop("excluded")
        return data


class KeyFileError(LabelsError):
    """A key file that cannot be read as one; the message names file and line."""


def sample_tag(dataset_sha256: str, settings: DrawSettings, judges: Sequence[str],
               excluded: Sequence[str] = ()) -> str:
    """Six hex digits naming a sample: the data, the settings, the judges' strata and the earlier samples whose
    rows were left out."""
    parts: list = [dataset_sha256, settings.model_dump(), list(judges)]
    if excluded:
        parts.append(sorted(excluded))
    text = json.dumps(parts, sort_keys=True)
    return "s" + hashlib.sha256(text.encode()).hexdigest()[:6]


def opaque_ids(drawn: Drawn, tag: str, seed: int) -> dict[str, str]:
    """row id -> ``<tag>-<number>``, the numbers a seeded permutation (no order of the rows or strata shows)."""
    rows = sorted(drawn.pi)
    numbers = list(range(1, len(rows) + 1))
    random.Random(f"{seed}\x1fids\x1f{tag}").shuffle(numbers)
    width = len(str(len(rows)))
    return {row: f"{tag}-{number:0{width}d}" for row, number in zip(rows, numbers)}


def _write_jsonl(path: Path, objects: Sequence[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(obj, ensure_ascii=False) + "\n" for obj in objects), encoding="utf-8")


def write_round(drawn: Drawn, examples: Mapping[str, Example], header: KeyHeader, paths: Mapping[str, Path]) -> None:
    """Write each part's blind file (``paths["A"]``, ``paths["B"]``) and the key (``paths["key"]``)."""
    ids = opaque_ids(drawn, header.sample, header.settings.seed)
    items = []
    for unit in sorted(drawn.units, key=lambda u: ids[u.row_id]):
        items.append(KeyItem(**unit.model_dump(), id=ids[unit.row_id], stratum_name=unit.stratum,
                             pi=drawn.pi[unit.row_id]))
    _write_jsonl(paths["key"], [header.dump(), *(item.model_dump() for item in items)])
    for part in PARTS:
        members = [item for item in items if part in item.pi]
        if not members:
            continue
        random.Random(f"{header.settings.seed}\x1forder\x1f{part}").shuffle(members)
        _write_jsonl(paths[part], [BlindItem(id=item.id, question=examples[item.row_id].question,
                                             documents=list(examples[item.row_id].context),
                                             answer=examples[item.row_id].answer).model_dump() for item in members])


def read_key(path: str | Path) -> tuple[KeyHeader, dict[str, KeyItem]]:
    """A key file: its header and its items by id; a bad line is a KeyFileError naming file and line."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise KeyFileError(f"{path}: cannot be read as a key ({err})") from None
    header: KeyHeader | None = None
    items: dict[str, KeyItem] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            if header is None:
                header = KeyHeader.model_validate(obj)
            else:
                item = KeyItem.model_validate(obj)
                items[item.id] = item
        except json.JSONDecodeError as err:
            raise KeyFileError(f"{path}:{number}: not a JSON object ({err.msg})") from None
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(part) for part in first.get("loc", ())) or "line"
            what = "header" if header is None else "item"
            raise KeyFileError(f"{path}:{number}:{where}: not a benchmark key {what} line ({first['msg']})") \
                from None
    if header is None:
        raise KeyFileError(f"{path}: empty, not a benchmark key")
    return header, items


def _secrets(item: KeyItem) -> list[str]:
    """What an item's key line says that its blind line must not."""
    values = [item.row_id, item.source_id, item.stratum_name, item.cell]
    values += [value for value in (item.intended_type, item.rule) if value]
    if item.rule:
        values += [part for part in item.rule.split(".") if len(part) > 3]
    return values


def leaks(blind: str | Path, key: str | Path, examples: Mapping[str, Example]) -> list[str]:
    """Problems of a blind file against its key and the data (empty: none): a field beyond the four, text that is
    not the row's own, or any key value of any item found in the file beyond the rows' own text."""
    _, items = read_key(key)
    by_id = dict(items)
    secrets = sorted({value for item in items.values() for value in _secrets(item)}
                     | {"~", "variant", "paraphrase", "restatement", "intended", "stratum"}, key=len, reverse=True)
    problems = []
    for number, line in enumerate(Path(blind).read_text(encoding="utf-8").splitlines(), start=1):
        obj = json.loads(line)
        if set(obj) != {"id", "question", "documents", "answer"}:
            problems.append(f"{blind}:{number}: fields {sorted(obj)}")
            continue
        item = by_id.get(obj["id"])
        if item is None:
            problems.append(f"{blind}:{number}: id {obj['id']!r} not in the key")
            continue
        row = examples[item.row_id]
        if (obj["question"], obj["documents"], obj["answer"]) != (row.question, list(row.context), row.answer):
            problems.append(f"{blind}:{number}: text is not its row's own")
        own = " ".join([row.question or "", *row.context, row.answer]).lower()
        for secret in secrets:
            if line.lower().count(secret.lower()) > own.count(secret.lower()) + (secret.lower() in obj["id"].lower()):
                problems.append(f"{blind}:{number}: {secret!r} appears beyond the row's own text")
    return problems
