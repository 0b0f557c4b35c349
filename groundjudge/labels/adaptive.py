"""A queue that learns from its labels (``groundjudge label RUN``, the default with two judges or more; issue 45
item 2): batches of items, each chosen from what the labels so far say.

**The design.** The first batch is the fixed-design Neyman queue of :mod:`groundjudge.labels.allocation`: the
allocation over the verdict strata that minimises the prior-expected variance of the metric's pair difference.
Once a batch is labelled, the rest of the queue is re-planned: the same allocation, but with each stratum's
grounded share drawn from its Beta posterior given the labels so far (the Beta(2, 2) prior updated by the
stratum's grounded / ungrounded labels), so a stratum whose labels turn out all alike (little variance) gets fewer
labels and one whose labels split gets more; the class totals a balanced accuracy needs follow the same way. The
allocation is for the *whole* queue so far: the labels a stratum already has count towards its share (a stratum
already over its share gets nothing until the others catch up), and the next items go where the deficit is
largest (:func:`groundjudge.labels.queue.weave`). Within a stratum, items are taken in a seeded shuffle of its
answers, the same for every re-plan: uniformly at random without replacement.

**Why the estimates stay valid.** Which stratum the next item comes from depends on the labels so far, but which
item of the stratum does not: given how many labels each stratum got, its labelled answers are a simple random
sample of it. The stratum sample sizes are data-dependent, and they depend only on labels already seen, so the
design is *ignorable*: the likelihood of the labels, and with it the finite-population posterior that
:mod:`groundjudge.labels.estimates` draws from, is the same as for a fixed design with those sample sizes. The
estimator needs nothing new; a frequentist check is the simulation of ``tests/test_label_adaptive.py`` (1,000
corpora per metric: coverage of the 95% intervals at 50 and 100 labels).

**The queue file** holds the whole queue: every item says its ``batch`` and ``seen`` (the labels the plan that
chose it knew; 0 for the first batch). Batches up to the first one with an unlabelled item are fixed; later
batches are the current plan (what the projection of labels still needed walks along), re-drawn once the current
batch is labelled. A batch someone has started is never re-drawn under them, and items a labeller holds open on
the page stay in the queue (``pinned``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from groundjudge.labels.allocation import PRIOR_DRAWS, neyman_targets
from groundjudge.labels.queue import (
    BuiltFor,
    QueueItem,
    pair_positions,
    shuffled_pools,
    weave,
)

DEFAULT_BATCH = 10
"""Items per batch of an adaptive queue (``groundjudge label --batch``)."""

REPLAN_DRAWS = 1000
"""Posterior draws of the strata's grounded shares per re-plan (the first batch uses the prior's
:data:`groundjudge.labels.allocation.PRIOR_DRAWS`, so it is the fixed-design queue's first batch)."""

GOLD = ("grounded", "ungrounded")
"""The labels that say something about a stratum's grounded share (``unsure`` does not)."""


def current_batch(queue: Sequence[QueueItem], labelled: Collection[str]) -> int | None:
    """The first batch with an unlabelled item (None: every item is labelled, or the queue is not adaptive)."""
    open_batches = [item.batch for item in queue if item.id not in labelled and item.batch is not None]
    return min(open_batches) if open_batches else None


def replan_due(queue: Sequence[QueueItem], labels: Mapping[str, str]) -> bool:
    """Whether an adaptive queue should be re-planned: its current batch is not started and was planned before
    the grounded / ungrounded labels there are now. ``labels``: answer id -> its label."""
    if not queue or queue[0].strategy != "adaptive":
        return False
    batch = current_batch(queue, labels)
    if batch is None:
        return False
    items = [item for item in queue if item.batch == batch]
    known = sum(label in GOLD for label in labels.values())
    return not any(item.id in labels for item in items) and min(item.seen or 0 for item in items) < known


def _compatible(previous: Sequence[QueueItem], built: BuiltFor) -> bool:
    """Whether an earlier queue is this adaptive queue's past (same metric and pairs): its batches are kept."""
    return bool(previous) and all(item.strategy == "adaptive" and item.built_for is not None and
                                  item.built_for.metric == built.metric and item.built_for.pairs == built.pairs
                                  for item in previous)


