"""Test helpers that ship with groundjudge: the pytest gate (``assert_grounded``, the ``groundjudge`` fixture and
marker: :mod:`groundjudge.testing.pytest_plugin`), a scripted LLM server and a responder that answers its prompts.

Used by the test suite and by the benchmark scripts; useful to anyone testing their own prompts or judges without
a provider. Names are imported on first use: importing this package (as the pytest plugin does in every session)
loads nothing heavy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {"assert_grounded": "groundjudge.testing.assertions", "NotGrounded": "groundjudge.testing.assertions",
            "GateVerdict": "groundjudge.testing.gate_model"}
"""Each public name and the module that defines it."""

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'groundjudge.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from groundjudge.testing.assertions import NotGrounded, assert_grounded
    from groundjudge.testing.gate_model import GateVerdict
