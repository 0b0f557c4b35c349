"""Which demonstrations a judge shows: the selection strategies over a pool.

- ``balanced``: a seeded random set with as many grounded as ungrounded examples (alternating; when one label
  runs out, the other fills up to k);
- ``nearest``: per judged answer, the k entries whose answers are nearest it (sentence embeddings);
- ``corrections``: a balanced set of the pool's corrections (entries a judge got wrong per a person's label,
  ``judge_label`` differing from ``label``; see ``groundjudge.labels.corrections``);
- ``fixed``: the entries named by ``ids``, in that order.

A pool smaller than k gives what it has. With ``for_example``, a selection that would show that very answer is
refused (:class:`~groundjudge.judges.demonstrations.leakage.DemonstrationLeak`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Literal

from groundjudge.errors import UsageError
from groundjudge.judges.demonstrations.leakage import DemonstrationLeak, find_leaks
from groundjudge.judges.demonstrations.pool import Demonstration
from groundjudge.local_nli.model import DEFAULT_EMBEDDER
from groundjudge.types import Example

Strategy = Literal["balanced", "nearest", "corrections", "fixed"]
"""How demonstrations are picked from a pool (see the module's description)."""

STRATEGIES: tuple[str, ...] = ("balanced", "nearest", "corrections", "fixed")
"""Every strategy, in the order the docs list them."""

PER_ANSWER: frozenset[str] = frozenset({"nearest"})
"""Strategies whose choice depends on the judged answer."""


def balanced(pool: Sequence[Demonstration], k: int, seed: int = 0) -> list[Demonstration]:
    """A seeded random set of up to k, grounded and ungrounded alternating (the first label seeded too)."""
    rng = random.Random(seed)
    groups = {label: [d for d in pool if d.label == label] for label in ("grounded", "ungrounded")}
    for group in groups.values():
        rng.shuffle(group)
    order = ["grounded", "ungrounded"]
    rng.shuffle(order)
    picked: list[Demonstration] = []
    while len(picked) < k and any(groups.values()):
        wanted = order[len(picked) % 2]
        group = groups[wanted] or groups[order[(len(picked) + 1) % 2]]
        picked.append(group.pop())
    return picked


def corrections(pool: Sequence[Demonstration], k: int, seed: int = 0) -> list[Demonstration]:
    """A balanced set of up to k of the pool's corrections; a pool with none is an error."""
    found = [demo for demo in pool if demo.is_correction]
    if not found:
        raise UsageError("the pool has no corrections (entries whose judge_label differs from label); make one "
                         "from a labelled run with groundjudge.labels.corrections.corrections_pool")
    return balanced(found, k, seed)


def fixed(pool: Sequence[Demonstration], ids: Sequence[str]) -> list[Demonstration]:
    """The entries named by ``ids``, in that order; an id not in the pool is an error."""
    by_id = {demo.id: demo for demo in pool}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise UsageError(f"demonstration id {missing[0]!r} is not in the pool ({len(pool)} entries)")
    return [by_id[i] for i in ids]


def select_demonstrations(pool: Sequence[Demonstration], strategy: Strategy, k: int, seed: int = 0,
                          for_example: Example | None = None, ids: Sequence[str] | None = None,
                          embedder: str = DEFAULT_EMBEDDER) -> list[Demonstration]:
    """Up to ``k`` demonstrations of ``pool`` by ``strategy`` (``fixed`` takes ``ids`` instead; ``nearest``
    needs ``for_example``, the answer to be judged). Deterministic for a given pool, seed and example."""
    if strategy not in STRATEGIES:
        raise UsageError(f"unknown demonstration strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
    if k < 1 and strategy != "fixed":
        raise UsageError(f"k must be at least 1, got {k}")
    if strategy == "nearest":
        if for_example is None:
            raise UsageError("demo_strategy=nearest picks per answer: pass for_example")
        leaks = find_leaks(pool, [for_example])
        if leaks:
            raise DemonstrationLeak(f"the pool holds the answer to be judged: {leaks[0]}")
        from groundjudge.judges.demonstrations.neighbours import nearest

        return nearest(pool, for_example.answer, k, embedder)
    if strategy == "fixed":
        chosen = fixed(pool, list(ids or ()))
    elif strategy == "corrections":
        chosen = corrections(pool, k, seed)
    else:
        chosen = balanced(pool, k, seed)
    leaks = find_leaks(chosen, [for_example]) if for_example is not None else []
    if leaks:
        raise DemonstrationLeak(f"the demonstrations hold the answer to be judged: {leaks[0]}")
    return chosen
