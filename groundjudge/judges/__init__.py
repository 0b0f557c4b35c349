"""The Judge protocol, the registry of judges by name, and judge specs (``name:key=value,...``).

A judge is a frozen dataclass of its settings with ``async def judge(example)
-> JudgeResult``; nothing about an example is stored on it, so one judge serves
many examples at once. Score-based judges also expose ``threshold`` and are
calibrated by replacing it (``dataclasses.replace``); one whose settings can leave
the threshold unused says so with a ``uses_threshold`` property.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any, ClassVar, Protocol, runtime_checkable

from groundjudge.types import Example, JudgeResult, JudgeSpec

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

def parse_spec(text: str) -> tuple[str, dict[str, Any]]:
    """Split ``name:key=value,key=value`` into the name and raw settings (see :mod:`groundjudge.judges.config`)."""
    from groundjudge.judges.config import parse_spec as parse

    return parse(text)


def uses_llm(spec_text: str) -> bool:
    """Whether a judge (or a judge inside it) calls a language model: its class has a ``service`` field."""
    cls = judge_class(parse_spec(spec_text)[0])
    return any(f.name == "service" for f in dataclasses.fields(cls))


def build_judge(text: str, **runtime: Any) -> tuple[Judge, JudgeSpec]:
    """Create a judge from its spec text; unknown names or settings are clear errors.

    ``runtime`` objects (such as the run's LLM ``service``) are handed to judges
    that have a field of that name; they are not settings and are not recorded.
    """
    from groundjudge.judges.config import JudgeConfig

    config = JudgeConfig.from_spec(text)
    judge = config.build(**runtime)
    return judge, JudgeSpec(spec=text, name=config.kind, settings=judge_settings(judge))


def judge_settings(judge: Any) -> dict[str, Any]:
    """The settings of a judge dataclass, as plain JSON values (local paths portable)."""
    from groundjudge.judges.config import recorded_settings

    return recorded_settings(judge)


def describe_judges() -> list[dict[str, Any]]:
    """Name, one-line description and settings (with defaults) of every registered judge."""
    from groundjudge.judges.config import config_model

    rows = []
    for name, cls in sorted(load_builtin_judges().items()):
        doc = (cls.__doc__ or "").strip().splitlines()
        fields = config_model(name).model_fields
        settings = {key: (None if f.is_required() else f.default) for key, f in fields.items()}
        rows.append({"name": name, "description": doc[0] if doc else "", "settings": settings})
    return rows
