"""Deferred requests: what a call in batch mode records instead of sending, and the signal that ends its example's
round.

In a batch run the client does not send a request that is not in the call cache: it builds the exact body
litellm would have sent (litellm's own parameter mapping and, for Anthropic, its request transformation), files it
as a :class:`PendingRequest` under the call's cache key and raises :class:`Deferred`. The runner catches the
signal, drops the example for this round, and the batch driver submits the pending requests at the round's end.
The :class:`BatchSession` holds the run's pending requests, the batch replies not yet counted by any record
(``fresh``: the first record that reads one is charged for it) and the lines that failed.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from groundjudge.llm.litellm_module import litellm_module
from groundjudge.llm.settings import LLMSettings

Provider = Literal["openai", "anthropic"]
BATCH_PROVIDERS: tuple[str, ...] = ("openai", "anthropic")
"""Providers whose batch API groundjudge uses."""

_OPENAI_PREFIXES = ("gpt-", "o1", "o3", "o4", "chatgpt-")


class Deferred(BaseException):
    """Signal: a call of a batch-mode judge was filed for the next batch, so this example waits for the next round.

    A BaseException (like KeyboardInterrupt), so that a judge's ``except Exception`` never takes it for a failure;
    the runner catches it."""

    def __init__(self, key: str):
        super().__init__(f"request {key[:12]} deferred to a provider batch")
        self.key = key


class BatchUnavailable(RuntimeError):
    """A batch-mode judge whose provider has no batch API groundjudge can use (the run stops)."""


def provider_of(model: str) -> Provider | None:
    """The batch provider of a litellm model name: ``openai/...``, ``gpt-...``, ``o1...`` -> openai;
    ``anthropic/...``, ``claude-...`` -> anthropic; anything else None."""
    prefix, slash, _ = model.partition("/")
    if slash:
        return prefix if prefix in BATCH_PROVIDERS else None  # type: ignore[return-value]
    if model.startswith(_OPENAI_PREFIXES):
        return "openai"
    if model.startswith("claude-"):
        return "anthropic"
    return None


def bare_model(model: str) -> str:
    """The provider's own model name (litellm's ``openai/`` or ``anthropic/`` prefix removed)."""
    prefix, slash, rest = model.partition("/")
    return rest if slash and prefix in BATCH_PROVIDERS else model


def require_provider(model: str, where: str = "") -> Provider:
    """The batch provider of a model, or :class:`BatchUnavailable` naming the model."""
    provider = provider_of(model)
    if provider is None:
        raise BatchUnavailable(f"{where}{model}: provider batch APIs are available for OpenAI (openai/..., gpt-...) "
                               f"and Anthropic (anthropic/..., claude-...) models only; run this judge without batch")
    return provider


def request_body(model: str, messages: list[dict], params: dict[str, Any]) -> tuple[dict, dict | None]:
    """The body litellm would send for these messages and parameters (sampling, response_format, logprobs), and,
    for an Anthropic JSON-mode request, the optional parameters its reply is read back with (else None)."""
    litellm = litellm_module()

    provider = require_provider(model)
    bare = bare_model(model)
    optional = litellm.utils.get_optional_params(model=bare, custom_llm_provider=provider, **params)
    optional = {k: v for k, v in optional.items() if k != "stream"}
    if provider == "openai":
        extra = optional.pop("extra_body", None) or {}
        return {"model": bare, "messages": copy.deepcopy(messages), **optional, **extra}, None
    from litellm.llms.anthropic.chat.transformation import AnthropicConfig

    body = AnthropicConfig().transform_request(bare, copy.deepcopy(messages), copy.deepcopy(optional), {}, {})
    body.pop("json_mode", None)
    return body, (optional if optional.get("json_mode") else None)


class PendingRequest(BaseModel):
    """One request waiting for a batch: its cache key (the batch line's ``custom_id``), where it goes, how it is
    priced, and the body. Holds the name of the key's environment variable, never a key."""

    key: str
    provider: Provider
    model: str = Field(description="The litellm model name (with its provider prefix, as the judge gives it).")
    api_base: str | None = None
    api_key_env: str | None = None
    input_cost_per_mtok: float | None = None
    output_cost_per_mtok: float | None = None
    template: str = ""
    body: dict[str, Any]
    parse_params: dict[str, Any] | None = Field(default=None, description=(
        "Anthropic JSON mode: the optional parameters litellm reads the reply back with (its json tool)."))

    def group(self) -> tuple:
        """Requests with the same group go into one batch: provider, model, endpoint, key variable and prices."""
        return (self.provider, self.model, self.api_base, self.api_key_env, self.input_cost_per_mtok,
                self.output_cost_per_mtok)

    def price_settings(self) -> LLMSettings:
        """Settings that price this request's tokens as the online call would be priced."""
        return LLMSettings(model=self.model, input_cost_per_mtok=self.input_cost_per_mtok,
                           output_cost_per_mtok=self.output_cost_per_mtok)


class BatchFailure(BaseModel):
    """A batch line that brought no usable reply: ``batch_failed`` (an error, a cancelled or failed batch) or
    ``batch_expired`` (the batch's window ended first)."""

    reason: Literal["batch_failed", "batch_expired"]
    message: str = ""
    batch_id: str


@dataclass
class DeferralScope:
    """One example's judging in one round: whether it was deferred, and the fresh batch replies it read."""

    deferred: bool = False
    claimed: dict[str, str] = field(default_factory=dict)
    """Cache key -> batch id of the fresh batch replies this example read."""


_SCOPE: contextvars.ContextVar[DeferralScope | None] = contextvars.ContextVar("groundjudge_batch_scope",
                                                                              default=None)


@contextlib.contextmanager
def deferral_scope() -> Iterator[DeferralScope]:
    """Open the scope of one example (the tasks its judge starts inherit it)."""
    scope = DeferralScope()
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)


