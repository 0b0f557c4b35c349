"""Cluster-wide LLM limits for a Ray run: one rate limiter and one ``--max-cost`` budget for every actor.

In one process, :class:`~groundjudge.llm.client.LLMService` paces calls with its own ``AsyncLimiter`` per model
(requests and tokens per minute) and stops at its :class:`~groundjudge.llm.cost.Budget`. Under Ray many
processes call the same provider, so they share two small named actors instead:

* :class:`RateBuckets` -- leaky buckets by (model, api_base, limit), the same shape as the in-process limiters
  (requests evenly spaced at 60/rpm seconds; tokens in 10-second windows of tpm/6). A caller *reserves* its
  amount and is told how long to wait, so an acquire is one actor call and never a poll;
* :class:`BudgetLedger` -- the money spent, checked before each call and added to after it, as ``Budget``.

A worker's LLMService gets :func:`limits_factory` (its ``limits_factory``: the (requests, tokens) limiters of a
model) and a :class:`SharedBudget` (its ``budget``), objects with the same interface as the in-process ones.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from groundjudge.llm.cost import Budget
from groundjudge.llm.settings import LLMSettings


class RateBuckets:
    """Leaky buckets by key, shared by every actor of a run (a Ray actor; reservations, no polling)."""

    def __init__(self) -> None:
        self._buckets: dict[str, tuple[float, float]] = {}

    def reserve(self, key: str, amount: float, capacity: float, rate: float) -> float:
        """Take ``amount`` from bucket ``key`` (``capacity`` units, refilled at ``rate`` per second); returns the
        seconds the caller waits before using it (0 when the bucket had room). Later callers queue behind it."""
        now = time.monotonic()
        level, last = self._buckets.get(key, (0.0, now))
        level = max(0.0, level - (now - last) * rate)
        wait = max(0.0, (level + amount - capacity) / rate)
        self._buckets[key] = (level + amount, now)
        return wait


class BudgetLedger:
    """The money a run's calls spent, over every actor (a Ray actor)."""

    def __init__(self, spent: float = 0.0) -> None:
        self._spent = float(spent)

    def add(self, cost: float) -> float:
        """Count a call's cost; returns the total spent."""
        self._spent += float(cost)
        return self._spent

    def spent(self) -> float:
        """The total spent so far."""
        return self._spent


class SharedRate:
    """One model's request or token limiter, backed by :class:`RateBuckets` (``acquire`` as ``AsyncLimiter``)."""

    def __init__(self, buckets: Any, key: str, capacity: float, rate: float) -> None:
        self.buckets, self.key, self.capacity, self.rate = buckets, key, float(capacity), float(rate)

    async def acquire(self, amount: float = 1) -> None:
        """Wait until ``amount`` (requests or tokens) may be used, cluster-wide."""
        wait = await self.buckets.reserve.remote(self.key, float(amount), self.capacity, self.rate)
        if wait > 0:
            await asyncio.sleep(wait)


def limits_factory(buckets: Any) -> Callable[[LLMSettings], tuple[SharedRate | None, SharedRate | None]]:
    """The LLMService hook: a model's (requests, tokens) limiters, shared through ``buckets`` (a RateBuckets
    actor handle), with the in-process limiters' shape: 1 request per 60/rpm s, tpm/6 tokens per 10 s."""
    def make(settings: LLMSettings) -> tuple[SharedRate | None, SharedRate | None]:
        model = f"{settings.model}|{settings.api_base or ''}"
        requests = SharedRate(buckets, f"{model}|rpm={settings.rpm}", 1, settings.rpm / 60) if settings.rpm else None
        tokens = SharedRate(buckets, f"{model}|tpm={settings.tpm}", settings.tpm / 6, settings.tpm / 60) \
            if settings.tpm else None
        return requests, tokens

    return make


class SharedBudget(Budget):
    """A run's ``--max-cost`` over every actor: ``check`` asks the :class:`BudgetLedger` what was spent,
    ``add`` tells it (in order: one caller's add is counted before its next check)."""

    def __init__(self, ledger: Any, max_cost: float | None):
        super().__init__(max_cost)
        self._ledger = ledger

    def check(self) -> None:
        """Raise ProviderError('budget') once the whole run's spend reached the cap (blocking)."""
        if self.max_cost is not None:
            import ray

            self.spent = ray.get(self._ledger.spent.remote())
        super().check()

    async def check_async(self) -> None:
        """:meth:`check` without blocking the event loop (what the LLM client awaits)."""
        if self.max_cost is not None:
            self.spent = await self._ledger.spent.remote()
        super().check()

    def add(self, cost: float) -> None:
        """Count money spent, here and in the ledger."""
        super().add(cost)
        if cost:
            self._ledger.add.remote(cost)
