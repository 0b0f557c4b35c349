"""The labelling queue: which answers people label, in what order, and with what inclusion probability.

``stratified`` (the default) takes each stratum of verdict patterns (:mod:`groundjudge.labels.strata`) as its own
population, puts the strata where judges disagree first (a label there can change which judge is better) and
keeps a seeded share of the agreement strata woven in from the start, so class balance and balanced accuracy are
estimable at every point of the queue. Within a stratum the order is a seeded shuffle, and the interleaving of
strata is fixed before any label is seen, so every prefix of the queue is a stratified random sample: the labels
so far, however many, support the estimates of :mod:`groundjudge.labels.estimates`. ``uniform`` is a plain seeded
random order.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from groundjudge.labels.strata import is_disagreement, strata_of
from groundjudge.runs.records import RunRecords

Strategy = Literal["stratified", "uniform"]
"""How the queue is drawn."""

QUEUE_FILE = "label_queue.jsonl"
"""The queue's file name inside a run folder."""

DEFAULT_AGREEMENT_SHARE = 0.2
"""Share of a stratified queue drawn from the strata where every judge agrees."""


class QueueItem(BaseModel):
    """One answer to label: its example id, its stratum and its inclusion probability were the queue labelled
    to its end."""

    id: str
    stratum: str = Field(description="The judges' verdict pattern, one letter per judge (G, U, A, - unjudged).")
    pi: float = Field(gt=0, le=1, description="Inclusion probability of this answer in the whole queue.")
    strategy: Strategy | None = Field(default=None, description=(
        "How the queue was drawn (None in a queue written before it was recorded); PPI needs uniform."))


def _weave(pools: dict[str, list[str]], targets: dict[str, float], size: int) -> list[tuple[str, str]]:
    """Take ``size`` items from the pools, each pool's share of every prefix as close to its target share as it
    can be (largest deficit first; an empty pool gives its share to the others)."""
    taken = {name: 0 for name in pools}
    order: list[tuple[str, str]] = []
    for position in range(1, size + 1):
        open_pools = [n for n in pools if taken[n] < len(pools[n])]
        total = sum(targets[n] for n in open_pools) or 1.0
        name = max(open_pools, key=lambda n: (targets[n] / total * position - taken[n], -sorted(pools).index(n)))
        order.append((name, pools[name][taken[name]]))
        taken[name] += 1
    return order


def queue_for_run(records: RunRecords, strategy: Strategy = "stratified", size: int | None = None, seed: int = 0,
                  agreement_share: float = DEFAULT_AGREEMENT_SHARE) -> list[QueueItem]:
    """The queue of a run's answers (all of them unless ``size``), seeded; see the module's description."""
    return build_queue(strata_of(records), strategy, size, seed, agreement_share)


def build_queue(strata: Mapping[str, str], strategy: Strategy = "stratified", size: int | None = None, seed: int = 0,
                agreement_share: float = DEFAULT_AGREEMENT_SHARE) -> list[QueueItem]:
    """The queue of the answers given as ``example id -> stratum`` (all of them unless ``size``), seeded."""
    size = len(strata) if size is None else min(size, len(strata))
    if size < 1:
        raise ValueError("the run has no judged answer to label")
    rng = random.Random(seed)
    pools: dict[str, list[str]] = {}
    for example_id, name in strata.items():
        pools.setdefault(name, []).append(example_id)
    for name in sorted(pools):
        rng.shuffle(pools[name])
    if strategy == "uniform":
        ids = list(strata)
        rng.shuffle(ids)
        return [QueueItem(id=i, stratum=strata[i], pi=size / len(ids), strategy="uniform") for i in ids[:size]]
    if strategy != "stratified":
        raise ValueError(f"unknown strategy {strategy!r}: stratified or uniform")
    disagree = {n: len(p) for n, p in pools.items() if is_disagreement(n)}
    agree = {n: len(p) for n, p in pools.items() if not is_disagreement(n)}
    share = agreement_share if disagree and agree else (1.0 if agree else 0.0)
    targets = {**{n: (1 - share) * k / sum(disagree.values()) for n, k in disagree.items()},
               **{n: share * k / sum(agree.values()) for n, k in agree.items()}}
    order = _weave(pools, targets, size)
    drawn = {n: sum(1 for name, _ in order if name == n) for n in pools}
    return [QueueItem(id=i, stratum=n, pi=drawn[n] / len(pools[n]), strategy="stratified") for n, i in order]


def write_queue(items: Sequence[QueueItem], run: str | Path) -> Path:
    """Write the queue to ``RUN/label_queue.jsonl`` (replacing an earlier one) and return its path."""
    path = Path(run) / QUEUE_FILE
    tmp = path.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(item.model_dump_json() + "\n" for item in items), encoding="utf-8")
    tmp.replace(path)
    return path


def read_queue(run: str | Path) -> list[QueueItem]:
    """The run's queue, in order (empty when it has none)."""
    path = Path(run) / QUEUE_FILE
    if not path.exists():
        return []
    return [QueueItem.model_validate(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