def current_scope() -> DeferralScope | None:
    """The scope of the example being judged, or None outside a batch run."""
    return _SCOPE.get()


@dataclass
class BatchSession:
    """The batch state of one run, shared through the run's LLM service."""

    all_judges: bool = False
    """``groundjudge run --batch``: every LLM call of the run goes through batches."""
    pending: dict[str, PendingRequest] = field(default_factory=dict)
    fresh: dict[str, str] = field(default_factory=dict)
    """Replies this run paid for that no written record has counted yet: cache key -> batch id ("" for a call
    made online, e.g. the retry of a failed line, by an example that was then deferred)."""
    failed: dict[str, BatchFailure] = field(default_factory=dict)

    def applies(self, settings: LLMSettings) -> bool:
        """Whether calls with these settings go through batches."""
        return self.all_judges or settings.batch

    def claim(self, key: str) -> str | None:
        """The batch id ("" for an online call) when the reply under ``key`` is fresh: the calling example is
        charged for it and no other is; else None."""
        batch_id = self.fresh.pop(key, None)
        scope = current_scope()
        if batch_id is not None and scope is not None:
            scope.claimed[key] = batch_id
        return batch_id

    def paid_online(self, key: str) -> None:
        """An online call made in a batch run: if its example is deferred, the call stays to be charged."""
        scope = current_scope()
        if scope is not None:
            scope.claimed[key] = ""

    def release(self, scope: DeferralScope) -> None:
        """Give back the fresh replies a deferred example read: its record is not written this round."""
        self.fresh.update(scope.claimed)
        scope.claimed.clear()

    def defer(self, key: str, settings: LLMSettings, messages: list[dict], params: dict[str, Any],
              template: str) -> BatchFailure:
        """File the request for the next batch and raise :class:`Deferred`; or, when its batch line failed,
        return the failure (the caller retries online or abstains)."""
        failure = self.failed.get(key)
        if failure is not None:
            return failure
        if key not in self.pending:
            provider = require_provider(settings.model)
            body, parse_params = request_body(settings.model, messages, params)
            self.pending[key] = PendingRequest(
                key=key, provider=provider, model=settings.model, api_base=settings.api_base,
                api_key_env=settings.api_key_env, input_cost_per_mtok=settings.input_cost_per_mtok,
                output_cost_per_mtok=settings.output_cost_per_mtok, template=template, body=body,
                parse_params=parse_params)
        scope = current_scope()
        if scope is not None:
            scope.deferred = True
        raise Deferred(key)

    def take_pending(self) -> list[PendingRequest]:
        """The requests filed so far (each once), emptying the list."""
        taken, self.pending = list(self.pending.values()), {}
        return taken
