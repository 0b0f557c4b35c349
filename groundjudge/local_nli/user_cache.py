"""Where groundjudge keeps what it makes once per machine (checks, assembled models): a folder named by an
environment variable, else one under ``$XDG_CACHE_HOME`` or ``~/.cache``."""

from __future__ import annotations

import os
from pathlib import Path


def cache_folder(env_var: str, name: str) -> Path:
    """``$env_var`` when set, else ``$XDG_CACHE_HOME/groundjudge/name`` (``~/.cache`` without it)."""
    chosen = os.environ.get(env_var)
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "groundjudge" / name
