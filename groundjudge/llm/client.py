"""LLMService: render, call (or read the cache), validate and record every call to a model.

``LLMService.complete`` renders a prompt template, answers from the cache when
it can, else calls ``litellm.acompletion`` with retries (429 honouring
Retry-After, 5xx, dropped connections, timeouts; never auth or bad-request
errors), validates the JSON reply with a pydantic model, re-asks once showing
the validation error, and records every call as an :class:`LLMCall`. A reply
still invalid returns ``None`` (the judge abstains with ``parse_failure``);
a provider that cannot be used raises :class:`ProviderError` with a reason the
fallback judge understands. API keys are read from the environment by litellm
and are scrubbed from every message that is recorded or logged. In a batch run
(``LLMService.batch``) a batch-mode judge's call that is not in the cache is
filed for the next provider batch instead of sent (see ``groundjudge.llm.batch``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from aiolimiter import AsyncLimiter  # noqa: E402
from pydantic import BaseModel, ValidationError  # noqa: E402
from tenacity import (  # noqa: E402
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
)

from groundjudge.llm.litellm_module import litellm_module
from groundjudge.llm.batch.requests import BatchSession
from groundjudge.llm.cache import CallCache, cache_key, recorded_entry
from groundjudge.llm.concurrency import resolve_concurrency, server_slots
from groundjudge.llm.context_window import check_fits, model_window
from groundjudge.llm.cost import Budget, price
from groundjudge.llm.repeats import current_repeat
from groundjudge.llm.reply_schema import decoding_schema
from groundjudge.llm.errors import ProviderError, _Wait, is_retryable, redact
from groundjudge.llm.settings import LLMSettings
from groundjudge.llm.templates import PromptLibrary, prompt_library  # noqa: E402
from groundjudge.llm.timing import current_clock, server_seconds
from groundjudge.llm.token_scores import TOP_LOGPROBS, TokenScore, first_token_logprobs, score_reply
from groundjudge.types import LLMCall  # noqa: E402



def parse_json_reply(text: str | None, output_model: type[BaseModel]) -> BaseModel:
    """Validate a reply as the output model, tolerating code fences and prose around one JSON object."""
    if text is None:
        raise ValueError("empty reply")
    body = text.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", body, re.DOTALL)
    if fenced:
        body = fenced.group(1).strip()
    if not body.startswith(("{", "[")):
        start = body.find("{")
        end = body.rfind("}")
        if start >= 0 and end > start:
            body = body[start:end + 1]
    return output_model.model_validate_json(body)


YES_NO_TOKENS = 4
"""Output tokens of a yes/no call: the word (one token in every tokenizer seen) and a little slack."""

YES_NO_REASK = "Your reply did not start with yes or no. Answer with one word: yes or no."


def _response_format(settings: LLMSettings, output_model: type[BaseModel] | None) -> dict | None:
    if output_model is None:
        return None
    mode = settings.json_mode
    schema = decoding_schema(output_model)
    if mode == "auto":
        if _supports_schema(settings.model):
            mode = "schema"
        elif settings.model.split("/")[0] in ("openai", "hosted_vllm", "ollama", "ollama_chat", "llamacpp") \
                and settings.api_base:
            mode = "object"
        else:
            mode = "none"
    if mode == "schema":
        return {"type": "json_schema", "json_schema": {"name": output_model.__name__, "schema": schema}}
    if mode == "object":
        return {"type": "json_object", "schema": schema}
    return None


def _provider_key_missing(model: str) -> bool:
    litellm = litellm_module()
    try:
        return not litellm.validate_environment(model=model).get("keys_in_environment", True)
    except Exception:  # noqa: BLE001 - unknown provider
        return True


def _needs_key(settings: LLMSettings) -> str | None:
    """The missing key's env var name when the provider needs one and none is set (local endpoints need none)."""
    litellm = litellm_module()
    if settings.api_base:
        return None
    if settings.api_key_env:
        return None if os.environ.get(settings.api_key_env) else settings.api_key_env
    try:
        check = litellm.validate_environment(model=settings.model)
    except Exception:  # noqa: BLE001 - unknown provider: let the call decide
        return None
    missing = check.get("missing_keys") or []
    return missing[0] if missing and not check.get("keys_in_environment") else None


