"""What the verbs share beyond the engine: the LLM flags, and the names they import from the rooms below."""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from groundjudge.consoles import console, stdout_console  # noqa: E402
from groundjudge.errors import UsageError  # noqa: E402
from groundjudge.judges import uses_llm  # noqa: E402
from groundjudge.llm.service_options import LLMOptions, default_cache_dir, make_service  # noqa: E402
from groundjudge.runs.provenance import git_commit, package_versions  # noqa: E402

__all__ = ["UsageError", "add_llm_options", "console", "default_cache_dir", "git_commit", "llm_options", "make_service",
           "package_versions", "stdout_console", "uses_llm"]


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
