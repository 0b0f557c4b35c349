"""The OpenAI Batch API through the official ``openai`` SDK.

Submitting uploads the requests as a JSONL file (``files.create(purpose="batch")``, one line
``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}`` per request) and creates the batch on
it (``batches.create``, 24 h window); polling reads ``batches.retrieve`` (validating -> in_progress ->
finalizing -> completed, or failed / expired / cancelled); an ended batch's lines come from its output file
(replies) and its error file (failed lines; ``batch_expired`` for lines the window ran out on).
"""

from __future__ import annotations

import json
from typing import Any

from groundjudge.llm.batch.replies import BatchStatus, LineOutcome
from groundjudge.llm.batch.requests import PendingRequest

ENDPOINT = "/v1/chat/completions"
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
"""States in which an OpenAI batch does no more work."""


def _status(batch: Any) -> BatchStatus:
    counts = batch.request_counts
    return BatchStatus(batch_id=batch.id, state=batch.status, finished=batch.status in ENDED,
                       completed=getattr(counts, "completed", 0) or 0, failed=getattr(counts, "failed", 0) or 0,
                       total=getattr(counts, "total", 0) or 0)


def _error_message(line: dict[str, Any]) -> tuple[str | None, str]:
    """(error code, message) of a failed line: its ``error`` object, or the error body of a non-200 response."""
    error = line.get("error") or {}
    response = line.get("response") or {}
    if not error and isinstance(response.get("body"), dict):
        error = response["body"].get("error") or {}
    status = response.get("status_code")
    message = str(error.get("message") or "no reply")
    return error.get("code"), (f"HTTP {status}: {message}" if status else message)


def read_line(line: dict[str, Any]) -> LineOutcome:
    """One line of an output or error file as a LineOutcome."""
    key = str(line.get("custom_id"))
    response = line.get("response") or {}
    if not line.get("error") and response.get("status_code") == 200 and isinstance(response.get("body"), dict):
        return LineOutcome(key=key, body=response["body"])
    code, message = _error_message(line)
    return LineOutcome(key=key, reason="batch_expired" if code == "batch_expired" else "batch_failed",
                       message=message)


class OpenAIBatches:
    """Batches of chat completions at one OpenAI endpoint (``api_base``; None: api.openai.com)."""

    provider = "openai"

    def __init__(self, api_base: str | None, api_key: str, timeout: float = 120.0):
        import openai

        self.client = openai.AsyncOpenAI(api_key=api_key, base_url=api_base or None, timeout=timeout, max_retries=3)

    async def submit(self, requests: list[PendingRequest], label: str) -> BatchStatus:
        """Upload the requests and create the batch; its first status."""
        data = "".join(json.dumps({"custom_id": r.key, "method": "POST", "url": ENDPOINT, "body": r.body}) + "\n"
                       for r in requests).encode("utf-8")
        upload = await self.client.files.create(file=(f"{label}.jsonl", data, "application/jsonl"), purpose="batch")
        batch = await self.client.batches.create(input_file_id=upload.id, endpoint=ENDPOINT, completion_window="24h",
                                                 metadata={"groundjudge": label})
        return _status(batch)

    async def status(self, batch_id: str) -> BatchStatus:
        """The batch's state and counts now."""
        return _status(await self.client.batches.retrieve(batch_id))

    async def outcomes(self, batch_id: str) -> tuple[list[LineOutcome], str]:
        """The lines of an ended batch (output file, then error file) and, for a batch that failed as a whole, why."""
        batch = await self.client.batches.retrieve(batch_id)
        lines: list[LineOutcome] = []
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            content = await self.client.files.content(file_id)
            for text in content.text.splitlines():
                if text.strip():
                    lines.append(read_line(json.loads(text)))
        errors = getattr(getattr(batch, "errors", None), "data", None) or []
        detail = "; ".join(str(getattr(e, "message", "") or getattr(e, "code", "")) for e in errors)
        return lines, (f"the batch {batch.status}: {detail}" if detail else f"the batch ended {batch.status}")

    async def close(self) -> None:
        """Close the HTTP client."""
        await self.client.close()
