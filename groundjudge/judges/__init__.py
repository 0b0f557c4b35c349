"""The Judge protocol, the registry of judges by name, and judge specs (``name:key=value,...``).

A judge is a frozen dataclass of its settings with ``async def judge(example)
-> JudgeResult``; nothing about an example is stored on it, so one judge serves
many examples at once. Score-based judges also expose ``threshold`` and are
calibrated by replacing it (``dataclasses.replace``); one whose settings can leave
the threshold unused says so with a ``uses_threshold`` property.

The protocol and the registry are in :mod:`groundjudge.judges.registry`, the typed configs and the spec reader in
:mod:`groundjudge.judges.config`; what a user needs of both is importable from here.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from groundjudge.judges.config import JudgeConfig, config_model, parse_spec, recorded_settings
from groundjudge.judges.registry import (
    BUILTIN,
    REGISTRY,
    Judge,
    SpecError,
    judge_class,
    load_builtin_judges,
    register,
)
from groundjudge.types import JudgeSpec

__all__ = ["BUILTIN", "REGISTRY", "Judge", "SpecError", "build_judge", "describe_judges", "judge_class",
           "judge_settings", "load_builtin_judges", "parse_spec", "register", "uses_llm"]


def uses_llm(spec_text: str) -> bool:
    """Whether a judge (or a judge inside it) calls a language model: its class has a ``service`` field."""
    cls = judge_class(parse_spec(spec_text)[0])
    return any(f.name == "service" for f in dataclasses.fields(cls))


def build_judge(text: str, **runtime: Any) -> tuple[Judge, JudgeSpec]:
    """Create a judge from its spec text; unknown names or settings are clear errors.

    ``runtime`` objects (such as the run's LLM ``service``) are handed to judges
    that have a field of that name; they are not settings and are not recorded.
    """
    config = JudgeConfig.from_spec(text)
    judge = config.build(**runtime)
    return judge, JudgeSpec(spec=text, name=config.kind, settings=judge_settings(judge))


def judge_settings(judge: Any) -> dict[str, Any]:
    """The settings of a judge dataclass, as plain JSON values (local paths portable)."""
    return recorded_settings(judge)


def describe_judges() -> list[dict[str, Any]]:
    """Name, one-line description and settings (with defaults) of every registered judge."""
    rows = []
    for name, cls in sorted(load_builtin_judges().items()):
        doc = (cls.__doc__ or "").strip().splitlines()
        fields = config_model(name).model_fields
        settings = {key: (None if f.is_required() else f.default) for key, f in fields.items()}
        rows.append({"name": name, "description": doc[0] if doc else "", "settings": settings})
    return rows
