"""The actors of one judge in a Ray run: started, ready, loaded with batches, retired when lost, replaced.

An actor takes batches only once it answered ``ready`` (its judge is built), so work never waits on an actor the
cluster cannot place. A lost actor (its process or node died) is killed for good -- Ray does not restart it
(``max_restarts=0``) -- and a fresh one is started in its place while replacements last; the driver sends the
lost actor's unfinished batches to the live ones (:mod:`groundjudge.runs.ray_engine`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

START_TIMEOUT_S = 600.0
"""How long work may wait with no live actor while others are starting (the cluster may lack the resources)."""


class ActorStartError(RuntimeError):
    """No actor of a judge could be started (its judge failed to build, or the cluster cannot place one)."""


@dataclass(eq=False)
class Member:
    """One actor of the pool: its handle, the batches it holds and where it runs."""

    handle: Any
    load: int = 0
    where: dict[str, Any] = field(default_factory=dict)


class ActorPool:
    """The actors of one judge: ``make()`` creates one (with its Ray options); ``depth`` batches in flight each."""

    def __init__(self, ray: Any, make: Callable[[], Any], size: int, depth: int, replacements: int | None = None):
        self.ray, self.make, self.depth = ray, make, depth
        self.replacements_left = size if replacements is None else replacements
        self.live: list[Member] = []
        self.starting: dict[Any, Member] = {}
        self.lost = 0
        self._idle_since = time.monotonic()
        for _ in range(size):
            self._start()

    def _start(self) -> None:
        member = Member(self.make())
        self.starting[member.handle.ready.remote()] = member

    def starting_refs(self) -> list[Any]:
        """The ``ready`` calls of the actors still starting (to wait on with the batches)."""
        return list(self.starting)

    def is_starting(self, ref: Any) -> bool:
        """Whether ``ref`` is an actor's ``ready`` call."""
        return ref in self.starting

    def on_ready(self, ref: Any) -> None:
        """An actor answered ``ready`` (it joins the live ones) or failed to start (replaced, if it can be; an
        error raised while building its judge is an :class:`ActorStartError` at once: every actor would fail)."""
        member = self.starting.pop(ref)
        try:
            member.where = self.ray.get(ref)
        except self.ray.exceptions.RayActorError as err:
            if getattr(err, "actor_init_failed", False):
                raise ActorStartError(f"a judge actor failed to build its judge: {err}") from None
            self._kill(member)
            self._replace(err)
            return
        self.live.append(member)

    def free(self) -> Member | None:
        """The least loaded live actor with room for another batch, or None."""
        room = [m for m in self.live if m.load < self.depth]
        return min(room, key=lambda m: m.load) if room else None

    def retire(self, member: Member, error: BaseException) -> None:
        """A lost actor: stop using it, kill it for good and start another while replacements last."""
        if member not in self.live:
            return   # already retired (its other batches failed too)
        self.live.remove(member)
        self.lost += 1
        self._kill(member)
        self._replace(error)

    def _replace(self, error: BaseException) -> None:
        if self.replacements_left > 0:
            self.replacements_left -= 1
            self._start()
        elif not self.live and not self.starting:
            raise ActorStartError(f"every judge actor was lost and none is left to start (last error: {error})")

    def check_stalled(self) -> None:
        """Raise ActorStartError when work has had no live actor for :data:`START_TIMEOUT_S`."""
        if self.live:
            self._idle_since = time.monotonic()
        elif time.monotonic() - self._idle_since > START_TIMEOUT_S:
            raise ActorStartError(f"no judge actor started within {START_TIMEOUT_S:.0f} s: the cluster may lack the "
                                  "CPUs / GPUs asked for (--ray-num-cpus, --ray-num-gpus)")

    def _kill(self, member: Member) -> None:
        try:
            self.ray.kill(member.handle, no_restart=True)
        except Exception:  # noqa: BLE001 - already gone with its node
            pass

    def shutdown(self) -> None:
        """Kill every actor of the pool (live and starting)."""
        for member in [*self.live, *self.starting.values()]:
            self._kill(member)
        self.live.clear()
        self.starting.clear()