def _kept(previous: Sequence[QueueItem], labels: Mapping[str, str],
          pinned: Collection[str]) -> tuple[list[QueueItem], int, int]:
    """The items of an earlier plan that stay: the batches before the current one, the current one if started,
    and pinned items (held open on the page) of later batches, which open the next batch; with the next batch's
    number and how many of its items are already there."""
    batch = current_batch(previous, labels)
    if batch is None:
        return list(previous), max((item.batch or 0 for item in previous), default=-1) + 1, 0
    started = any(item.id in labels for item in previous if item.batch == batch)
    last = batch if started else batch - 1
    kept = [item for item in previous if item.batch is not None and item.batch <= last]
    later = [item.model_copy(update={"batch": last + 1}) for item in previous
             if item.id in pinned and item.id not in labels and (item.batch is None or item.batch > last)]
    return kept + later, last + 1, len(later)


def plan_targets(sizes: Mapping[str, int], gold: Mapping[str, tuple[int, int]], metric: str,
                 positions: Sequence[tuple[int, int]], seed: int = 0) -> dict[str, float]:
    """Each stratum's share of the whole queue given its (labelled, grounded) so far: the Neyman allocation over
    the posterior (:func:`groundjudge.labels.allocation.neyman_targets`; the prior before any label)."""
    known = sum(n for n, _ in gold.values())
    return neyman_targets(sizes, metric, positions, seed, labels=gold,
                          draws=PRIOR_DRAWS if known == 0 else REPLAN_DRAWS)


def replan(queue: Sequence[QueueItem], strata: Mapping[str, str], judges: Sequence[str],
           labels: Mapping[str, str], pinned: Collection[str] = ()) -> list[QueueItem]:
    """An adaptive queue re-planned from ``labels`` with the settings it records (metric, pairs, seed, batch and
    size); ``pinned``: ids held open on the page."""
    built = queue[0].built_for
    pair = list(built.pairs[0]) if len(built.pairs) == 1 else None
    return adaptive_queue(strata, judges, built.metric, labels, queue,
                          {"pair": pair, "size": len(queue), "seed": built.seed or 0, "batch": built.batch or 1,
                           "pinned": pinned})


def adaptive_queue(strata: Mapping[str, str], judges: Sequence[str], metric: str, labels: Mapping[str, str],
                   previous: Sequence[QueueItem] = (), options: Mapping | None = None) -> list[QueueItem]:
    """The adaptive queue of the answers given as ``example id -> stratum`` (one letter per judge of ``judges``),
    planned from ``labels`` (answer id -> label so far) and keeping what stays of ``previous`` (an earlier plan of
    the same metric and pairs); see the module's description. ``options``: ``pair`` (two judge specs; default every
    pair), ``size`` (answers in the queue; default all), ``seed``, ``batch`` (items per batch), ``pinned`` (ids
    held open on the page). ValueError naming the flag on a bad metric or pair."""
    options = dict(options or {})
    pair, seed = options.get("pair"), int(options.get("seed", 0))
    batch = int(options.get("batch", DEFAULT_BATCH))
    if batch < 1:
        raise ValueError(f"--batch: {batch} (an adaptive queue needs 1 item per batch or more)")
    positions = pair_positions(judges, metric, pair)
    built = BuiltFor(metric=metric, pairs=[(judges[i], judges[k]) for i, k in positions], batch=batch, seed=seed)
    pools, size = shuffled_pools(strata, options.get("size"), seed)
    labels = {i: label for i, label in labels.items() if i in strata}
    kept, first, filled = (_kept(previous, labels, set(options.get("pinned", ()))) if _compatible(previous, built)
                           else ([], 0, 0))
    kept = [item.model_copy(update={"built_for": built}) for item in kept if item.id in strata]
    assigned = {item.id for item in kept} | set(labels)
    start = {name: sum(1 for i in pool if i in assigned) for name, pool in pools.items()}
    gold = {name: (sum(labels.get(i) in GOLD for i in pool), sum(labels.get(i) == "grounded" for i in pool))
            for name, pool in pools.items()}
    targets = plan_targets({n: len(p) for n, p in pools.items()}, gold, metric, positions, seed)
    free = {name: [i for i in pool if i not in assigned] for name, pool in pools.items()}
    order = weave(free, targets, max(0, size - len(kept)), start)
    known = sum(n for n, _ in gold.values())
    planned = [QueueItem(id=i, stratum=name, pi=1.0, strategy="adaptive", built_for=built,
                         batch=first + (filled + k) // batch, seen=known) for k, (name, i) in enumerate(order)]
    queue = kept + planned
    counts = {name: len(pool) for name, pool in pools.items()}
    drawn = {name: sum(1 for item in queue if item.stratum == name) for name in pools}
    return [item.model_copy(update={"pi": max(drawn[item.stratum], 1) / counts[item.stratum]}) for item in queue]
