"""Which repeat of an answer is being judged (a judge's ``repeats=N``): part of every call's cache key."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

_REPEAT: contextvars.ContextVar[int] = contextvars.ContextVar("groundjudge_repeat", default=0)


def current_repeat() -> int:
    """The repeat the running task judges (0: the first, or a judge without repeats)."""
    return _REPEAT.get()


@contextmanager
def repeat_of(index: int) -> Iterator[None]:
    """Calls made inside are those of repeat ``index`` (each repeat its own cached calls)."""
    token = _REPEAT.set(index)
    try:
        yield
    finally:
        _REPEAT.reset(token)
