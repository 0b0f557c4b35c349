"""The Judge protocol and the registry of judges by name: a judge class registers itself (``@register``); a
built-in one is imported on first use (:data:`BUILTIN`). Re-exported by :mod:`groundjudge.judges`."""

from __future__ import annotations

import dataclasses
import importlib
from typing import ClassVar, Protocol, runtime_checkable

from groundjudge.types import Example, JudgeResult


@runtime_checkable
class Judge(Protocol):
    """Anything that judges one example at a time."""

    name: ClassVar[str]
    max_concurrency: ClassVar[int | None]
    """How many examples may be judged at once (None: the run's --concurrency)."""

    async def judge(self, example: Example) -> JudgeResult:
        """Judge one example."""
        ...


REGISTRY: dict[str, type] = {}
"""Judge classes by name."""

BUILTIN = {name: f"groundjudge.judges.{name}" for name in (
    "quip", "cosine", "span", "nli", "crossencoder", "views", "direct", "claims", "triplets", "selfcheck", "error_types",
    "fallback", "cascade", "hhem", "minicheck", "stack")} | {"spans": "groundjudge.judges.span_tagger"}
"""Built-in judges by name -> the module that registers it (imported only when the judge is used)."""


def register(cls: type) -> type:
    """Class decorator: add a judge dataclass to the registry under its ``name``."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls.__name__} must be a dataclass")
    REGISTRY[cls.name] = cls
    return cls


def judge_class(name: str) -> type:
    """The class of a judge by name, importing its module on first use."""
    if name not in REGISTRY and name in BUILTIN:
        importlib.import_module(BUILTIN[name])
    if name not in REGISTRY:
        raise SpecError(f"unknown judge {name!r}; known: {', '.join(sorted(set(BUILTIN) | set(REGISTRY)))}")
    return REGISTRY[name]


def load_builtin_judges() -> dict[str, type]:
    """Import every built-in judge module and return the registry."""
    for name in BUILTIN:
        judge_class(name)
    return REGISTRY


class SpecError(ValueError):
    """A judge spec that names an unknown judge or setting, or a value of the wrong type."""
