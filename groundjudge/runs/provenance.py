"""What a run header records of where it ran: package versions and the git commit of the code."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

VERSIONED = ("groundjudge", "pydantic", "litellm", "torch", "transformers", "sentence-transformers", "numpy")
"""The packages whose versions a run header records (those installed)."""


def package_versions() -> dict[str, str]:
    """Python's version and those of the :data:`VERSIONED` packages that are installed."""
    versions = {"python": sys.version.split()[0]}
    for name in VERSIONED:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def git_commit() -> str | None:
    """The commit of the groundjudge checkout in use, or None outside a git checkout."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent, capture_output=True,
                             text=True, timeout=5, check=False)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None
