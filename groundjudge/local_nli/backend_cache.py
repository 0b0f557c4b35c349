"""Where ``dtype=auto`` keeps the agreement it measured, so the check runs once per machine and model.

One small JSON file per check in ``$GROUNDJUDGE_BACKEND_CACHE`` (else ``$XDG_CACHE_HOME/groundjudge/backend``,
else ``~/.cache/groundjudge/backend``), named by a hash of what the outcome depends on: the model (its resolved
path and the names, sizes and modification times of its files), how verdicts are read from it, the device
(on CPU its feature flags, on CUDA the GPU's name), the torch version, the precision checked and the check
set. Any of them changing is a new key, so a new check. The measurement is kept, not the decision: the bar
(``GROUNDJUDGE_AUTO_MIN_AGREEMENT``) is applied each time it is read. Processes that start on the same model at
once (Ray actors, a service's workers) take a file lock per key (:func:`locked`), so one measures and the others
wait and read its record.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock
from filelock import Timeout as LockTimeout

from pydantic import BaseModel, ValidationError

from groundjudge.local_nli import precision
from groundjudge.local_nli.user_cache import cache_folder

ENV_CACHE = "GROUNDJUDGE_BACKEND_CACHE"
"""The environment variable naming the cache folder (tests point it at a temporary one)."""
LOCK_WAIT_S = 900.0
"""How long a process waits for another's check of the same key before it runs its own (a check takes seconds
to a few minutes)."""

log = logging.getLogger(__name__)


class CheckRecord(BaseModel):
    """One measured check, as stored: what was compared and how much of it agreed."""

    model: str
    """The model's resolved path (and loader), as checked."""
    rule: str
    """How a verdict is read from the model's output (e.g. ``argmax``)."""
    device: str
    """``cpu``, ``cuda``, ..."""
    machine: str
    """The device's identity: CPU flags or GPU name (what made the check valid only here)."""
    torch: str
    dtype: str
    """The precision compared with float32."""
    check_set: str
    """The check set's hash."""
    pairs: int
    agreement: float
    """The share of the check set's pairs with the same verdict at ``dtype`` as at float32."""
    seconds: float
    """What the check cost (both loads and both scorings)."""
    measured_at: str


def cache_dir() -> Path:
    """The folder of the cached checks."""
    return cache_folder(ENV_CACHE, "backend")


def model_identity(path: str) -> str:
    """A model folder's identity: its resolved path and a hash of its files' names, sizes and mtimes."""
    folder = Path(path)
    digest = hashlib.sha256()
    if folder.is_dir():
        for file in sorted(folder.rglob("*")):
            if file.is_file() and "checkpoints" not in file.parts:
                stat = file.stat()
                digest.update(f"{file.relative_to(folder)}\x1f{stat.st_size}\x1f{int(stat.st_mtime)}\x1e".encode())
    return f"{folder.resolve() if folder.exists() else path}@{digest.hexdigest()[:12]}"


def machine_identity(device: str) -> str:
    """What a check's outcome depends on besides the model: the CPU's flags, or the GPU's name."""
    if device.startswith("cuda"):
        import torch

        return f"cuda:{torch.cuda.get_device_name()}"
    return "cpu-flags:" + hashlib.sha256(" ".join(sorted(precision.machine_flags())).encode()).hexdigest()[:16]


def record_key(record: CheckRecord) -> str:
    """The file name of a record: a hash of every field its outcome depends on."""
    fields = ("model", "rule", "device", "machine", "torch", "dtype", "check_set")
    text = "\x1f".join(str(getattr(record, name)) for name in fields)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def read(key: str) -> CheckRecord | None:
    """The cached record under ``key`` (None when absent or unreadable)."""
    try:
        return CheckRecord.model_validate_json((cache_dir() / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, ValidationError):
        return None


def write(record: CheckRecord) -> Path | None:
    """Store a record (atomically); None when the cache folder cannot be written (the check then reruns)."""
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=folder, suffix=".tmp", delete=False, encoding="utf-8") as tmp:
            tmp.write(record.model_dump_json(indent=1) + "\n")
        target = folder / f"{record_key(record)}.json"
        os.replace(tmp.name, target)
        return target
    except OSError:
        return None


@contextlib.contextmanager
def locked(key: str, wait_s: float = LOCK_WAIT_S) -> Iterator[bool]:
    """Hold the cross-process lock of one check (``KEY.lock`` beside its record) while inside; yields whether the
    lock is held. Where the folder cannot be written, or another process holds the lock past ``wait_s``, it goes
    on unlocked (the check then may run twice, which costs time, not correctness: records are written atomically)."""
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(folder / f"{key}.lock"), timeout=wait_s)
        lock.acquire()
    except LockTimeout:
        log.warning("dtype=auto: another process held the check of %s for %.0f s; checking here too", key, wait_s)
        yield False
        return
    except OSError:
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


def entries() -> list[CheckRecord]:
    """Every readable record in the cache, oldest first."""
    found = []
    for file in sorted(cache_dir().glob("*.json")) if cache_dir().is_dir() else []:
        try:
            found.append(CheckRecord.model_validate_json(file.read_text(encoding="utf-8")))
        except (OSError, ValueError, ValidationError):
            continue
    return sorted(found, key=lambda r: r.measured_at)

