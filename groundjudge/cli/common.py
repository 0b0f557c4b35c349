"""What every verb shares: the consoles, usage errors, versions and commit for run headers, the LLM service."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
from rich.console import Console  # noqa: E402

from groundjudge.judges import (  # noqa: E402
    judge_class,
    parse_spec,
)

console = Console(stderr=True)


def stdout_console() -> Console:
    """A console for results: full width even when piped (tables are read in CI logs too)."""
    return Console() if sys.stdout.isatty() else Console(width=220)


VERSIONED = ("groundjudge", "pydantic", "litellm", "torch", "transformers", "sentence-transformers", "numpy")


class UsageError(Exception):
    """A command line that cannot be carried out as given."""


def package_versions() -> dict[str, str]:
    versions = {"python": sys.version.split()[0]}
    for name in VERSIONED:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent, capture_output=True,
                             text=True, timeout=5, check=False)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def default_cache_dir() -> Path:
    """Where LLM calls are cached: $GROUNDJUDGE_CACHE_DIR, else ~/.cache/groundjudge/calls."""
    env = os.environ.get("GROUNDJUDGE_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "groundjudge" / "calls"


def uses_llm(spec_text: str) -> bool:
    """Whether a judge (or a judge inside it) calls a language model."""
    import dataclasses

    cls = judge_class(parse_spec(spec_text)[0])
    return any(f.name == "service" for f in dataclasses.fields(cls))


def make_service(args: argparse.Namespace, offline: bool = False, cache=None):
    """The run's shared LLM service: prompts, cache, budget."""
    from groundjudge.llm import Budget, CallCache, LLMService
    from groundjudge.llm.templates import prompt_library

    if cache is None:
        no_cache = getattr(args, "no_cache", False)
        cache = CallCache(None if no_cache else (args.cache_dir or default_cache_dir()), enabled=not no_cache)
    return LLMService(prompts=prompt_library(args.prompts), cache=cache,
                      budget=Budget(getattr(args, "max_cost", None)), offline=offline)


def add_llm_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--prompts", metavar="DIR", help="folder of prompt templates overriding the built-in ones")
    parser.add_argument("--cache-dir", metavar="DIR", help="LLM call cache (default $GROUNDJUDGE_CACHE_DIR or "
                                                           "~/.cache/groundjudge/calls)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the LLM call cache")
