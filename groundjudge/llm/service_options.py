"""The options that make a run's LLM service (prompts, call cache, budget), and the service made from them."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, Field


def default_cache_dir() -> Path:
    """Where LLM calls are cached: $GROUNDJUDGE_CACHE_DIR, else ~/.cache/groundjudge/calls."""
    env = os.environ.get("GROUNDJUDGE_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "groundjudge" / "calls"


class LLMOptions(BaseModel):
    """How a run's LLM judges reach their models: templates, call cache and budget (mixed into ``RunOptions``)."""

    prompts: str | None = Field(default=None, description="Template folder for LLM judges without their own.")
    cache_dir: str | None = Field(default=None, description=(
        "LLM call cache (default $GROUNDJUDGE_CACHE_DIR or ~/.cache/groundjudge/calls)."))
    no_cache: bool = Field(default=False, description="Neither read nor write the call cache.")
    max_cost: float | None = Field(default=None, description=(
        "Stop new LLM calls once this many dollars are spent (the rest fall back or abstain: budget)."))


def make_service(options: LLMOptions, offline: bool = False, cache=None):
    """The LLM service that a run's judges share: prompt library, call cache and budget, as ``options`` say.

    ``offline=True`` answers from the cache only (replay); ``cache`` replaces the disk cache the options name.
    """
    from groundjudge.llm import Budget, CallCache, LLMService
    from groundjudge.llm.templates import prompt_library

    if cache is None:
        cache = CallCache(None if options.no_cache else (options.cache_dir or default_cache_dir()),
                          enabled=not options.no_cache)
    return LLMService(prompts=prompt_library(options.prompts), cache=cache, budget=Budget(options.max_cost),
                      offline=offline)
