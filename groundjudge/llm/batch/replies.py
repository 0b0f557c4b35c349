"""What a provider batch gives back, and a batch line's reply read as the online path reads a reply.

Both providers' clients (:mod:`~groundjudge.llm.batch.openai_batch`, :mod:`~groundjudge.llm.batch.anthropic_batch`)
report a batch's :class:`BatchStatus` and its lines as :class:`LineOutcome`. A successful line's body is turned
into the same litellm response object an online call returns (litellm's own conversion for OpenAI, its Anthropic
response transformation, JSON-tool replies included, for Anthropic), and from it into the call-cache entry the
online path would have stored, priced at the batch price.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from groundjudge.llm.batch.requests import PendingRequest
from groundjudge.llm.cost import batch_price
from groundjudge.llm.litellm_module import litellm_module
from groundjudge.llm.token_scores import first_token_logprobs  # noqa: E402


@dataclass(frozen=True)
class BatchStatus:
    """A batch as its provider reports it: the provider's state word, whether it has ended, and line counts."""

    batch_id: str
    state: str
    finished: bool
    completed: int = 0
    failed: int = 0
    total: int = 0


@dataclass(frozen=True)
class LineOutcome:
    """One line of an ended batch: the reply body, or why there is none (``batch_failed`` / ``batch_expired``)."""

    key: str
    body: dict[str, Any] | None = None
    reason: str | None = None
    message: str = ""


class _NoLogging:
    """Stands in for litellm's logging object when a reply is read without a call."""

    def post_call(self, *args: Any, **kwargs: Any) -> None:
        return None


def openai_response(body: dict[str, Any]) -> Any:
    """A chat-completions body as litellm's ModelResponse (as an online call returns it)."""
    litellm = litellm_module()
    from litellm.utils import convert_to_model_response_object

    return convert_to_model_response_object(response_object=body, model_response_object=litellm.ModelResponse())


def anthropic_response(message: dict[str, Any], request: PendingRequest) -> Any:
    """An Anthropic message as litellm's ModelResponse: its response transformation, which turns a JSON-mode
    tool call back into the reply text, as for an online call."""
    litellm = litellm_module()
    from litellm.llms.anthropic.chat.transformation import AnthropicConfig

    raw = httpx.Response(200, json=message, request=httpx.Request("POST", "http://batch.invalid/v1/messages"))
    params = dict(request.parse_params or {})
    return AnthropicConfig().transform_response(
        model=request.body.get("model", request.model), raw_response=raw, model_response=litellm.ModelResponse(),
        logging_obj=_NoLogging(), request_data=request.body, messages=[], optional_params=params, litellm_params={},
        encoding=None, json_mode=bool(params.get("json_mode")))


def cache_entry(request: PendingRequest, body: dict[str, Any], batch_id: str) -> dict[str, Any]:
    """The call-cache entry of a successful line: reply text, tokens, first-token log-probabilities (when asked
    for), the batch price, and the batch id. Raises ValueError for a body that is not a reply."""
    try:
        response = openai_response(body) if request.provider == "openai" else anthropic_response(body, request)
        raw = response.choices[0].message.content
    except Exception as err:  # noqa: BLE001 - any malformed body
        raise ValueError(f"unreadable batch reply: {type(err).__name__}: {str(err)[:200]}") from None
    usage = getattr(response, "usage", None)
    input_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    output_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    entry: dict[str, Any] = {
        "raw_output": raw, "input_tokens": input_tokens, "output_tokens": output_tokens,
        "cost_usd": batch_price(request.price_settings(), input_tokens, output_tokens), "model": request.model,
        "latency_s": None, "batch_id": batch_id,
    }
    if request.body.get("logprobs"):
        top = first_token_logprobs(response)
        if top is not None:
            entry["logprobs"] = top
    return entry
