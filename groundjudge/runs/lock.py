"""One writer per run folder: a lock file naming its holder, taken before anything is written there.

``RunLock`` creates ``OUT/.groundjudge.lock`` atomically (``O_CREAT | O_EXCL``) holding the pid, host, start
time and command of the process that writes the folder, and keeps an exclusive ``flock`` on it while it holds
it (the kernel drops that lock when the process dies, however it dies). A second writer stops at once with an
error naming the holder. A lock left by a dead process of this host is taken over with a warning; the
takeover itself happens under the old file's ``flock``, so two processes taking over the same stale lock
cannot both win. A lock from another host cannot be checked from here, so it is refused with the way to
remove it.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from groundjudge.runs.interrupts import interrupts_deferred

try:
    import fcntl
except ImportError:  # not on this platform: liveness comes from the pid alone
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".groundjudge.lock"
"""The lock's name inside a run folder."""

_ATTEMPTS = 5
"""How often acquiring looks again after a lock vanished or was taken over under it (bounded)."""


class RunLockError(RuntimeError):
    """The run folder is held by another live writer (or by one that cannot be checked)."""


def pid_alive(pid: int) -> bool:
    """Whether a process of this host has that pid (one we may not signal counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _try_flock(fd: int) -> bool:
    """Take the exclusive flock of ``fd`` without waiting; False when another open file holds it."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the file open as ``fd`` (it may have been removed or replaced)."""
    try:
        here, there = os.fstat(fd), os.stat(path)
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


class RunLock:
    """The lock of one run folder; use as a context manager, or ``acquire()`` / ``release()``.

    When the folder (or some of its parents) did not exist, acquiring creates it, and releasing removes what
    it created as long as nothing was written there, so a run that fails early leaves no folder behind.
    """

    def __init__(self, folder: str | Path, command: list[str], warn: Callable[[str], None] = print):
        self.folder = Path(folder)
        self.path = self.folder / LOCK_FILE
        self.command = command
        self.warn = warn
        self.created: list[Path] = []
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this process holds the lock now."""
        return self._fd is not None

    def acquire(self) -> RunLock:
        """Take the lock (creating the folder if needed); RunLockError when a live writer holds it."""
        with interrupts_deferred():
            try:
                self._make_folder()
                for _ in range(_ATTEMPTS):
                    if self._try_create():
                        return self
                    self._clear_stale()
                    time.sleep(0.05)
                raise RunLockError(f"{self.folder}: could not take the lock {self.path} (it keeps changing hands)")
            except BaseException:
                self.release()
                raise

    def release(self) -> None:
        """Drop the lock; remove the folders this lock created when nothing else was written there."""
        with interrupts_deferred():
            if self._fd is not None:
                if _same_file(self._fd, self.path):
                    self.path.unlink(missing_ok=True)
                os.close(self._fd)
                self._fd = None
            for folder in reversed(self.created):
                try:
                    folder.rmdir()  # only when empty
                except OSError:
                    break
            self.created = []

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()

    # --- taking the lock
    def _make_folder(self) -> None:
        missing = []
        folder = self.folder.absolute()
        while not folder.exists():
            missing.append(folder)
            folder = folder.parent
        for folder in reversed(missing):
            try:
                folder.mkdir()
            except FileExistsError:  # made by another process meanwhile: not ours to remove
                continue
            self.created.append(folder)

    def _try_create(self) -> bool:
        """Create the lock file if there is none; True when it is now ours."""
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o644)
        except FileExistsError:
            return False
        self._fd = fd
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # waits only while a contender looks at the file
        me = {"pid": os.getpid(), "host": socket.gethostname(), "command": self.command,
              "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        os.write(fd, json.dumps(me).encode("utf-8"))
        os.fsync(fd)
        return True

    def _clear_stale(self) -> None:
        """Remove the existing lock when its holder is a dead process of this host; else RunLockError."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return  # released meanwhile: try again
        try:
            free = _try_flock(fd)
            if not _same_file(fd, self.path):
                return  # removed or replaced meanwhile: try again
            holder = _read_holder(fd)
            pid, host = holder.get("pid"), holder.get("host")
            here = host == socket.gethostname() and isinstance(pid, int)
            mine = here and pid == os.getpid()  # a pid reused after a restart: no other lock of ours holds it
            dead = here and not mine and not pid_alive(pid)
            if dead and not free:
                return  # another process is taking this stale lock over right now: look again
            if not (free and (dead or mine)):
                raise RunLockError(self._refusal(holder))
            self.warn(f"taking over the lock of {self.folder} left by pid {pid} (started "
                      f"{holder.get('started_at')}), which is no longer running")
            self.path.unlink()
        finally:
            os.close(fd)

    def _refusal(self, holder: dict) -> str:
        pid, host, since = holder.get("pid"), holder.get("host"), holder.get("started_at")
        if not holder:
            return (f"{self.folder} is locked by {self.path}, which is being written or cannot be read: if no "
                    f"run is writing this folder, remove {self.path}; else use another --out")
        if host != socket.gethostname():
            return (f"{self.folder} is locked by pid {pid} on host {host} (since {since}), which cannot be "
                    f"checked from here: if that run is over, remove {self.path}; else use another --out")
        return (f"{self.folder} is being written by pid {pid} on {host} (since {since}): wait for it to end, "
                "or use another --out")


def _read_holder(fd: int) -> dict:
    """The holder recorded in an open lock file; {} when it is empty or not JSON (being written)."""
    os.lseek(fd, 0, os.SEEK_SET)
    data = b""
    while chunk := os.read(fd, 65536):
        data += chunk
    try:
        holder = json.loads(data.decode("utf-8"))
    except ValueError:
        return {}
    return holder if isinstance(holder, dict) else {}
