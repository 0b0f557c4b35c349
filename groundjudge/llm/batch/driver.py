"""The batch driver: submit a round's pending requests, poll the batches, put their replies in the call cache.

At the end of a round the driver takes the session's pending requests (each once: they are keyed by cache key),
groups them by provider, model, endpoint, key variable and prices, keeps each group's requests in the run folder
(``batches/``), creates one batch per group and records it in ``batches.jsonl``. It then polls every open batch
every ``poll_s`` seconds (showing its state and line counts) until all have ended, or stops with
:class:`BatchesOpen` once ``max_wait_s`` have passed (a resumed run polls them again; their requests are never
submitted twice). An ended batch's replies are read as the online path reads replies and stored in the cache
under their requests' keys, priced at the batch price; lines without a reply are kept as failures (retried online,
or the answer abstains, as the judge's ``batch_failures`` says).
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groundjudge.llm.batch.anthropic_batch import AnthropicBatches
from groundjudge.llm.batch.ledger import BatchLedger, Completed, StateChanged, Submitted
from groundjudge.llm.batch.openai_batch import OpenAIBatches
from groundjudge.llm.batch.replies import BatchStatus, LineOutcome, cache_entry
from groundjudge.llm.batch.requests import BatchFailure, BatchSession, PendingRequest
from groundjudge.llm.cache import CallCache
from groundjudge.llm.cost import Budget
from groundjudge.llm.errors import redact

DEFAULT_POLL_S = 30.0
"""Seconds between two polls of the open batches."""

DEFAULT_MAX_WAIT_S = 25 * 3600.0
"""How long a run waits for its batches before it stops (resumable): the providers' 24-hour window and a margin."""

KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
"""The environment variable each provider's key is read from when the judge names none (as litellm does)."""


class BatchError(RuntimeError):
    """A batch could not be submitted or read (the run stops; what was written is kept)."""


class BatchesOpen(RuntimeError):
    """The run stopped waiting for batches that are still open at the provider (a resumed run polls them)."""

    def __init__(self, batch_ids: list[str], waited_s: float):
        super().__init__(f"{len(batch_ids)} batch(es) still open after {waited_s:.0f} s: {', '.join(batch_ids)}")
        self.batch_ids = batch_ids


def api_key(provider: str, api_key_env: str | None, api_base: str | None) -> str:
    """The key a batch client sends: the judge's ``api_key_env``, else the provider's usual variable; a local
    endpoint without one gets a placeholder (as the online path does)."""
    name = api_key_env or KEY_VARIABLES[provider]
    value = os.environ.get(name)
    if value:
        return value
    if api_base:
        return "no-key-needed"
    raise BatchError(f"{name} is not set: the {provider} batch API needs a key")


