"""Anthropic Message Batches through the official ``anthropic`` SDK.

Submitting sends every request as ``{"custom_id", "params"}`` (``messages.batches.create``); polling reads
``messages.batches.retrieve`` (in_progress -> ended, or canceling); an ended batch's results
(``messages.batches.results``, JSONL) say per line ``succeeded`` (with the message), ``errored``, ``canceled`` or
``expired``.
"""

from __future__ import annotations

from typing import Any

from groundjudge.llm.batch.replies import BatchStatus, LineOutcome
from groundjudge.llm.batch.requests import PendingRequest


def sdk_base(api_base: str | None) -> str | None:
    """The SDK's base URL for a litellm ``api_base`` (which may end in ``/v1`` or ``/v1/messages``)."""
    if not api_base:
        return None
    base = api_base.rstrip("/")
    for suffix in ("/v1/messages", "/v1"):
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


def _status(batch: Any) -> BatchStatus:
    counts = batch.request_counts
    failed = counts.errored + counts.canceled + counts.expired
    return BatchStatus(batch_id=batch.id, state=batch.processing_status, finished=batch.processing_status == "ended",
                       completed=counts.succeeded, failed=failed, total=counts.processing + counts.succeeded + failed)


def read_result(item: Any) -> LineOutcome:
    """One result line (the SDK's MessageBatchIndividualResponse) as a LineOutcome."""
    result = item.result
    if result.type == "succeeded":
        return LineOutcome(key=item.custom_id, body=result.message.to_dict())
    if result.type == "errored":
        error = getattr(result.error, "error", None)
        message = f"{getattr(error, 'type', 'error')}: {getattr(error, 'message', '')}"
        return LineOutcome(key=item.custom_id, reason="batch_failed", message=message)
    if result.type == "expired":
        return LineOutcome(key=item.custom_id, reason="batch_expired", message="the batch expired before this line")
    return LineOutcome(key=item.custom_id, reason="batch_failed", message=f"line {result.type}")


class AnthropicBatches:
    """Message batches at one Anthropic endpoint (``api_base``; None: api.anthropic.com)."""

    provider = "anthropic"

    def __init__(self, api_base: str | None, api_key: str, timeout: float = 120.0):
        import anthropic

        self.client = anthropic.AsyncAnthropic(api_key=api_key, base_url=sdk_base(api_base), timeout=timeout,
                                               max_retries=3)

    async def submit(self, requests: list[PendingRequest], label: str) -> BatchStatus:
        """Create the batch; its first status."""
        batch = await self.client.messages.batches.create(
            requests=[{"custom_id": r.key, "params": r.body} for r in requests])  # type: ignore[misc]
        return _status(batch)

    async def status(self, batch_id: str) -> BatchStatus:
        """The batch's state and counts now."""
        return _status(await self.client.messages.batches.retrieve(batch_id))

    async def outcomes(self, batch_id: str) -> tuple[list[LineOutcome], str]:
        """The result of every line of an ended batch."""
        results = await self.client.messages.batches.results(batch_id)
        return [read_result(item) async for item in results], "the batch ended without this line"

    async def close(self) -> None:
        """Close the HTTP client."""
        await self.client.close()
