"""The one way an adapter imports its outside package: lazily, with a one-line error naming the extra to install."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType


class MissingExtraError(ImportError):
    """An adapter's outside package is not installed; the message names the ``pip install`` command."""


def install_hint(extra: str) -> str:
    """The command that installs ``extra``: ``pip install "groundjudge[extra]"``."""
    return f'pip install "groundjudge[{extra}]"'


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` (e.g. ``"mlflow"``) or raise MissingExtraError naming ``pip install "groundjudge[extra]"``.

    Only a missing top-level package becomes the one-line error; an import error raised from inside an installed
    package (a broken install, a version clash) is left as it is, so its real cause stays visible.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        missing = (error.name or "").split(".")[0]
        if missing and missing != module.split(".")[0]:
            raise
        raise MissingExtraError(
            f"{module} is not installed: this adapter needs the [{extra}] extra; {install_hint(extra)}") from None


def lazy_class(module: str, name: str, make: Callable[[], type]) -> Callable[[str], type]:
    """A module ``__getattr__`` (PEP 562) that builds class ``name`` with ``make()`` on first use and keeps it, so
    importing an adapter module never imports the tool it adapts; any other missing name is an AttributeError."""
    made: dict[str, type] = {}

    def __getattr__(attribute: str) -> type:
        if attribute != name:
            raise AttributeError(f"module {module!r} has no attribute {attribute!r}")
        if name not in made:
            made[name] = make()
        return made[name]

    return __getattr__
