"""--dry-run: the tokens and dollars a run would spend, estimated before any call is made."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


from groundjudge.llm.litellm_module import litellm_module
from groundjudge.llm import LLMSettings, price
from groundjudge.llm.batch import provider_of
from groundjudge.llm.cost import BATCH_DISCOUNT
from groundjudge.llm.templates import PromptLibrary
from groundjudge.types import Example


def _inner_judges(judge: Any) -> list[Any]:
    """The LLM judges inside a judge (itself, or a composite's parts; a cascade counted as escalating all)."""
    parts = [getattr(judge, attr) for attr in ("_primary", "_llm") if hasattr(judge, attr)]
    return parts or [judge]


def estimate_run(judge: Any, examples: Sequence[Example], prompts: PromptLibrary,
                 seen: set[tuple] | None = None) -> dict[str, Any]:
    """Estimated calls, input/output tokens and $ for one judge over the examples (an upper bound for
    cascades and fallbacks, which are counted as if every example reached the LLM), and the $ with ``--batch``
    (``cost_usd_batch``: the provider batch APIs' half price for OpenAI and Anthropic models, others as online).

    A request rendered identically before (same model settings and messages: facts of a shared context, or the
    extraction of another judge that differs only in its verification prompt) is counted once, as the call
    cache answers it; pass one ``seen`` set to every judge of a run to count across judges."""
    litellm = litellm_module()
    calls = tokens_in = tokens_out = 0
    cost = batch_cost = 0.0
    seen_prompts: set[tuple] = set() if seen is None else seen
    for inner in _inner_judges(judge):
        if not hasattr(inner, "expected_calls"):
            continue
        settings: LLMSettings = inner.llm_settings()
        discount = BATCH_DISCOUNT if provider_of(settings.model) else 1.0
        for example in examples:
            for prompt, variables, out_tokens in inner.expected_calls(example):
                messages = list(getattr(inner, "library", prompts).render(prompt, variables).messages)
                key = (repr(settings), repr(messages))
                if key in seen_prompts:
                    continue   # the same request again: answered by the cache
                seen_prompts.add(key)
                n_in = litellm.token_counter(model=settings.model, messages=messages)
                calls += 1
                tokens_in += n_in
                tokens_out += out_tokens
                online = price(settings, n_in, out_tokens)
                cost += online
                batch_cost += online * discount
    return {"llm_calls": calls, "tokens": {"input": tokens_in, "output": tokens_out}, "cost_usd": cost,
            "cost_usd_batch": batch_cost}

