"""``batches.jsonl``: the run folder's append-only ledger of its provider batches.

One line per event: a batch ``submitted`` (its provider id, model, endpoint, the name of the key's environment
variable -- never a key -- and the file in ``batches/`` that holds the requests it carries), each ``state`` change
seen while polling, and ``completed`` once its replies are in the call cache (with the lines that failed). A batch
submitted and not completed is open: a resumed run polls it instead of submitting its requests again.
Each line is written with one ``write`` to a file opened for appending, so a killed run leaves at most a torn last
line, which the next reader cuts.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from groundjudge.llm.batch.requests import BatchFailure, PendingRequest, Provider

LEDGER_NAME = "batches.jsonl"
REQUESTS_DIR = "batches"
"""Folder of the run that holds each batch's requests (one JSON line per request, as submitted)."""


def now() -> str:
    """The time of an event (UTC, ISO 8601, seconds)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Submitted(BaseModel):
    """A batch was created at the provider."""

    event: Literal["submitted"] = "submitted"
    at: str = Field(default_factory=now)
    batch_id: str
    provider: Provider
    model: str
    api_base: str | None = None
    api_key_env: str | None = Field(default=None, description="Name of the key's environment variable (no key).")
    requests_file: str = Field(description="The requests it carries, relative to the run folder.")
    n_requests: int
    round: int
    state: str


class StateChanged(BaseModel):
    """Polling saw the batch in a new state."""

    event: Literal["state"] = "state"
    at: str = Field(default_factory=now)
    batch_id: str
    state: str
    completed: int = 0
    failed: int = 0
    total: int = 0


class Completed(BaseModel):
    """The batch ended and its replies are in the call cache; ``failed`` lines (by cache key) brought none."""

    event: Literal["completed"] = "completed"
    at: str = Field(default_factory=now)
    batch_id: str
    state: str
    succeeded: int
    failed: dict[str, BatchFailure] = Field(default_factory=dict)


LedgerLine = Annotated[Submitted | StateChanged | Completed, Field(discriminator="event")]
_LINE = TypeAdapter(LedgerLine)


class BatchLedger:
    """The ledger of one run folder (``batches.jsonl``) and its request files (``batches/``)."""

    def __init__(self, run_dir: str | Path):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LEDGER_NAME

    def lines(self) -> list[Submitted | StateChanged | Completed]:
        """Every event so far, in order (a torn last line is cut)."""
        if not self.path.exists():
            return []
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):   # a write cut short by a kill: drop the partial line
            keep = data.rfind(b"\n") + 1
            with open(self.path, "rb+") as handle:
                handle.truncate(keep)
            data = data[:keep]
        events = []
        for number, line in enumerate(data.decode("utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                events.append(_LINE.validate_json(line))
            except ValidationError as err:
                raise ValueError(f"{self.path}:{number}: not a ledger line: {str(err).splitlines()[0]}") from err
        return events

    def append(self, line: Submitted | StateChanged | Completed) -> None:
        """Append one event (one write call: never interleaved, never half there unless the machine dies)."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        data = (line.model_dump_json() + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def submitted(self) -> dict[str, Submitted]:
        """Every batch submitted, by id."""
        return {e.batch_id: e for e in self.lines() if isinstance(e, Submitted)}

    def completed(self) -> dict[str, Completed]:
        """Every batch whose replies are in the cache, by id."""
        return {e.batch_id: e for e in self.lines() if isinstance(e, Completed)}

    def open_batches(self) -> list[Submitted]:
        """Batches submitted and not completed (a resumed run polls them)."""
        done = self.completed()
        return [s for s in self.submitted().values() if s.batch_id not in done]

    def last_state(self, batch_id: str) -> str | None:
        """The last state recorded for a batch."""
        state = None
        for event in self.lines():
            if event.batch_id == batch_id and isinstance(event, (Submitted, StateChanged, Completed)):
                state = event.state
        return state

    def last_round(self) -> int:
        """The highest round that submitted a batch (0: none)."""
        return max((s.round for s in self.submitted().values()), default=0)

    def write_requests(self, name: str, requests: list[PendingRequest]) -> str:
        """Keep the requests of a batch about to be submitted; returns their file, relative to the run folder."""
        relative = f"{REQUESTS_DIR}/{name}.jsonl"
        path = self.run_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text("".join(r.model_dump_json() + "\n" for r in requests), encoding="utf-8")
        tmp.replace(path)
        return relative

    def read_requests(self, submitted: Submitted) -> list[PendingRequest]:
        """The requests a submitted batch carries."""
        text = (self.run_dir / submitted.requests_file).read_text(encoding="utf-8")
        return [PendingRequest.model_validate(json.loads(line)) for line in text.splitlines() if line.strip()]
