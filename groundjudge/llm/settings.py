"""How to call one model: provider, sampling, limits and prices (never a key)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


JsonMode = Literal["auto", "schema", "object", "none"]
BatchFailures = Literal["retry", "abstain"]


@dataclass(frozen=True)
class LLMSettings:
    """How to call one model: provider, sampling, limits, prices. Holds no API key."""

    model: str
    api_base: str | None = None
    api_key_env: str | None = None
    """Name of the environment variable that holds the key (the key itself is never stored)."""
    temperature: float = 0.0
    max_tokens: int = 1024
    timeout: float = 60.0
    max_attempts: int = 5
    json_mode: JsonMode = "auto"
    concurrency: int | Literal["auto"] = "auto"
    """Calls in flight to this model at once: "auto" is 8 for hosted providers and, for an api_base on a
    local server, the slots the server reports at /props (1 when it does not say); a number is used as given."""
    rpm: int | None = None
    tpm: int | None = None
    """Input tokens per minute (counted with litellm's tokenizer before each call)."""
    context_window: int | None = None
    """Input tokens the model accepts (None: a local server's /props n_ctx, else litellm's model table, else
    unchecked). A longer prompt is never sent: the answer abstains with ``context_too_long``."""
    input_cost_per_mtok: float | None = None
    output_cost_per_mtok: float | None = None
    batch: bool = False
    """Send this judge's calls through the provider's batch API (OpenAI Batch API, Anthropic Message Batches; half
    price, replies within 24 h) instead of one by one: a run then judges in rounds, one batch per round and model
    (see ``groundjudge.llm.batch``). Outside a run (a judge called directly) calls go online."""
    batch_failures: BatchFailures = "retry"
    """A batch line that failed or expired: ``retry`` sends it online (with the usual retries); ``abstain`` makes
    the answer abstain with reason ``batch_failed`` / ``batch_expired``."""

    def sampling(self) -> dict[str, Any]:
        """The settings that change what the model answers (part of the cache key)."""
        return {"temperature": self.temperature, "max_tokens": self.max_tokens}
