"""The one way groundjudge calls a language model: litellm + tenacity + pydantic + a disk cache + cost.

``client`` (LLMService: render, cache, call with retries, validate, record), ``settings`` (LLMSettings),
``cache`` (the call cache), ``cost`` (prices and the budget), ``errors`` (ProviderError, retry rules,
key redaction), ``templates`` (the Jinja prompt library), ``dryrun`` (cost estimates before a run) and
``batch`` (the OpenAI and Anthropic batch APIs, built on the cache).
"""

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "CallCache": "cache", "cache_key": "cache", "LLMService": "client", "parse_json_reply": "client",
    "Budget": "cost", "price": "cost", "FALLBACK_REASONS": "errors", "ProviderError": "errors",
    "is_retryable": "errors", "redact": "errors", "retry_after_seconds": "errors", "JsonMode": "settings",
    "LLMSettings": "settings",
}
"""Each public name and the submodule defining it: imported on first use, so that a process judging only with
local judges never loads litellm."""

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import a public name from its submodule on first use (PEP 562)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'groundjudge.llm' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"groundjudge.llm.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from groundjudge.llm.cache import CallCache, cache_key
    from groundjudge.llm.client import LLMService, parse_json_reply
    from groundjudge.llm.cost import Budget, price
    from groundjudge.llm.errors import FALLBACK_REASONS, ProviderError, is_retryable, redact, retry_after_seconds
    from groundjudge.llm.settings import JsonMode, LLMSettings
