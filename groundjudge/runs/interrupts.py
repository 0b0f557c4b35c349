"""SIGINT / SIGTERM that stop a run cleanly: raised as :class:`RunInterrupted`, never in the middle of a write.

``interrupts_raised()`` installs handlers that raise ``RunInterrupted`` in the main thread, so that a run can
unwind (flush its records, release its lock) and say how to resume. ``interrupts_deferred()`` marks a short
critical section (appending one record, taking or releasing a lock): a signal that arrives inside it is held
and raised when the section ends, so no line is left half-written and no lock half-taken.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop a run cleanly."""

_depth = 0
_pending: list[int] = []


class RunInterrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived during a run; ``exit_code`` is 128 + the signal number.

    A KeyboardInterrupt, so that asyncio lets it out of the event loop at once (cancelling the tasks in flight)
    instead of storing it in the task it interrupted, and so that ``except Exception`` never swallows it."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.exit_code = 128 + signum


def _raise_interrupt(signum: int, _frame) -> None:
    if _depth:
        _pending.append(signum)
        return
    raise RunInterrupted(signum)


@contextlib.contextmanager
def interrupts_raised() -> Iterator[None]:
    """Inside the block, SIGINT and SIGTERM raise RunInterrupted in the main thread (handlers restored after).

    Outside the main thread (a run started from a worker thread) signals cannot be handled: the block runs as is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _pending.clear()
    previous = {sig: signal.signal(sig, _raise_interrupt) for sig in SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _pending.clear()


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """A critical section: a signal caught inside it is raised (as RunInterrupted) only when it ends."""
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0 and _pending:
            signum = _pending[0]
            _pending.clear()
            raise RunInterrupted(signum)
