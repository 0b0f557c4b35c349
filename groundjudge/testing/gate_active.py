"""Which test is running, as the pytest plugin tells it: a light stack (standard library only) that lets
``assert_grounded`` find its test's scope without the plugin importing anything heavy for tests that never judge."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_ACTIVE: list[Callable[[], Any]] = []


def push(scope_factory: Callable[[], Any]) -> None:
    """A test starts: ``scope_factory()`` makes (or returns) its scope when a check needs it."""
    _ACTIVE.append(scope_factory)


def pop(scope_factory: Callable[[], Any]) -> None:
    """The test is over."""
    if scope_factory in _ACTIVE:
        _ACTIVE.remove(scope_factory)


def current() -> Any | None:
    """The running test's scope, or None outside a test of a session with the plugin."""
    return _ACTIVE[-1]() if _ACTIVE else None
