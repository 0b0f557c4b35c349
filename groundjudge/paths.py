"""Paths as committed records should hold them: relative to the project, never this machine's layout."""

from __future__ import annotations

import os
from pathlib import Path


def portable_path(path: str | Path, base: str | Path | None = None) -> str:
    """``path`` relative to ``base`` (the current directory) when it is inside it or in a sibling folder
    (``../shared/datasets/x``), else the bare name: what a record says, not where this machine keeps it."""
    resolved = Path(path).expanduser().resolve()
    root = Path(base or Path.cwd()).resolve()
    relative = Path(os.path.relpath(resolved, root))
    ups = sum(part == ".." for part in relative.parts)
    return relative.as_posix() if ups <= 1 else resolved.name


def portable_model(name: str | None) -> str | None:
    """A model as given (hub name or local folder) for a record: a local folder, or any absolute or ``~``
    path even when it is gone, becomes a portable path; a hub name stays as it is."""
    if not name:
        return name
    local = Path(name).expanduser()
    if local.is_absolute() or name.startswith("~") or local.exists():
        return portable_path(name)
    return name


def portable_command(argv: list[str]) -> str:
    """A command line for a record: every argument that names a local path (absolute, ``~``, or one that exists;
    ``--flag=PATH`` included) as :func:`portable_path` writes it, the rest as given."""
    def portable(arg: str) -> str:
        flag, eq, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
        path = Path(value).expanduser()
        if value and (path.is_absolute() or value.startswith("~") or (not arg.startswith("-") and path.exists())):
            value = portable_path(value)
        return f"{flag}{eq}{value}"
    return " ".join(portable(arg) for arg in argv)
