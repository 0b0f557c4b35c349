"""--dry-run: the tokens and dollars a run would spend, estimated before any call is made."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import litellm

from groundjudge.llm import LLMSettings, price
from groundjudge.llm.templates import PromptLibrary
from groundjudge.types import Example


def _inner_judges(judge: Any) -> list[Any]:
    """The LLM judges inside a judge (itself, or a composite's parts; a cascade counted as escalating all)."""
    parts = [getattr(judge, attr) for attr in ("_primary", "_llm") if hasattr(judge, attr)]
    return parts or [judge]


def estimate_run(judge: Any, examples: Sequence[Example], prompts: PromptLibrary) -> dict[str, Any]:
    """Estimated calls, input/output tokens and $ for one judge over the examples (an upper bound for
    cascades and fallbacks, which are counted as if every example reached the LLM)."""
    calls = tokens_in = tokens_out = 0
    cost = 0.0
    seen_prompts: set[tuple] = set()
    for inner in _inner_judges(judge):
        if not hasattr(inner, "expected_calls"):
            continue
        settings: LLMSettings = inner.llm_settings()
        for example in examples:
            for prompt, variables, out_tokens in inner.expected_calls(example):
                messages = list(prompts.render(prompt, variables).messages)
                key = (prompt, repr(messages)) if prompt == "facts_extract" else None
                if key and key in seen_prompts:
                    continue   # facts are extracted once per distinct context
                if key:
                    seen_prompts.add(key)
                n_in = litellm.token_counter(model=settings.model, messages=messages)
                calls += 1
                tokens_in += n_in
                tokens_out += out_tokens
                cost += price(settings, n_in, out_tokens)
    return {"llm_calls": calls, "tokens": {"input": tokens_in, "output": tokens_out}, "cost_usd": cost}

