"""What calls cost: litellm's price table or the settings' override, and the run's spending cap."""

from __future__ import annotations

import threading
from functools import lru_cache


from groundjudge.llm.errors import ProviderError
from groundjudge.llm.litellm_module import litellm_module
from groundjudge.llm.settings import LLMSettings


class Budget:
    """A spending cap in USD over all calls of a run; new calls stop once it is reached."""

    def __init__(self, max_cost: float | None = None):
        self.max_cost = max_cost
        self.spent = 0.0
        self._lock = threading.Lock()

    def check(self) -> None:
        """Raise ProviderError('budget') when the cap is reached."""
        if self.max_cost is not None and self.spent >= self.max_cost:
            raise ProviderError("budget", f"budget of ${self.max_cost:.4f} spent (${self.spent:.4f})")

    async def check_async(self) -> None:
        """:meth:`check`, awaitable (what the LLM client calls): a cluster-wide budget
        (:class:`~groundjudge.llm.shared_limits.SharedBudget`) asks its ledger without blocking the event loop."""
        self.check()

    def add(self, cost: float) -> None:
        """Count money spent."""
        with self._lock:
            self.spent += cost


@lru_cache(maxsize=256)
def _has_price(model: str) -> bool:
    try:
        litellm_module().cost_per_token(model=model, prompt_tokens=1, completion_tokens=1)
        return True
    except Exception:  # noqa: BLE001 - not in litellm's table
        return False


def price(settings: LLMSettings, input_tokens: int, output_tokens: int) -> float:
    """List price of that many tokens: the settings' override, else litellm's table, else 0 (local models)."""
    if settings.input_cost_per_mtok is not None or settings.output_cost_per_mtok is not None:
        return (input_tokens * (settings.input_cost_per_mtok or 0.0)
                + output_tokens * (settings.output_cost_per_mtok or 0.0)) / 1e6
    if not _has_price(settings.model):
        return 0.0
    prompt_cost, completion_cost = litellm_module().cost_per_token(model=settings.model, prompt_tokens=input_tokens,
                                                          completion_tokens=output_tokens)
    return float(prompt_cost + completion_cost)


BATCH_DISCOUNT = 0.5
"""What the provider batch APIs charge relative to online calls (OpenAI and Anthropic: half price)."""


def batch_price(settings: LLMSettings, input_tokens: int, output_tokens: int) -> float:
    """Batch price of that many tokens: :func:`price` (litellm's table or the settings' override) halved."""
    return price(settings, input_tokens, output_tokens) * BATCH_DISCOUNT
