"""No answer may be judged by a prompt that shows it: the check that refuses such a run before any call.

An example and a demonstration are the same answer when they share the id or the text hash of answer and
documents (:func:`~groundjudge.judges.demonstrations.pool.text_hash`). A judge that shows demonstrations says
which ones it may show (``demonstration_candidates()``: the fixed set, or the whole pool for per-answer
selection); :func:`refuse_leakage` checks every judge of a run (inner judges too) against every example it
will judge (the evaluated ones and the dev ones thresholds are fitted on).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from groundjudge.errors import UsageError
from groundjudge.judges.demonstrations.pool import Demonstration, text_hash
from groundjudge.types import Example

SHOWN_LIMIT = 5
"""How many leaks an error message lists before saying how many more there are."""


class DemonstrationLeak(UsageError):
    """A judged answer that is one of the judge's demonstrations (the message names both)."""


def find_leaks(demos: Sequence[Demonstration], examples: Iterable[Example]) -> list[str]:
    """One line per example that is one of ``demos``: ``example 'X' is demonstration 'Y' (same id)``."""
    by_id = {demo.id: demo for demo in demos}
    by_hash: dict[str, Demonstration] = {}
    for demo in demos:
        by_hash.setdefault(demo.hash, demo)
    leaks = []
    for example in examples:
        if example.id in by_id:
            leaks.append(f"example {example.id!r} is demonstration {example.id!r} (same id)")
            continue
        twin = by_hash.get(text_hash(example.answer, example.context))
        if twin is not None:
            leaks.append(f"example {example.id!r} is demonstration {twin.id!r} (same answer and documents)")
    return leaks


def demonstration_leaks(judge: Any, examples: Sequence[Example]) -> list[str]:
    """The leaks of a judge and of every judge inside it (see :func:`find_leaks`)."""
    from groundjudge.judges.composite import judge_parts

    leaks: list[str] = []
    for part in judge_parts(judge):
        candidates = getattr(part, "demonstration_candidates", None)
        if candidates is not None:
            leaks += find_leaks(candidates(), examples)
    return leaks


def leak_message(where: str, leaks: Sequence[str]) -> str:
    """The refusal's text: the first leaks, how many more, and what to change."""
    shown = "; ".join(leaks[:SHOWN_LIMIT]) + (f"; and {len(leaks) - SHOWN_LIMIT} more" if len(leaks) > SHOWN_LIMIT
                                             else "")
    return (f"judge {where!r} would be shown the answers it judges: {shown}. Take them out of the pool (demos=) or "
            "out of the data (e.g. a pool from the train split, judged on dev/test)")


def refuse_leakage(judges: Mapping[str, Any], examples: Sequence[Example]) -> None:
    """Raise :class:`DemonstrationLeak` (before any call) when a judge (by its name) would be shown an example
    it judges."""
    for name, judge in judges.items():
        leaks = demonstration_leaks(judge, examples)
        if leaks:
            raise DemonstrationLeak(leak_message(name, leaks))
