"""The scripted server's reply and error bodies, as each provider writes them (OpenAI chat completions, Anthropic
messages): for online calls (:mod:`~groundjudge.testing.routes`) and the lines of a batch
(:mod:`~groundjudge.testing.batch_routes`) alike."""

from __future__ import annotations

import time
import uuid

from groundjudge.testing.faults import MODEL_ID, Reply, Request

_OPENAI_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                       404: "not_found_error", 408: "timeout", 413: "invalid_request_error",
                       422: "invalid_request_error", 429: "rate_limit_exceeded", 503: "service_unavailable"}

_ANTHROPIC_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                          404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                          529: "overloaded_error"}


def _rough_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def openai_error(status: int, message: str) -> dict:
    """OpenAI's error body for an HTTP status."""
    kind = _OPENAI_ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": kind if status == 429 else str(status)}}


def anthropic_error(status: int, message: str) -> dict:
    """Anthropic's error body for an HTTP status."""
    kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def error_body(api: str, status: int, message: str) -> dict:
    """The error body of ``api`` (``openai`` or ``anthropic``) for an HTTP status."""
    return openai_error(status, message) if api == "openai" else anthropic_error(status, message)


def reply_body(request: Request, reply: Reply) -> tuple[int, dict]:
    """The status and JSON body for a reply (fault aside)."""
    api, body = request.api, request.body
    if reply.status != 200:
        message = reply.content if isinstance(reply.content, str) else f"scripted error {reply.status}"
        return reply.status, error_body(api, reply.status, message)
    model = body.get("model") or MODEL_ID
    contents = reply.content if isinstance(reply.content, list) else None
    prompt_tokens = reply.prompt_tokens if reply.prompt_tokens is not None else _rough_tokens(request.text)
    if api == "openai":
        if contents is None:
            n = body.get("n") or 1
            contents = [reply.content] * (n if isinstance(n, int) and n > 0 else 1)
        completion_tokens = (reply.completion_tokens if reply.completion_tokens is not None
                             else sum(_rough_tokens(c or "") for c in contents))
        return 200, {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "system_fingerprint": None,
            "choices": [{"index": i, "message": {"role": "assistant", "content": c},
                         "logprobs": _logprobs(body, reply, c), "finish_reason": "stop"}
                        for i, c in enumerate(contents)],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }
    if contents is not None:
        return 500, anthropic_error(500, "a list of contents needs an OpenAI request with n > 1")
    text = reply.content or ""
    completion_tokens = reply.completion_tokens if reply.completion_tokens is not None else _rough_tokens(text)
    return 200, {
        "id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": prompt_tokens, "output_tokens": completion_tokens},
    }


def _logprobs(body: dict, reply: Reply, content: str | None) -> dict | None:
    """OpenAI's ``logprobs`` object for the first generated token, when the request asked for it."""
    if not body.get("logprobs") or not content:
        return None
    top = reply.top_logprobs or {content.split()[0] if content.split() else content: 0.0}
    ranked = sorted(top.items(), key=lambda item: -item[1])[:max(int(body.get("top_logprobs") or 0), 1)]
    token, logprob = ranked[0]
    entry = lambda t, lp: {"token": t, "logprob": lp, "bytes": list(t.encode())}  # noqa: E731
    return {"content": [{**entry(token, logprob), "top_logprobs": [entry(t, lp) for t, lp in ranked]}],
            "refusal": None}
