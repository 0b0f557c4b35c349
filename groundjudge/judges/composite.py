"""Building the inner judges of a composite judge (fallback, cascade) from nested configs.

An inner judge is a spec string (``claims``, ``quip:n=21``), a spec in braces inside
a CLI spec (``fallback:primary={claims:model=openai/gpt-4o-mini,against=context},secondary=quip``),
or, in an experiment file or Python, a table with ``kind`` and settings
(``primary = { kind = "claims", against = "context" }``).
"""

from __future__ import annotations

from typing import Any

InnerJudge = str | dict[str, Any]
"""How a composite judge names an inner judge: a spec string, or ``{"kind": ..., setting: value}``."""


def inner_config(inner: InnerJudge):
    """The typed config of an inner judge (its settings checked like any judge's)."""
    from groundjudge.judges import SpecError
    from groundjudge.judges.config import JudgeConfig

    if isinstance(inner, str):
        if ";" in inner:
            raise SpecError(f"inner judge {inner!r}: write its settings in braces, "
                            "{name:key=value,key=value} (the ';' form is gone)")
        return JudgeConfig.from_spec(inner)
    return JudgeConfig.from_table(inner, where="inner judge")

def build_inner(inner: InnerJudge, service: Any) -> Any:
    """The inner judge, sharing the run's LLM service."""
    return inner_config(inner).build(service=service)


def judge_parts(judge: Any) -> list[Any]:
    """A judge and every judge inside it (a fallback's or a cascade's inner judges), depth first."""
    parts = [judge]
    for attr in ("_primary", "_secondary", "_local", "_llm", "_route"):
        inner = getattr(judge, attr, None)
        if inner is not None:
            parts += judge_parts(inner)
    for inner in getattr(judge, "_stages", ()):   # a cascade's stages, in order
        parts += judge_parts(inner)
    return parts
