"""The one way groundjudge calls a language model: litellm + tenacity + pydantic + a disk cache + cost.

``client`` (LLMService: render, cache, call with retries, validate, record), ``settings`` (LLMSettings),
``cache`` (the call cache), ``cost`` (prices and the budget), ``errors`` (ProviderError, retry rules,
key redaction), ``templates`` (the Jinja prompt library), ``dryrun`` (cost estimates before a run) and
``batch`` (the OpenAI and Anthropic batch APIs, built on the cache).
"""

from groundjudge.llm.cache import CallCache, cache_key
from groundjudge.llm.client import LLMService, parse_json_reply
from groundjudge.llm.cost import Budget, price
from groundjudge.llm.errors import (
    FALLBACK_REASONS,
    ProviderError,
    is_retryable,
    redact,
    retry_after_seconds,
)
from groundjudge.llm.settings import JsonMode, LLMSettings

__all__ = [
    "FALLBACK_REASONS", "Budget", "CallCache", "JsonMode", "LLMService", "LLMSettings", "ProviderError",
    "cache_key", "is_retryable", "parse_json_reply", "price", "redact", "retry_after_seconds",
]
