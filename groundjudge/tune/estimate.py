"""What judging costs before it is done: the requests a judge would send for each answer, rendered but not sent.

A request is known by its model settings and messages; one already sent (or planned) is answered by the call
cache, so a tune counts each distinct request once (:class:`Ledger`). The claims judge's later stages depend on
its first replies: their requests are estimates, as in ``groundjudge run --dry-run``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from groundjudge.types import Example


@dataclass(frozen=True)
class Request:
    """One request a judge would send."""

    key: str
    settings: Any
    messages: tuple[dict, ...]
    output_tokens: int


def _llm_parts(judge: Any) -> list[Any]:
    parts = [getattr(judge, attr) for attr in ("_primary", "_llm") if hasattr(judge, attr)]
    return [p for p in (parts or [judge]) if hasattr(p, "expected_calls")]


def requests_for(judge: Any, example: Example, prompts: Any) -> list[Request]:
    """The requests judging ``example`` would send (none for a local judge)."""
    found = []
    for part in _llm_parts(judge):
        settings = part.llm_settings()
        for prompt, variables, out_tokens in part.expected_calls(example):
            messages = getattr(part, "library", prompts).render(prompt, variables).messages
            payload = json.dumps([repr(settings), list(messages)], sort_keys=True, default=str)
            found.append(Request(hashlib.sha256(payload.encode()).hexdigest(), settings, tuple(messages), out_tokens))
    return found


@dataclass
class Ledger:
    """Requests already sent or planned: a request is paid for once."""

    seen: set[str] = field(default_factory=set)

    def new(self, requests: Iterable[Request], commit: bool = False) -> list[Request]:
        """The requests not seen yet (each once); ``commit`` marks them seen."""
        fresh: dict[str, Request] = {}
        for request in requests:
            if request.key not in self.seen and request.key not in fresh:
                fresh[request.key] = request
        if commit:
            self.seen.update(fresh)
        return list(fresh.values())


def dollars(requests: Sequence[Request]) -> tuple[int, int, float]:
    """(input tokens, output tokens, $) of requests: litellm's token counter and price table (local: $0)."""
    from groundjudge.llm.cost import price
    from groundjudge.llm.litellm_module import litellm_module

    litellm = litellm_module()
    tokens_in = tokens_out = 0
    cost = 0.0
    for request in requests:
        n_in = litellm.token_counter(model=request.settings.model, messages=list(request.messages))
        tokens_in += n_in
        tokens_out += request.output_tokens
        cost += price(request.settings, n_in, request.output_tokens)
    return tokens_in, tokens_out, cost
