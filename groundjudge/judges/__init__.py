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
import typing
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
    "fallback", "cascade")}
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

def parse_spec(text: str) -> tuple[str, dict[str, str]]:
    """Split ``name:key=value,key=value`` into the name and raw string settings."""
    name, _, rest = text.partition(":")
    settings: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise SpecError(f"judge spec {text!r}: setting {part!r} is not key=value")
        settings[key.strip()] = value.strip()
    return name.strip(), settings

def _coerce(value: str, annotation: Any, where: str) -> Any:
    """Turn a setting's text into the dataclass field's type."""
    is_union = typing.get_origin(annotation) in (typing.Union, getattr(__import__("types"), "UnionType", None))
    options = typing.get_args(annotation) if is_union else (annotation,)
    if value.lower() in ("none", "null") and type(None) in options:
        return None
    for option in options:
        if option is bool:
            if value.lower() in ("1", "true", "yes", "on"):
                return True
            if value.lower() in ("0", "false", "no", "off"):
                return False
        elif option in (int, float):
            try:
                return option(value)
            except ValueError:
                continue
        elif option is str:
            return value
        elif typing.get_origin(option) is typing.Literal:
            if value in typing.get_args(option):
                return value
            raise SpecError(f"{where}: {value!r} is not one of {typing.get_args(option)}")
    raise SpecError(f"{where}: cannot read {value!r} as {annotation}")

def _is_setting(f: dataclasses.Field) -> bool:
    return f.init and not f.metadata.get("runtime")


def build_judge(text: str, **runtime: Any) -> tuple[Judge, JudgeSpec]:
    """Create a judge from its spec text; unknown names or settings are clear errors.

    ``runtime`` objects (such as the run's LLM ``service``) are handed to judges
    that have a field of that name; they are not settings and are not recorded.
    """
    name, raw = parse_spec(text)
    cls = judge_class(name)
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if _is_setting(f)}
    kwargs: dict[str, Any] = {name: value for name, value in runtime.items()
                              if any(f.name == name and f.metadata.get("runtime") for f in dataclasses.fields(cls))}
    for key, value in raw.items():
        if key not in fields:
            raise SpecError(f"judge {name!r} has no setting {key!r}; settings: {', '.join(fields)}")
        kwargs[key] = _coerce(value, hints[key], f"{name}:{key}")
    judge = cls(**kwargs)
    return judge, JudgeSpec(spec=text, name=name, settings=judge_settings(judge))

def judge_settings(judge: Any) -> dict[str, Any]:
    """The settings of a judge dataclass, as plain JSON values."""
    return {f.name: getattr(judge, f.name) for f in dataclasses.fields(judge) if _is_setting(f)}

def describe_judges() -> list[dict[str, Any]]:
    """Name, one-line description and settings (with defaults) of every registered judge."""
    rows = []
    for name, cls in sorted(load_builtin_judges().items()):
        doc = (cls.__doc__ or "").strip().splitlines()
        settings = {f.name: (f.default if f.default is not dataclasses.MISSING else None)
                    for f in dataclasses.fields(cls) if _is_setting(f)}
        rows.append({"name": name, "description": doc[0] if doc else "", "settings": settings})
    return rows