@lru_cache(maxsize=256)
def _supports_schema(model: str) -> bool:
    litellm = litellm_module()
    try:
        return bool(litellm.supports_response_schema(model=model))
    except Exception:  # noqa: BLE001 - unknown model
        return False


@dataclass
class _ModelLimits:
    """The client-side limits of one model: calls in flight (resolved), request and token rates."""

    semaphore: asyncio.Semaphore
    requests: AsyncLimiter | None
    tokens: AsyncLimiter | None
    concurrency: int
    server_slots: int | None = None
    window: int | None = None
    in_flight: int = 0


@dataclass
class LLMService:
    """Shared by every LLM judge of a run: prompts, cache, budget, concurrency and rate limits."""

    prompts: PromptLibrary = field(default_factory=prompt_library)
    cache: CallCache = field(default_factory=lambda: CallCache(None, enabled=False))
    budget: Budget = field(default_factory=Budget)
    offline: bool = False
    """No network: a call not in the cache fails with reason 'offline' (used by replay)."""
    batch: BatchSession | None = None
    """A batch run's session: calls of batch-mode judges not in the cache are filed for the next provider batch
    (:class:`~groundjudge.llm.batch.Deferred`) instead of sent; None outside a batch run (calls go online)."""
    limits_factory: Any = None
    """Builds a model's (requests, tokens) rate limiters instead of this process's AsyncLimiters: a Ray run shares
    them over the cluster (:func:`groundjudge.llm.shared_limits.limits_factory`); None: per process."""
    _limits: dict = field(default_factory=dict, repr=False)

    async def _limiters(self, settings: LLMSettings) -> _ModelLimits:
        loop = asyncio.get_running_loop()
        key = (id(loop), settings.model, settings.api_base, settings.concurrency, settings.context_window)
        if key not in self._limits:
            concurrency = await resolve_concurrency(settings)
            # requests evenly spaced (no burst at the start of a minute); tokens over 10-second windows
            requests = AsyncLimiter(1, 60 / settings.rpm) if settings.rpm else None
            tokens = AsyncLimiter(settings.tpm / 6, 10) if settings.tpm else None
            if self.limits_factory is not None:
                requests, tokens = self.limits_factory(settings)
            slots = await server_slots(settings)
            window = await model_window(settings)
            self._limits.setdefault(key, _ModelLimits(asyncio.Semaphore(concurrency), requests, tokens, concurrency,
                                                      slots, window))
        return self._limits[key]

    async def complete(self, settings: LLMSettings, prompt: str, variables: dict[str, Any],
                       output_model: type[BaseModel], calls: list[LLMCall], sample_index: int = 0,
                       prompts: PromptLibrary | None = None) -> BaseModel | None:
        """Render, call (or read the cache), validate; re-ask once on invalid output.

        Appends every call made (or read from the cache) to ``calls``. Returns the
        parsed output, or None when the reply is still invalid after the re-ask.
        Raises ProviderError when the provider cannot be used. ``prompts`` is the judge's own template library
        (default: the run's).
        """
        rendered = (prompts or self.prompts).render(prompt, variables)
        messages = list(rendered.messages)
        for attempt in range(2):
            try:
                call = await self._call(settings, rendered.name, rendered.template_hash, messages, output_model,
                                        sample_index, {})
            except ProviderError as err:
                if err.call is not None:
                    calls.append(err.call)
                raise
            try:
                parsed = parse_json_reply(call.raw_output, output_model)
            except (ValidationError, ValueError) as err:
                error = redact(str(err).splitlines()[0] if attempt else str(err))[:2000]
                calls.append(call.model_copy(update={"error": f"parse_failure: {error[:300]}"}))
                messages = messages + [
                    {"role": "assistant", "content": call.raw_output or ""},
                    {"role": "user", "content": "Your reply could not be used: " + error
                     + "\nReply again with only one JSON object that follows the requested format."},
                ]
                continue
            calls.append(call.model_copy(update={"parsed": parsed.model_dump(mode="json")}))
            return parsed
        return None

    async def score_yes_no(self, settings: LLMSettings, prompt: str, variables: dict[str, Any],
                           calls: list[LLMCall], logprobs: bool, sample_index: int = 0,
                           prompts: PromptLibrary | None = None) -> TokenScore | None:
        """Render a yes/no prompt and score the reply: P(yes) from the first token's top log-probabilities when
        ``logprobs`` is asked for and the provider returns them, else the one-word verdict (see ``token_scores``).

        Re-asks once when the reply is neither yes nor no; returns None if it still is not. Every call is appended
        to ``calls`` with its top log-probabilities; raises ProviderError like ``complete``.
        """
        rendered = (prompts or self.prompts).render(prompt, variables)
        messages = list(rendered.messages)
        short = dataclasses.replace(settings, max_tokens=YES_NO_TOKENS)
        extra = {"logprobs": True, "top_logprobs": TOP_LOGPROBS} if logprobs else {}
        for _ in range(2):
            try:
                call = await self._call(short, rendered.name, rendered.template_hash, messages, None, sample_index,
                                        extra)
            except ProviderError as err:
                if err.call is not None:
                    calls.append(err.call)
                raise
            scored = score_reply(call.raw_output, call.logprobs)
            if scored is None:
                calls.append(call.model_copy(update={"error": "parse_failure: the reply is neither yes nor no"}))
                messages = messages + [{"role": "assistant", "content": call.raw_output or ""},
                                       {"role": "user", "content": YES_NO_REASK}]
                continue
            calls.append(call.model_copy(update={"parsed": scored.model_dump(mode="json")}))
            return scored
        return None

    async def _call(self, settings: LLMSettings, template: str, template_hash: str, messages: list[dict],
                    output_model: type[BaseModel] | None, sample_index: int, extra: dict[str, Any]) -> LLMCall:
        schema = decoding_schema(output_model)
        repeat = current_repeat()
        key = cache_key(settings, messages, schema, sample_index, repeat, extra)
        prompt_hash = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:16]
        base = {"model": settings.model, "template": template, "template_hash": template_hash,
                "prompt_hash": prompt_hash, "cache_key": key, "messages": tuple(messages), "repeat": repeat}
        hit = self.cache.get(key)
        if hit is not None:
            # a batch run: a reply it paid for (a batch line, or a call of an example deferred after it) is
            # charged to the first record that reads it, as a call made
            fresh = self.batch.claim(key) if self.batch is not None else None
            return LLMCall(**base, raw_output=hit["raw_output"], input_tokens=hit["input_tokens"],
                           output_tokens=hit["output_tokens"], cost_usd=hit["cost_usd"], cached=fresh is None,
                           attempts=0 if fresh is None else 1, source_latency_s=hit.get("latency_s"),
                           latency_s=(hit.get("latency_s") or 0.0) if fresh is not None else 0.0,
                           logprobs=hit.get("logprobs"), batch=bool(hit.get("batch_id")), batch_id=hit.get("batch_id"))
        if self.offline:
            raise ProviderError("offline", f"no recorded reply for a {template!r} call and the network is off")
        missing = _needs_key(settings)
        if missing:
            raise ProviderError("no_api_key", f"{settings.model} needs {missing}, which is not set")
        litellm = litellm_module()   # here, not above: a run or replay answered from the cache never imports it
        response_format = _response_format(settings, output_model)
        await self.budget.check_async()
        limits = await self._limiters(settings)
        check_fits(settings, messages, limits.window, template)
        if self.batch is not None and self.batch.applies(settings):
            self._defer(settings, key, base, messages, response_format, extra)   # raises Deferred, or retries online
        prompt_tokens = litellm.token_counter(model=settings.model, messages=messages) if limits.tokens else 0
        kwargs: dict[str, Any] = {"model": settings.model, "messages": messages, "timeout": settings.timeout,
                                  "max_retries": 0, "num_retries": 0, **settings.sampling()}
        if settings.api_key_env:
            kwargs["api_key"] = os.environ[settings.api_key_env]
        if settings.api_base:
            kwargs["api_base"] = settings.api_base
            if "api_key" not in kwargs and _provider_key_missing(settings.model):
                kwargs["api_key"] = "no-key-needed"  # a local server; litellm's clients insist on some key
        if response_format:
            kwargs["response_format"] = response_format
        kwargs.update(extra)
        clock = current_clock()
        attempts, in_flight, limited = 0, 0, 0.0
        waited = time.perf_counter()
        with clock.waiting():
            await limits.semaphore.acquire()
        start = time.perf_counter()
        slot_wait = start - waited
        try:
            async for attempt in AsyncRetrying(stop=stop_after_attempt(settings.max_attempts), wait=_Wait(),
                                               retry=retry_if_exception(is_retryable), reraise=True):
                with attempt:
                    attempts += 1
                    waited = time.perf_counter()
                    with clock.waiting():
                        if limits.requests:
                            await limits.requests.acquire()
                        if limits.tokens:
                            await limits.tokens.acquire(min(prompt_tokens, settings.tpm / 6))
                    limited += time.perf_counter() - waited
                    limits.in_flight += 1
                    in_flight = max(in_flight, limits.in_flight)
                    try:
                        with clock.serving():
                            response = await litellm.acompletion(**kwargs)
                    finally:
                        limits.in_flight -= 1
        except Exception as err:  # noqa: BLE001 - classified here; the message is redacted
            if isinstance(err, (litellm.AuthenticationError, litellm.PermissionDeniedError)):
                reason = "auth_error"
            elif isinstance(err, (litellm.BadRequestError, litellm.ContextWindowExceededError)):
                reason = "bad_request"
            else:
                reason = "retries_exhausted" if is_retryable(err) else "provider_error"
            message = redact(f"{type(err).__name__} after {attempts} attempt(s): {err}")[:1000]
            failure = ProviderError(reason, message)
            failure.call = LLMCall(**base, attempts=attempts, latency_s=time.perf_counter() - start - limited,
                                   queue_s=slot_wait + limited, concurrency=limits.concurrency, server_slots=limits.server_slots,
                                   in_flight=in_flight or None,
                                   error=f"{reason}: {message}")
            raise failure from None
        finally:
            limits.semaphore.release()
        latency = time.perf_counter() - start - limited  # the rate limiters' waits are queueing, not service
        usage = getattr(response, "usage", None)
        input_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        output_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        cost = price(settings, input_tokens, output_tokens)
        self.budget.add(cost)
        raw = response.choices[0].message.content
        top = first_token_logprobs(response) if extra.get("logprobs") else None
        call = LLMCall(**base, raw_output=raw, input_tokens=input_tokens, output_tokens=output_tokens, logprobs=top,
                       cost_usd=cost, latency_s=latency, queue_s=slot_wait + limited, server_s=server_seconds(response),
                       concurrency=limits.concurrency, server_slots=limits.server_slots, in_flight=in_flight,
                       attempts=attempts)
        self.cache.put(key, recorded_entry(call))
        if self.batch is not None:
            self.batch.paid_online(key)
        return call

    def _defer(self, settings: LLMSettings, key: str, base: dict[str, Any], messages: list[dict],
               response_format: dict | None, extra: dict[str, Any]) -> None:
        """Batch mode: file the request for the next batch (raises Deferred). A request whose batch line failed
        returns (it is retried online) or, with ``batch_failures=abstain``, raises ProviderError with the reason."""
        litellm = litellm_module()
        params = {**settings.sampling(), **({"response_format": response_format} if response_format else {}), **extra}
        try:
            failure = self.batch.defer(key, settings, messages, params, base["template"])
        except litellm.BadRequestError as err:   # parameters the provider does not take (as online)
            message = redact(f"{type(err).__name__}: {err}")[:1000]
            refused = ProviderError("bad_request", message)
            refused.call = LLMCall(**base, attempts=0, batch=True, error=f"bad_request: {message}")
            raise refused from None
        if settings.batch_failures == "abstain":
            error = ProviderError(failure.reason, f"batch {failure.batch_id}: {failure.message}")
            error.call = LLMCall(**base, attempts=0, batch=True, batch_id=failure.batch_id,
                                 error=f"{failure.reason}: {failure.message}"[:1000])
            raise error
