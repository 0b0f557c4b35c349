"""The labelling queue: which answers people label, in what order, and with what inclusion probability.

``stratified`` (the default) takes each stratum of verdict patterns (:mod:`groundjudge.labels.strata`) as its own
population, puts the strata where judges disagree first (a label there can change which judge is better) and
keeps a seeded share of the agreement strata woven in from the start, so class balance and balanced accuracy are
estimable at every point of the queue. Within a stratum the order is a seeded shuffle, and the interleaving of
strata is fixed before any label is seen, so every prefix of the queue is a stratified random sample: the labels
so far, however many, support the estimates of :mod:`groundjudge.labels.estimates`. ``uniform`` is a plain seeded
random order. ``neyman`` (``groundjudge label RUN --for METRIC [--pair A B]``) allocates the queue across the same
strata to make one metric's pair difference as narrow as it can (:mod:`groundjudge.labels.allocation`), woven the
same way, and records what it was built for in every item.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from groundjudge.labels.allocation import TARGET_METRICS, neyman_targets
from groundjudge.labels.strata import is_disagreement, judge_order, strata_of
from groundjudge.runs.records import RunRecords

Strategy = Literal["stratified", "uniform", "neyman", "adaptive"]
"""How the queue is drawn."""

QUEUE_FILE = "label_queue.jsonl"
"""The queue's file name inside a run folder."""

DEFAULT_AGREEMENT_SHARE = 0.2
"""Share of a stratified queue drawn from the strata where every judge agrees."""


class BuiltFor(BaseModel):
    """What a ``neyman`` or ``adaptive`` queue was built for: the metric whose pair difference it narrows, the
    pairs, and (adaptive) the labels per batch before it re-plans."""

    metric: Literal["accuracy", "balanced_accuracy"]
    pairs: list[tuple[str, str]] = Field(description=(
        "The pairs (a, b) of judge specs whose differences a - b it aims at (every pair of the run when --pair was "
        "not given: the sum of their variances)."))
    batch: int | None = Field(default=None, ge=1, description=(
        "An adaptive queue: items per batch; the queue is re-planned from the labels once a batch is labelled."))
    seed: int | None = Field(default=None, description="An adaptive queue: the seed of its within-stratum order.")


class QueueItem(BaseModel):
    """One answer to label: its example id, its stratum and its inclusion probability were the queue labelled
    to its end."""

    id: str
    stratum: str = Field(description="The judges' verdict pattern, one letter per judge (G, U, A, - unjudged).")
    pi: float = Field(gt=0, le=1, description="Inclusion probability of this answer in the whole queue.")
    strategy: Strategy | None = Field(default=None, description=(
        "How the queue was drawn (None in a queue written before it was recorded); PPI needs uniform."))
    built_for: BuiltFor | None = Field(default=None, description=(
        "For a neyman or adaptive queue: the metric and the pairs it was built for (absent in the other queues)."))
    batch: int | None = Field(default=None, ge=0, description=(
        "An adaptive queue: the batch the item belongs to (0 first). Batches up to the first with an unlabelled "
        "item are fixed; later ones are the current plan, re-drawn when that batch is labelled."))
    seen: int | None = Field(default=None, ge=0, description=(
        "An adaptive queue: how many grounded / ungrounded labels the plan that chose this item knew (0: the first "
        "batch, a fixed design from the prior)."))


def weave(pools: Mapping[str, Sequence[str]], targets: Mapping[str, float], size: int,
          start: Mapping[str, int] | None = None) -> list[tuple[str, str]]:
    """Take ``size`` items from the pools (in pool order), each pool's share of every prefix as close to its
    target share as it can be (largest deficit first; an empty pool gives its share to the others). ``start``:
    items each stratum already has (labelled or queued before these): they count towards its share."""
    start = {name: (start or {}).get(name, 0) for name in pools}
    taken = {name: 0 for name in pools}
    rank = {name: k for k, name in enumerate(sorted(pools))}
    order: list[tuple[str, str]] = []
    before = sum(start.values())
    for position in range(1, size + 1):
        open_pools = [n for n in pools if taken[n] < len(pools[n])]
        if not open_pools:
            break
        total = sum(targets[n] for n in open_pools) or 1.0
        name = max(open_pools, key=lambda n: (targets[n] / total * (before + position) - start[n] - taken[n],
                                             -rank[n]))
        order.append((name, pools[name][taken[name]]))
        taken[name] += 1
    return order


def queue_for_run(records: RunRecords, strategy: Strategy = "stratified", size: int | None = None, seed: int = 0,
                  agreement_share: float = DEFAULT_AGREEMENT_SHARE) -> list[QueueItem]:
    """The queue of a run's answers (all of them unless ``size``), seeded; see the module's description."""
    return build_queue(strata_of(records), strategy, size, seed, agreement_share)


