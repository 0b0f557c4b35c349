"""The pool of labelled examples a judge may show as demonstrations: its file format and the text hashes that
identify an answer (what the leakage check compares).

A pool file is JSON Lines, one :class:`Demonstration` per line: ``id``, ``context`` (one document or a list),
``answer``, ``label`` (grounded / ungrounded), and optionally ``question``, a person's ``note``, ``judge_label``
(what a judge said of it: a correction when it differs from ``label``) and ``source``. A labelled data file in the
native format (``error_types``, ``split``, ``meta`` are accepted and not shown) is a pool as it is. A bad line
stops the read with one error naming ``file:line:field``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from groundjudge.errors import UsageError
from groundjudge.types import Example, GoldLabel, VerdictLabel


class PoolError(UsageError):
    """A pool file that cannot be read as given (the message names file, line and field)."""


def _norm(text: str | None) -> str:
    return " ".join((text or "").split())


def text_hash(answer: str, context: Sequence[str]) -> str:
    """sha256 (16 hex) of an answer and its documents, whitespace collapsed: the identity of a judged answer
    (an example and a demonstration with the same hash are the same answer)."""
    payload = json.dumps([_norm(answer), [_norm(doc) for doc in context]], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


class Demonstration(BaseModel):
    """One labelled example a judge may show in its prompt (a line of a pool file)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str = Field(min_length=1, description="Unique within the pool.")
    question: str | None = Field(default=None, description="The question the answer responds to, if any.")
    context: tuple[str, ...] = Field(min_length=1, description="The source documents (one or more).")
    answer: str = Field(min_length=1, description="The answer.")
    label: GoldLabel = Field(description="The correct verdict, as the prompt shows it.")
    note: str = Field(default="", description="A person's note on why (shown, framed as data).")
    judge_label: VerdictLabel | None = Field(default=None, description=(
        "What a judge said of this answer; differing from label, the example is a correction."))
    source: str | None = Field(default=None, description="Where it came from, e.g. 'labels:run-…' (not shown).")
    error_types: tuple[str, ...] = Field(default=(), description="Accepted from data files; not shown.")
    split: str | None = Field(default=None, description="Accepted from data files; not shown.")
    meta: dict[str, Any] = Field(default_factory=dict, description="Accepted from data files; not shown.")

    @field_validator("context", mode="before")
    @classmethod
    def _context_as_tuple(cls, value: Any) -> Any:
        return (value,) if isinstance(value, str) else value

    @cached_property
    def hash(self) -> str:
        """:func:`text_hash` of its answer and documents."""
        return text_hash(self.answer, self.context)

    @cached_property
    def content_hash(self) -> str:
        """sha256 (16 hex) of everything the prompt shows of it: question, documents, answer, label, note."""
        payload = json.dumps([self.question, list(self.context), self.answer, self.label, self.note],
                             ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]

    @property
    def is_correction(self) -> bool:
        """Whether a judge got it wrong (its ``judge_label`` is a verdict other than ``label``)."""
        return self.judge_label in ("grounded", "ungrounded") and self.judge_label != self.label


def _field(error: dict) -> str:
    return ".".join(str(part) for part in error.get("loc", ())) or "line"


def read_pool(path: str | Path) -> list[Demonstration]:
    """Every demonstration of a pool file, in file order; a bad line, a duplicate id or an empty pool is a
    :class:`PoolError` naming ``file:line:field``."""
    path = Path(path)
    if not path.is_file():
        raise PoolError(f"{path}: no such pool file (demos= names a JSONL file of labelled examples)")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise PoolError(f"{path}: not UTF-8 (byte {err.start})") from None
    pool: list[Demonstration] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise PoolError(f"{path}:{number}: not a JSON object ({err.msg})") from None
        if not isinstance(row, dict):
            raise PoolError(f"{path}:{number}: not a JSON object")
        try:
            demo = Demonstration.model_validate(row)
        except ValidationError as err:
            first = err.errors()[0]
            raise PoolError(f"{path}:{number}:{_field(first)}: {first['msg']}") from None
        if demo.id in seen:
            raise PoolError(f"{path}:{number}:id: duplicate id {demo.id!r} (first on line {seen[demo.id]})")
        seen[demo.id] = number
        pool.append(demo)
    if not pool:
        raise PoolError(f"{path}: the pool is empty")
    return pool


def write_pool(path: str | Path, demos: Iterable[Demonstration]) -> Path:
    """Write demonstrations as a pool file (one JSON object per line, defaults left out); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [demo.model_dump_json(exclude_defaults=True) for demo in demos]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def pool_from_examples(examples: Iterable[Example]) -> list[Demonstration]:
    """Labelled examples (e.g. a train split) as a pool; unlabelled ones (and empty answers) are left out."""
    return [Demonstration(id=ex.id, question=ex.question, context=ex.context, answer=ex.answer, label=ex.label,
                          error_types=ex.error_types, split=ex.split)
            for ex in examples if ex.label is not None and ex.answer]
