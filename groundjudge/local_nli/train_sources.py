"""The sources of a mixed training set (``groundjudge train`` with more than one of gold data, ``--synthetic``,
``--from-documents``, ``--teacher``, ``--nli-mix``) and their ``--weight SOURCE=W`` settings: each source's pairs
carry its name as their ``origin`` and its weight, which scales their terms of the loss."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import replace

from groundjudge.local_nli.pairs import Pair

SOURCES = ("gold", "synthetic", "documents", "teacher", "nli")
"""The sources a mixed run may hold, in the order the card lists them."""


class WeightError(ValueError):
    """A ``--weight`` that names no source or is not a number of 0 or more (the message is one line)."""


def _bad(raw: str, why: str) -> WeightError:
    return WeightError(f"--weight {raw}: {why}; give SOURCE=WEIGHT with SOURCE one of {', '.join(SOURCES)} and "
                       "WEIGHT a number of 0 or more (default 1.0)")


def parse_weights(given: Sequence[str]) -> dict[str, float]:
    """The weight of each source named in ``--weight SOURCE=W`` flags (a source named twice: the last one)."""
    weights: dict[str, float] = {}
    for raw in given:
        name, sep, value = raw.partition("=")
        name = name.strip().lower()
        if not sep or name not in SOURCES:
            raise _bad(raw, f"unknown source {name!r}" if sep else "no '='")
        try:
            weight = float(value)
        except ValueError:
            raise _bad(raw, f"{value!r} is not a number") from None
        if not math.isfinite(weight) or weight < 0:
            raise _bad(raw, "a weight must be finite and 0 or more")
        weights[name] = weight
    return weights


def check_weighted(weights: dict[str, float], present: Iterable[str]) -> None:
    """Every weighted source must be one the run has: else one line naming the flag."""
    have = set(present)
    for name in weights:
        if name not in have:
            raise WeightError(f"--weight {name}=...: this run has no {name} pairs (its sources: "
                              f"{', '.join(s for s in SOURCES if s in have) or 'none'})")


def tagged(pairs: Iterable[Pair], origin: str, weight: float) -> list[Pair]:
    """The pairs marked as coming from ``origin``, each with the source's weight."""
    return [replace(pair, origin=origin, weight=weight) for pair in pairs]
