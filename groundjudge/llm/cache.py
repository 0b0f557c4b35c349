"""The on-disk call cache, keyed by model, messages, output schema and sampling settings."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
from groundjudge.llm.settings import LLMSettings


def cache_key(settings: LLMSettings, messages: Sequence[dict], schema: dict | None, sample_index: int,
              repeat: int = 0, extra: dict | None = None) -> str:
    """Key of a call: model, messages, output schema, sampling settings (and sample index when sampling), the
    repeat (a judge's ``repeats``: each repeat of an answer is its own call, also at temperature 0) and any extra
    request parameters that change the reply (``logprobs``)."""
    payload = {"model": settings.model, "messages": list(messages), "schema": schema, **settings.sampling(),
               **(extra or {})}
    if settings.temperature > 0:
        payload["sample_index"] = sample_index
    if repeat:
        payload["repeat"] = repeat
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()


def recorded_entry(call) -> dict:
    """The cache entry an :class:`~groundjudge.types.LLMCall` stands for: what the client stores after a call and
    what a replay answers from (reply, tokens, cost, first-token log-probabilities, original latency)."""
    entry = {"raw_output": call.raw_output, "input_tokens": call.input_tokens, "output_tokens": call.output_tokens,
             "cost_usd": call.cost_usd, "model": call.model,
             "latency_s": call.source_latency_s if call.cached else call.latency_s}
    if call.logprobs is not None:
        entry["logprobs"] = call.logprobs
    return entry


class CallCache:
    """A directory of JSON files, one per call key (atomic writes; safe across processes)."""

    def __init__(self, root: str | Path | None, enabled: bool = True):
        self.root = Path(root) if root else None
        self.enabled = enabled
        self.memory: dict[str, dict] = {}

    def get(self, key: str) -> dict | None:
        """The cached entry, or None."""
        if not self.enabled:
            return None
        if key in self.memory:
            return self.memory[key]
        if self.root is None:
            return None
        path = self.root / key[:2] / f"{key}.json"
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def put(self, key: str, entry: dict) -> None:
        """Store an entry."""
        if not self.enabled:
            return
        self.memory[key] = entry
        if self.root is None:
            return
        path = self.root / key[:2] / f"{key}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(entry), encoding="utf-8")
        tmp.replace(path)
