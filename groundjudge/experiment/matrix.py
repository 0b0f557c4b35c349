"""A judge table's matrix: one judge per combination of the listed values, named by the values that vary.

``[judges.claims]`` with ``matrix = { prompts = ["built-in", "prompts/strict"], model = ["a/x", "b/y"] }``
gives four judges, ``claims[prompts=built-in, model=x]`` ... ``claims[prompts=strict, model=y]``: a folder
is named by its last part, a model by what follows its provider, anything else as written. When two
combinations would get the same short name, the full values are used.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any


def short_value(key: str, value: Any) -> str:
    """How a varied value reads in a judge's name: a folder's last part, a model without its provider."""
    if value is None and key == "prompts":
        return "built-in"
    if isinstance(value, str) and key in ("prompts", "demos", "model", "evidence_model"):
        return Path(value).name if key in ("prompts", "demos") else value.rsplit("/", 1)[-1]
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(short_value(key, v) for v in value) + "]"
    return str(value)


def _full_value(key: str, value: Any) -> str:
    return "built-in" if value is None and key == "prompts" else str(value)


def expand(table: str, settings: dict[str, Any], matrix: dict[str, list[Any]]
           ) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(name, settings, varied values) of every judge a table stands for; without a matrix, the table itself."""
    if not matrix:
        return [(table, dict(settings), {})]
    keys = list(matrix)
    combos = [dict(zip(keys, values)) for values in itertools.product(*(matrix[k] for k in keys))]
    varied = [k for k in keys if len({repr(v) for v in matrix[k]}) > 1] or keys

    def names(value_text) -> list[str]:
        return [f"{table}[{', '.join(f'{k}={value_text(k, c[k])}' for k in varied)}]" for c in combos]

    short = names(short_value)
    chosen = short if len(set(short)) == len(short) else names(_full_value)
    return [(name, {**settings, **combo}, {k: combo[k] for k in varied}) for name, combo in zip(chosen, combos)]
