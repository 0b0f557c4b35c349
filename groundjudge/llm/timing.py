"""Service time apart from queueing: a per-example queue clock, and the provider's own timing of a reply.

A judge may make several calls for one example, some at once (the claims chain verifies
claims concurrently). :class:`QueueClock` counts the time during which at least one of the
example's calls waited for a client-side slot (the per-model semaphore or a rate limiter)
while none of them was being served: that time is queueing, the rest of the example's
wall time is service. The runner opens one clock per example with :func:`measure_queue`;
``LLMService`` reports to the clock of the example it is working for (a context variable,
inherited by the tasks a judge starts).
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator
from typing import Any

_CLOCK: contextvars.ContextVar[QueueClock | None] = contextvars.ContextVar("groundjudge_queue_clock", default=None)


class QueueClock:
    """Time during which an example's calls waited for a slot and none was served (seconds, ``queue_s``)."""

    def __init__(self) -> None:
        self.queue_s = 0.0
        self._waiting = 0
        self._serving = 0
        self._since: float | None = None

    def _blocked(self) -> bool:
        return self._waiting > 0 and self._serving == 0

    def _change(self, waiting: int = 0, serving: int = 0) -> None:
        now = time.perf_counter()
        if self._since is not None:
            self.queue_s += now - self._since
        self._waiting += waiting
        self._serving += serving
        self._since = now if self._blocked() else None

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        """Around waiting for a slot (semaphore, rate limiter)."""
        self._change(waiting=1)
        try:
            yield
        finally:
            self._change(waiting=-1)

    @contextlib.contextmanager
    def serving(self) -> Iterator[None]:
        """Around the request itself."""
        self._change(serving=1)
        try:
            yield
        finally:
            self._change(serving=-1)


@contextlib.contextmanager
def measure_queue() -> Iterator[QueueClock]:
    """Open a queue clock for the work done inside the block (one example); read ``queue_s`` after it."""
    clock = QueueClock()
    token = _CLOCK.set(clock)
    try:
        yield clock
    finally:
        _CLOCK.reset(token)


def current_clock() -> QueueClock:
    """The clock of the example being judged, or a detached one when none is open."""
    return _CLOCK.get() or QueueClock()


SERVER_TIME_HEADERS = ("openai-processing-ms", "llm_provider-openai-processing-ms")
"""Response headers in which a provider states its own processing time, in milliseconds."""


def _float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def server_seconds(response: Any) -> float | None:
    """The provider's own time for a reply, in seconds, when the reply carries one, else None.

    llama.cpp's server sends ``timings`` {prompt_ms, predicted_ms} in the body (litellm keeps unknown
    top-level fields as attributes); OpenAI sends an ``openai-processing-ms`` header (litellm keeps the
    headers in ``_hidden_params['additional_headers']`` and ``_response_headers``).
    """
    timings = getattr(response, "timings", None)
    if isinstance(timings, dict):
        parts = [_float(timings.get(k)) for k in ("prompt_ms", "predicted_ms")]
        if any(p is not None for p in parts):
            return sum(p for p in parts if p is not None) / 1000
    hidden = getattr(response, "_hidden_params", None) or {}
    header_maps = [hidden.get("additional_headers") or {}, getattr(response, "_response_headers", None) or {}]
    for headers in header_maps:
        lowered = {str(k).lower(): v for k, v in dict(headers).items()}
        for name in SERVER_TIME_HEADERS:
            value = _float(lowered.get(name))
            if value is not None:
                return value / 1000
    return None
