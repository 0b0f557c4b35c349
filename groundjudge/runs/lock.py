"""One writer per run folder: a lock file naming its holder, taken before anything is written there.

``RunLock`` creates ``OUT/.groundjudge.lock`` atomically (``O_CREAT | O_EXCL``) holding the pid, host, start
time and command of the process that writes the folder. A second writer stops at once with an error naming
the holder. A lock left by a dead process of this host is taken over with a warning; a lock from another
host cannot be checked from here, so it is refused with the way to remove it. ``interrupts_raised`` turns
SIGINT / SIGTERM into :class:`RunInterrupted`, so that a run can flush, release its lock and say how to resume.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path

LOCK_FILE = ".groundjudge.lock"
"""The lock's name inside a run folder."""


class RunLockError(RuntimeError):
    """The run folder is held by another live writer (or by one that cannot be checked)."""


class RunInterrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived during a run; ``exit_code`` is 128 + the signal number.

    A KeyboardInterrupt, so that asyncio lets it out of the event loop at once (cancelling the tasks in flight)
    instead of storing it in the task it interrupted."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.exit_code = 128 + signum


def pid_alive(pid: int) -> bool:
    """Whether a process of this host has that pid (one we may not signal counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RunLock:
    """The lock of one run folder; use as a context manager, or ``acquire()`` / ``release()``."""

    def __init__(self, folder: str | Path, command: list[str], warn: Callable[[str], None] = print):
        self.folder = Path(folder)
        self.path = self.folder / LOCK_FILE
        self.command = command
        self.warn = warn
        self.created_folder = False
        self.held = False

    def _holder(self) -> dict:
        try:
            return json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    def _try_create(self) -> bool:
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        me = {"pid": os.getpid(), "host": socket.gethostname(), "command": self.command,
              "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(me, handle)
        return True

    def acquire(self) -> RunLock:
        """Take the lock (creating the folder if needed); RunLockError when a live writer holds it."""
        if not self.folder.exists():
            self.folder.mkdir(parents=True)
            self.created_folder = True
        for _ in range(2):
            if self._try_create():
                self.held = True
                return self
            holder = self._holder()
            pid, host = holder.get("pid"), holder.get("host")
            if host == socket.gethostname() and isinstance(pid, int) and not pid_alive(pid):
                self.warn(f"taking over the lock of {self.folder} left by pid {pid}, which is no longer running")
                self.path.unlink(missing_ok=True)
                continue
            self.release()
            if host and host != socket.gethostname():
                raise RunLockError(f"{self.folder} is locked by pid {pid} on host {host} (since "
                                   f"{holder.get('started_at')}), which cannot be checked from here: if that run "
                                   f"is over, remove {self.path}; else use another --out")
            raise RunLockError(f"{self.folder} is being written by pid {pid} on {host or 'this host'} (since "
                               f"{holder.get('started_at')}): wait for it to end, or use another --out")
        self.release()
        raise RunLockError(f"{self.folder}: could not take the lock {self.path}")

    def release(self) -> None:
        """Drop the lock; remove the folder when this lock created it and nothing else was written there."""
        if self.held:
            self.path.unlink(missing_ok=True)
            self.held = False
        if self.created_folder and self.folder.is_dir() and not any(self.folder.iterdir()):
            self.folder.rmdir()

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


@contextlib.contextmanager
def interrupts_raised() -> Iterator[None]:
    """Inside the block, SIGINT and SIGTERM raise RunInterrupted in the main thread (handlers restored after)."""
    def raise_interrupt(signum, _frame):
        raise RunInterrupted(signum)

    previous = {sig: signal.signal(sig, raise_interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
