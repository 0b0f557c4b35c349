"""The terminal consoles: messages and progress on stderr, results on stdout (full width when piped)."""

from __future__ import annotations

import sys

from rich.console import Console

console = Console(stderr=True)
"""Messages, warnings and progress bars (stderr)."""


def stdout_console() -> Console:
    """A console for results: full width even when piped (tables are read in CI logs too)."""
    return Console() if sys.stdout.isatty() else Console(width=220)