def metric_queue_for_run(records: RunRecords, metric: str, pair: Sequence[str] | None = None,
                         size: int | None = None, seed: int = 0) -> list[QueueItem]:
    """The ``neyman`` queue of a run for ``metric``'s difference between ``pair`` (two judge specs of the run;
    default every pair). Raises ValueError naming the flag (``--for``, ``--pair``) on bad input."""
    return build_metric_queue(strata_of(records), judge_order(records), metric, pair, size, seed)


def build_metric_queue(strata: Mapping[str, str], judges: Sequence[str], metric: str,
                       pair: Sequence[str] | None = None, size: int | None = None, seed: int = 0) -> list[QueueItem]:
    """The ``neyman`` queue of the answers given as ``example id -> stratum`` (one letter per judge of
    ``judges``, in order), allocated for ``metric``'s difference between ``pair`` (default every pair) by
    :func:`groundjudge.labels.allocation.neyman_targets` and woven so every prefix follows the allocation."""
    positions = pair_positions(judges, metric, pair)
    pools, size = _pools(strata, size, random.Random(seed))
    targets = neyman_targets({n: len(p) for n, p in pools.items()}, metric, positions, seed)
    order = weave(pools, targets, size)
    drawn = {n: sum(1 for name, _ in order if name == n) for n in pools}
    built = BuiltFor(metric=metric, pairs=[(judges[i], judges[k]) for i, k in positions])
    return [QueueItem(id=i, stratum=n, pi=drawn[n] / len(pools[n]), strategy="neyman", built_for=built)
            for n, i in order]


def pair_positions(judges: Sequence[str], metric: str, pair: Sequence[str] | None) -> list[tuple[int, int]]:
    """The judges' positions of the pairs a queue for ``metric`` aims at (``pair``, else every pair); ValueError
    naming the flag (``--for``, ``--pair``) when the metric is unknown, a judge is not the run's, or the run has
    one judge."""
    if metric not in TARGET_METRICS:
        raise ValueError(f"--for: unknown metric {metric!r} (one of {', '.join(TARGET_METRICS)})")
    if len(judges) < 2:
        raise ValueError(f"--for {metric}: the run has one judge ({', '.join(judges) or 'none'}); a queue for a "
                         "pair difference needs two (use --strategy stratified or uniform)")
    if pair is None:
        return [(i, k) for i in range(len(judges)) for k in range(i + 1, len(judges))]
    missing = [j for j in pair if j not in judges]
    if len(pair) != 2 or missing or pair[0] == pair[1]:
        what = f"{missing[0]!r} is not a judge of the run" if missing else "name two different judges"
        raise ValueError(f"--pair: {what} (the run's judges: {', '.join(judges)})")
    return [(judges.index(pair[0]), judges.index(pair[1]))]


def shuffled_pools(strata: Mapping[str, str], size: int | None, seed: int) -> tuple[dict[str, list[str]], int]:
    """The answers of each stratum in a seeded shuffle (the same for a seed whatever was labelled), and the
    queue's size (all answers unless ``size``)."""
    return _pools(strata, size, random.Random(seed))


def _pools(strata: Mapping[str, str], size: int | None, rng: random.Random) -> tuple[dict[str, list[str]], int]:
    """The answers of each stratum in a seeded shuffle, and the queue's size (all answers unless ``size``)."""
    size = len(strata) if size is None else min(size, len(strata))
    if size < 1:
        raise ValueError("the run has no judged answer to label")
    pools: dict[str, list[str]] = {}
    for example_id, name in strata.items():
        pools.setdefault(name, []).append(example_id)
    for name in sorted(pools):
        rng.shuffle(pools[name])
    return pools, size


def build_queue(strata: Mapping[str, str], strategy: Strategy = "stratified", size: int | None = None, seed: int = 0,
                agreement_share: float = DEFAULT_AGREEMENT_SHARE) -> list[QueueItem]:
    """The queue of the answers given as ``example id -> stratum`` (all of them unless ``size``), seeded."""
    rng = random.Random(seed)
    pools, size = _pools(strata, size, rng)
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
    order = weave(pools, targets, size)
    drawn = {n: sum(1 for name, _ in order if name == n) for n in pools}
    return [QueueItem(id=i, stratum=n, pi=drawn[n] / len(pools[n]), strategy="stratified") for n, i in order]


def write_queue(items: Sequence[QueueItem], run: str | Path) -> Path:
    """Write the queue to ``RUN/label_queue.jsonl`` (replacing an earlier one) and return its path."""
    path = Path(run) / QUEUE_FILE
    tmp = path.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(item.model_dump_json(exclude_none=True) + "\n" for item in items), encoding="utf-8")
    tmp.replace(path)
    return path


def read_queue(run: str | Path) -> list[QueueItem]:
    """The run's queue, in order (empty when it has none)."""
    path = Path(run) / QUEUE_FILE
    if not path.exists():
        return []
    return [QueueItem.model_validate(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
