"""What the verbs share beyond the engine: the LLM flags, and the names they import from the rooms below."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from groundjudge.consoles import console, stdout_console  # noqa: E402
from groundjudge.errors import UsageError  # noqa: E402
from groundjudge.judges import uses_llm  # noqa: E402
from groundjudge.llm.service_options import LLMOptions, default_cache_dir, make_service  # noqa: E402
from groundjudge.runs.provenance import git_commit, package_versions  # noqa: E402

__all__ = ["UsageError", "add_llm_options", "console", "default_cache_dir", "git_commit", "llm_options", "make_service",
           "package_versions", "print_trained", "stdout_console", "uses_llm"]


def add_llm_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--prompts``, ``--cache-dir`` and ``--no-cache`` (the :class:`LLMOptions` flags) to a verb."""
    parser.add_argument("--prompts", metavar="DIR", help="folder of prompt templates overriding the built-in ones")
    parser.add_argument("--cache-dir", metavar="DIR", help="LLM call cache (default $GROUNDJUDGE_CACHE_DIR or "
                                                           "~/.cache/groundjudge/calls)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the LLM call cache")


def llm_options(args: argparse.Namespace) -> LLMOptions:
    """The :class:`LLMOptions` a verb's flags give (flags the verb lacks keep their defaults)."""
    return LLMOptions.model_validate({name: getattr(args, name) for name in LLMOptions.model_fields
                                      if getattr(args, name, None) is not None})


def print_trained(card: dict[str, Any] | None, out: str, dev_line: Callable[[dict[str, Any], str], str]) -> int:
    """What a training verb prints at its end: ``dev_line(dev, auc_text)`` when the card has pair-level dev figures,
    then where the model is; returns the verb's exit status, 0 (also when it stopped before a card)."""
    if card is None:
        return 0
    dev = card["dev_metrics"]["pair_level"]
    if dev:
        auc = "n/a" if dev["auc"] is None else f"{dev['auc']:.3f}"
        stdout_console().print(dev_line(dev, auc))
    stdout_console().print(f"model: {out} (best step {card['best_step']} of {card['steps']}, "
                           f"{card['training_time_s']} s training)")
    return 0
