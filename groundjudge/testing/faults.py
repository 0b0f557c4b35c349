"""The scripted server's plans: a ``Reply`` (content, status, delay, wire fault) answers a ``Request``;
the faults it can play (429 with Retry-After, 500, dropped or truncated connections, malformed JSON)."""

from __future__ import annotations

from dataclasses import dataclass, field

MODEL_ID = "scripted-model"
FAULTS = ("429", "500", "drop", "truncate", "malformed")
MALFORMED = '{"label": '


def _content_texts(content) -> list[str]:
    """The text pieces of a message content: a string, or a list of parts/blocks with "text"."""
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                out.append(part["text"])
        return out
    return [str(content)]


@dataclass
class Reply:
    """What the server answers to one request.

    ``content`` is the assistant text; for an OpenAI request with ``n > 1`` a list gives one choice per item (a
    string is repeated n times). A non-200 ``status`` makes an error reply in the provider's error JSON shape
    (``content``, if set, is its message). ``fault`` breaks the wire: "drop" closes the connection without a reply,
    "truncate" sends the headers and half the body (Content-Length announces all of it), then closes.
    Token counts default to ``len(text) // 4`` of the request messages and of the content. An OpenAI request with
    ``logprobs`` gets the first token's top alternatives: ``top_logprobs`` (token -> logprob) when given, else the
    content's first word with log-probability 0; Anthropic replies never carry any (as the real API).
    """

    content: str | list[str] | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    fault: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    top_logprobs: dict[str, float] | None = None


@dataclass
class Request:
    """One request the server received: path, headers (names lower-cased), JSON body, api "openai"|"anthropic";
    ``batch_id`` for a line of a provider batch (answered by the same responder as online calls)."""

    path: str
    headers: dict[str, str]
    body: dict
    api: str
    batch_id: str | None = None

    @property
    def text(self) -> str:
        """All message contents (system prompt included) joined by newlines, for matching in responders."""
        parts: list[str] = []
        if self.api == "anthropic" and "system" in self.body:
            parts.extend(_content_texts(self.body["system"]))
        for message in self.body.get("messages") or []:
            if isinstance(message, dict):
                parts.extend(_content_texts(message.get("content")))
        return "\n".join(parts)


def _ran_out() -> Reply:
    return Reply(status=500, content="the scripted LLM server ran out of script: no reply pushed and no responder")