@dataclass
class BatchDriver:
    """Submits, polls and reads back the provider batches of one run (see the module docstring)."""

    run_dir: Path
    session: BatchSession
    cache: CallCache
    budget: Budget = field(default_factory=Budget)
    poll_s: float = DEFAULT_POLL_S
    max_wait_s: float = DEFAULT_MAX_WAIT_S
    progress: Any = None
    """A rich Progress to show each batch's state on (None: quiet)."""
    ledger: BatchLedger = field(init=False)
    _clients: dict = field(default_factory=dict, init=False, repr=False)
    _bars: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.run_dir = Path(self.run_dir)
        self.ledger = BatchLedger(self.run_dir)

    def restore(self, counted: set[str]) -> None:
        """After a restart: the failed lines of completed batches, and as fresh the replies no written record has
        counted yet (``counted``: cache keys of the calls the records already charge); a failed line is fresh as
        its online retry (charged only if it was made: it is then in the cache)."""
        submitted = self.ledger.submitted()
        for done in self.ledger.completed().values():
            self.session.failed.update(done.failed)
            if done.batch_id not in submitted:
                continue
            for request in self.ledger.read_requests(submitted[done.batch_id]):
                if request.key not in counted:
                    self.session.fresh.setdefault(request.key, "" if request.key in done.failed else done.batch_id)

    def next_round(self) -> int:
        """The number of the next round (continuing a resumed run's)."""
        return self.ledger.last_round() + 1

    async def resume(self) -> None:
        """Poll the batches a stopped run left open until they end, and read their replies."""
        still_open = self.ledger.open_batches()
        if still_open:
            await self.wait(still_open)

    async def flush(self, round_no: int) -> int:
        """Submit the pending requests (one batch per group), wait for the batches and read them back; returns
        the number of requests submitted."""
        requests = self.session.take_pending()
        groups: dict[tuple, list[PendingRequest]] = {}
        for request in requests:
            groups.setdefault(request.group(), []).append(request)
        submitted = [await self.submit(group, round_no) for group in groups.values()]
        if submitted:
            await self.wait(submitted)
        return len(requests)

    def _client(self, provider: str, api_base: str | None, api_key_env: str | None) -> Any:
        key = (provider, api_base, api_key_env)
        if key not in self._clients:
            cls = OpenAIBatches if provider == "openai" else AnthropicBatches
            self._clients[key] = cls(api_base, api_key(provider, api_key_env, api_base))
        return self._clients[key]

    async def submit(self, requests: list[PendingRequest], round_no: int) -> Submitted:
        """Keep the requests in the run folder, create their batch, record it in the ledger."""
        first = requests[0]
        label = f"round{round_no}-{first.provider}-{uuid.uuid4().hex[:8]}"
        requests_file = self.ledger.write_requests(label, requests)
        client = self._client(first.provider, first.api_base, first.api_key_env)
        try:
            status = await client.submit(requests, label)
        except Exception as err:  # noqa: BLE001 - any SDK or HTTP failure stops the run, redacted
            raise BatchError(f"submitting {len(requests)} request(s) for {first.model} to the {first.provider} "
                             f"batch API failed: {redact(f'{type(err).__name__}: {err}')[:500]}") from None
        entry = Submitted(batch_id=status.batch_id, provider=first.provider, model=first.model,
                          api_base=first.api_base, api_key_env=first.api_key_env, requests_file=requests_file,
                          n_requests=len(requests), round=round_no, state=status.state)
        self.ledger.append(entry)
        self._show(entry, status)
        return entry

    async def _status(self, entry: Submitted) -> BatchStatus:
        client = self._client(entry.provider, entry.api_base, entry.api_key_env)
        try:
            return await client.status(entry.batch_id)
        except Exception as err:  # noqa: BLE001 - the batch stays open; a resumed run polls it again
            raise BatchError(f"polling batch {entry.batch_id} failed: "
                             f"{redact(f'{type(err).__name__}: {err}')[:500]}") from None

    async def wait(self, entries: list[Submitted]) -> None:
        """Poll the batches until every one has ended and been read back; :class:`BatchesOpen` after
        ``max_wait_s``."""
        start = time.monotonic()
        still_open = {e.batch_id: e for e in entries}
        last = {bid: self.ledger.last_state(bid) for bid in still_open}
        while True:
            for bid, entry in list(still_open.items()):
                status = await self._status(entry)
                self._show(entry, status)
                if status.state != last.get(bid):
                    self.ledger.append(StateChanged(batch_id=bid, state=status.state, completed=status.completed,
                                                    failed=status.failed, total=status.total))
                    last[bid] = status.state
                if status.finished:
                    await self.read_back(entry, status)
                    del still_open[bid]
            if not still_open:
                return
            waited = time.monotonic() - start
            if waited >= self.max_wait_s:
                raise BatchesOpen(sorted(still_open), waited)
            await asyncio.sleep(max(0.0, min(self.poll_s, self.max_wait_s - waited)))

    async def read_back(self, entry: Submitted, status: BatchStatus) -> Completed:
        """Store an ended batch's replies in the cache (batch price, batch id) and keep its failed lines."""
        client = self._client(entry.provider, entry.api_base, entry.api_key_env)
        try:
            lines, detail = await client.outcomes(entry.batch_id)
        except Exception as err:  # noqa: BLE001 - the batch stays open; a resumed run reads it again
            raise BatchError(f"reading the results of batch {entry.batch_id} failed: "
                             f"{redact(f'{type(err).__name__}: {err}')[:500]}") from None
        by_key: dict[str, LineOutcome] = {line.key: line for line in lines}
        failed: dict[str, BatchFailure] = {}
        succeeded = 0
        for request in self.ledger.read_requests(entry):
            line = by_key.get(request.key)
            if line is not None and line.body is not None:
                try:
                    reply = cache_entry(request, line.body, entry.batch_id)
                except ValueError as err:
                    line = LineOutcome(key=request.key, reason="batch_failed", message=str(err))
                else:
                    self.cache.put(request.key, reply)
                    self.budget.add(reply["cost_usd"])
                    self.session.fresh[request.key] = entry.batch_id
                    succeeded += 1
                    continue
            reason = line.reason if line is not None and line.reason else \
                ("batch_expired" if status.state == "expired" else "batch_failed")
            message = line.message if line is not None else detail
            failed[request.key] = BatchFailure(reason=reason, message=redact(message)[:500], batch_id=entry.batch_id)
        self.session.failed.update(failed)
        done = Completed(batch_id=entry.batch_id, state=status.state, succeeded=succeeded, failed=failed)
        self.ledger.append(done)
        return done

    def _show(self, entry: Submitted, status: BatchStatus) -> None:
        if self.progress is None:
            return
        text = f"{entry.batch_id} {status.state}: {status.completed} ok, {status.failed} failed"
        bar = self._bars.get(entry.batch_id)
        if bar is None:
            bar = self._bars[entry.batch_id] = self.progress.add_task(text, total=status.total or entry.n_requests)
        self.progress.update(bar, description=text, completed=status.completed + status.failed,
                             total=status.total or entry.n_requests)

    async def close(self) -> None:
        """Close the provider clients."""
        for client in self._clients.values():
            await client.close()
        self._clients.clear()
