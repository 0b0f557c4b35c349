"""How many input tokens a model accepts, and the check that no prompt is cut to fit it without a word.

The window is, in order: the judge's ``context_window`` setting; for a local server, the ``n_ctx`` it reports at
``/props`` (llama.cpp); litellm's model table (``max_input_tokens``). A prompt counted (with litellm's tokenizer
for the model) above the window is not sent: the call fails with reason ``context_too_long``, the answer
abstains saying so (or falls back), and ``evidence=chunks`` is the way to judge it. Some servers (Ollama) would
otherwise truncate the prompt silently and judge what is left.
"""

from __future__ import annotations

import asyncio


from groundjudge.llm.litellm_module import litellm_module
from groundjudge.llm.concurrency import is_local, probe_server  # noqa: E402
from groundjudge.llm.errors import ProviderError  # noqa: E402
from groundjudge.llm.settings import LLMSettings  # noqa: E402


def model_window_sync(settings: LLMSettings) -> int | None:
    """The model's input window in tokens, or None when nobody says (then nothing is checked)."""
    litellm = litellm_module()
    if settings.context_window:
        return int(settings.context_window)
    if settings.api_base and is_local(settings.api_base):
        props = probe_server(settings.api_base)
        if props is not None and props.n_ctx:
            return int(props.n_ctx)
    try:
        info = litellm.get_model_info(settings.model)
    except Exception:  # noqa: BLE001 - a model litellm does not know
        return None
    window = info.get("max_input_tokens") or info.get("max_tokens")
    return int(window) if window else None


async def model_window(settings: LLMSettings) -> int | None:
    """:func:`model_window_sync` without blocking the event loop during a server probe."""
    return await asyncio.to_thread(model_window_sync, settings)


def prompt_tokens(model: str, messages: list[dict]) -> int:
    """The prompt's tokens as litellm counts them for the model (its tokenizer, else tiktoken's)."""
    litellm = litellm_module()
    return int(litellm.token_counter(model=model, messages=messages))


def check_fits(settings: LLMSettings, messages: list[dict], window: int | None, template: str) -> None:
    """Raise ProviderError('context_too_long') when the prompt is longer than the model's window."""
    if not window:
        return
    tokens = prompt_tokens(settings.model, messages)
    if tokens > window:
        raise ProviderError("context_too_long", f"the {template!r} prompt has about {tokens} tokens and "
                                                f"{settings.model} takes {window}: not sent (no silent truncation); "
                                                f"judge long documents with evidence=chunks")
