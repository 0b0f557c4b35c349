"""The labelled data split by group into the parts of a tune: optimise, select and test.

A group is a document or a question: ``meta.group`` when the data names one, else the question, else the
documents' text. No group is in two parts, so a candidate is never selected (or tested) on an answer about a
document it was fitted on. The optimise part is split again by group when demonstrations are drawn from it:
a ``pool`` (the demonstrations) and a ``fit`` half (thresholds fitted, mistakes shown to a proposer).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass

from groundjudge.types import Example


def group_of(example: Example) -> str:
    """The group an example belongs to: ``meta.group``, else its question, else a hash of its documents."""
    if "group" in example.meta:
        return f"group:{example.meta['group']}"
    if example.question:
        return f"question:{example.question.strip()}"
    return "documents:" + hashlib.sha256("\x1f".join(example.context).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class TuneParts:
    """The examples of each part (in data order)."""

    pool: tuple[Example, ...]
    """Optimise examples shown as demonstrations (empty when no demonstrations are tuned)."""
    fit: tuple[Example, ...]
    """Optimise examples thresholds are fitted on and mistakes are taken from."""
    select: tuple[Example, ...]
    test: tuple[Example, ...]

    def groups(self, part: str) -> set[str]:
        """The groups of one part (``pool``, ``fit``, ``select`` or ``test``)."""
        return {group_of(ex) for ex in getattr(self, part)}


def _take(groups: list[str], shares: Sequence[float]) -> list[list[str]]:
    """Cut a shuffled list of groups into consecutive runs of (rounded, cumulative) shares."""
    total = sum(shares)
    cuts, acc = [0], 0.0
    for share in shares:
        acc += share
        cuts.append(round(len(groups) * acc / total))
    return [groups[cuts[i]:cuts[i + 1]] for i in range(len(shares))]


def split_parts(examples: Sequence[Example], optimise: float, select: float, test: float, seed: int,
                with_pool: bool = False) -> TuneParts:
    """The parts, drawn from the groups shuffled by ``seed``; ``with_pool`` halves the optimise part's groups
    into pool and fit."""
    order = sorted({group_of(ex) for ex in examples})
    random.Random(seed).shuffle(order)
    opt, sel, tst = _take(order, (optimise, select, test))
    pool_groups: set[str] = set()
    if with_pool and opt:
        pool_groups = set(opt[:max(1, len(opt) // 2)] if len(opt) > 1 else opt)
    where = {g: "fit" for g in opt} | {g: "pool" for g in pool_groups} | {g: "select" for g in sel} \
        | {g: "test" for g in tst}
    parts: dict[str, list[Example]] = {"pool": [], "fit": [], "select": [], "test": []}
    for ex in examples:
        parts[where[group_of(ex)]].append(ex)
    return TuneParts(**{name: tuple(found) for name, found in parts.items()})


def shuffled(examples: Sequence[Example], seed: int) -> list[Example]:
    """The examples in a seeded order (the select part's order: each rung judges a longer prefix of it)."""
    order = list(examples)
    random.Random(seed).shuffle(order)
    return order
