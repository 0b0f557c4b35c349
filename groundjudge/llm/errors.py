"""Provider failures: the reasons a fallback understands, key redaction, and which errors are retried."""

from __future__ import annotations

import inspect
import os
import re

from tenacity import wait_exponential_jitter

from groundjudge.llm.litellm_module import litellm_module
from groundjudge.types import LLMCall

FALLBACK_REASONS = frozenset({"no_api_key", "provider_error", "retries_exhausted", "budget", "offline", "auth_error",
                              "context_too_long"})
"""Abstain reasons that mean "the LLM path is unavailable" (a fallback judge takes over)."""


def reason_kind(reason: str | None) -> str:
    """The kind of an abstain reason written ``kind: message`` (``"retries_exhausted"``), or ``""``."""
    return (reason or "").split(":", 1)[0].strip()


class ProviderError(RuntimeError):
    """The provider could not answer; ``reason`` is one of FALLBACK_REASONS or 'bad_request'."""

    def __init__(self, reason: str, message: str):
        super().__init__(redact(message))
        self.reason = reason
        self.call: LLMCall | None = None
        """The failed call (attempts, latency, error), when one was made."""


_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)


_KEY_PATTERNS = re.compile(r"(sk-[A-Za-z0-9_\-]{8,}|sk-ant-[A-Za-z0-9_\-]{8,}|AKIA[0-9A-Z]{16}|Bearer\s+[^\s'\"]+)")


def redact(text: str) -> str:
    """Remove API keys from a message: values of *_KEY/*_TOKEN/*_SECRET env vars and key-shaped strings."""
    for name, value in os.environ.items():
        if value and len(value) >= 8 and _SECRET_ENV.search(name):
            text = text.replace(value, "[REDACTED]")
    return _KEY_PATTERNS.sub("[REDACTED]", text)


def _status(err: BaseException) -> int | None:
    return getattr(err, "status_code", None) or getattr(getattr(err, "response", None), "status_code", None)


def retry_after_seconds(err: BaseException) -> float | None:
    """Seconds asked for by a Retry-After header on a rate-limit error, if any."""
    for headers in (getattr(err, "litellm_response_headers", None),
                    getattr(getattr(err, "response", None), "headers", None)):
        if not headers:
            continue
        try:
            value = headers.get("retry-after") or headers.get("Retry-After")
        except AttributeError:
            continue
        if value is not None:
            try:
                return max(float(value), 0.0)
            except ValueError:
                return None
    return None


def is_retryable(err: BaseException) -> bool:
    """429, 5xx, connection errors and timeouts are retried; auth, bad request and not-found are not."""
    litellm = litellm_module()
    if isinstance(err, (litellm.AuthenticationError, litellm.PermissionDeniedError, litellm.NotFoundError,
                        litellm.BadRequestError, litellm.ContextWindowExceededError)):
        return False
    if isinstance(err, (litellm.RateLimitError, litellm.Timeout, litellm.APIConnectionError,
                        litellm.InternalServerError, litellm.ServiceUnavailableError, litellm.BadGatewayError)):
        return True
    status = _status(err)
    return isinstance(status, int) and (status == 429 or status >= 500)


_BACKOFF_BASE = "multiplier" if "multiplier" in inspect.signature(wait_exponential_jitter).parameters \
    else "initial"
"""The backoff's base keyword: ``multiplier`` from tenacity 9.2 (``initial`` is deprecated there), ``initial``
before it (the [phoenix] extra holds tenacity below 9.2)."""


class _Wait:
    """Jittered exponential backoff, or the server's Retry-After when it gives one (capped)."""

    def __init__(self, cap: float = 60.0):
        self.backoff = wait_exponential_jitter(**{_BACKOFF_BASE: 0.5}, max=20.0, jitter=0.5)
        self.cap = cap

    def __call__(self, state) -> float:
        err = state.outcome.exception() if state.outcome else None
        asked = retry_after_seconds(err) if err else None
        return min(asked, self.cap) if asked is not None else self.backoff(state)
