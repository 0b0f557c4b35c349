"""The scripted server's provider batch APIs: OpenAI files + batches, Anthropic message batches.

OpenAI: ``POST /v1/files`` (multipart upload), ``GET /v1/files/{id}/content``, ``POST /v1/batches``,
``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``. Anthropic: ``POST /v1/messages/batches``,
``GET /v1/messages/batches/{id}``, ``GET /v1/messages/batches/{id}/results`` (JSONL),
``POST /v1/messages/batches/{id}/cancel``.

Each retrieve of a batch is a poll; after ``plan.polls_per_state`` polls in a state the batch moves on
(OpenAI: validating -> in_progress -> finalizing -> completed; Anthropic: in_progress -> ended). The lines are
answered when the batch finalizes, each by the same responder as online calls (pushed replies first, then the
responder; each line is recorded in ``server.requests`` with its ``batch_id``). The :class:`BatchPlan` in force
when a batch is created makes its lines fail (an error reply, or ``plan.fail(request)``) or the batch expire after
``plan.expire_after`` lines. Every
batch request is logged in ``server.batches.events`` so tests can count uploads, creates and polls.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.parser import BytesParser
from email.policy import HTTP
from typing import TYPE_CHECKING, Any, Callable

from groundjudge.testing.bodies import error_body, reply_body
from groundjudge.testing.faults import Reply, Request

if TYPE_CHECKING:
    from groundjudge.testing.routes import _Handler

OPENAI_STATES = ("validating", "in_progress", "finalizing")
ANTHROPIC_STATES = ("in_progress",)
_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass
class BatchPlan:
    """How the server plays batches: polls per state, lines that fail, and expiry."""

    polls_per_state: int = 1
    """Retrieves a batch spends in each state before the next (0: it has ended at the first poll)."""
    fail: Callable[[Request], bool] | None = None
    """Lines for which this is true fail (OpenAI: a 500 line in the error file; Anthropic: ``errored``)."""
    expire_after: int | None = None
    """None: the batch completes. A number: that many lines are answered, then the batch expires (OpenAI
    ``expired``, the rest ``batch_expired`` in the error file; Anthropic ``expired`` results)."""


@dataclass
class BatchEvent:
    """One batch-API request the server received."""

    kind: str
    """upload, create, poll, content, results or cancel."""
    api: str
    batch_id: str | None = None
    file_id: str | None = None


@dataclass
class _Batch:
    id: str
    api: str
    lines: list[tuple[str, dict]]
    headers: dict[str, str]
    host: str
    plan: BatchPlan
    """The server's plan when the batch was created (a later change of plan applies to later batches)."""
    input_file_id: str | None = None
    metadata: dict | None = None
    created_at: float = field(default_factory=time.time)
    polls: int = 0
    cancelled: bool = False
    outcomes: list[dict] | None = None
    """Per line: {"custom_id", "kind": ok|failed|expired|cancelled, "status", "payload"}."""


class BatchStore:
    """The server's uploaded files and batches, the plan they follow, and the log of batch requests."""

    def __init__(self) -> None:
        self.plan = BatchPlan()
        self.events: list[BatchEvent] = []
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, _Batch] = {}
        self._lock = threading.Lock()

    def count(self, kind: str, batch_id: str | None = None) -> int:
        """How many requests of a kind (for one batch, when given) the server received."""
        return sum(e.kind == kind and (batch_id is None or e.batch_id == batch_id) for e in self.events)

    def _log(self, kind: str, api: str, batch_id: str | None = None, file_id: str | None = None) -> None:
        with self._lock:
            self.events.append(BatchEvent(kind, api, batch_id, file_id))

    # --- state
    def state(self, batch: _Batch) -> str:
        """The batch's state now (answering its lines when it finalizes)."""
        if batch.cancelled:
            return "cancelled" if batch.api == "openai" else "ended"
        states = OPENAI_STATES if batch.api == "openai" else ANTHROPIC_STATES
        per_state = batch.plan.polls_per_state
        stage = batch.polls // per_state if per_state > 0 else len(states)
        return states[stage] if stage < len(states) else self._final(batch)

    def _final(self, batch: _Batch) -> str:
        if batch.api == "anthropic":
            return "ended"
        return "expired" if batch.plan.expire_after is not None else "completed"

    def answer(self, batch: _Batch, scripted: Any) -> list[dict]:
        """Answer every line once (lazily, when the batch finalizes) with the scripted replies."""
        if batch.outcomes is not None:
            return batch.outcomes
        path = "/v1/chat/completions" if batch.api == "openai" else "/v1/messages"
        outcomes = []
        for index, (custom_id, body) in enumerate(batch.lines):
            if batch.cancelled:
                outcomes.append({"custom_id": custom_id, "kind": "cancelled"})
                continue
            if batch.plan.expire_after is not None and index >= batch.plan.expire_after:
                outcomes.append({"custom_id": custom_id, "kind": "expired"})
                continue
            request = Request(path=path, headers=dict(batch.headers), body=body, api=batch.api, batch_id=batch.id)
            scripted._record(request)
            reply = Reply(status=500, content="line failed (plan)") if batch.plan.fail and batch.plan.fail(request) \
                else scripted._next_reply(request)
            if reply.fault in ("drop", "truncate"):
                reply = Reply(status=500, content=f"line failed ({reply.fault})")
            status, payload = reply_body(request, reply) if reply.status == 200 else \
                (reply.status, error_body(batch.api, reply.status, str(reply.content or "error")))
            outcomes.append({"custom_id": custom_id, "kind": "ok" if status == 200 else "failed", "status": status,
                             "payload": payload})
        batch.outcomes = outcomes
        return outcomes

    def counts(self, batch: _Batch) -> dict[str, int]:
        """Lines per outcome kind (all still processing before the batch finalizes)."""
        kinds = {"ok": 0, "failed": 0, "expired": 0, "cancelled": 0}
        for outcome in batch.outcomes or []:
            kinds[outcome["kind"]] += 1
        kinds["processing"] = len(batch.lines) - sum(kinds.values())
        return kinds


def _iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts, timezone.utc).isoformat().replace("+00:00", "Z")


def _openai_batch(store: BatchStore, batch: _Batch, scripted: Any) -> dict:
    state = store.state(batch)
    if state in ("finalizing", "completed", "expired", "cancelled"):
        store.answer(batch, scripted)
    counts = store.counts(batch)
    output = error = None
    if state in ("completed", "expired", "cancelled"):
        ok = [o for o in batch.outcomes or [] if o["kind"] == "ok"]
        bad = [o for o in batch.outcomes or [] if o["kind"] != "ok"]
        if ok:
            output = f"file-out-{batch.id}"
            store.files.setdefault(output, _openai_lines(ok))
        if bad:
            error = f"file-err-{batch.id}"
            store.files.setdefault(error, _openai_lines(bad))
    ended = time.time() if state in ("completed", "expired", "cancelled") else None
    return {"id": batch.id, "object": "batch", "endpoint": "/v1/chat/completions", "errors": None,
            "input_file_id": batch.input_file_id, "completion_window": "24h", "status": state,
            "output_file_id": output, "error_file_id": error, "created_at": int(batch.created_at),
            "in_progress_at": None, "expires_at": int(batch.created_at) + 86400, "finalizing_at": None,
            "completed_at": ended if state == "completed" else None, "failed_at": None,
            "expired_at": ended if state == "expired" else None, "cancelling_at": None,
            "cancelled_at": ended if state == "cancelled" else None, "metadata": batch.metadata,
            "request_counts": {"total": len(batch.lines), "completed": counts["ok"],
                               "failed": counts["failed"] + counts["expired"] + counts["cancelled"]}}


def _openai_lines(outcomes: list[dict]) -> bytes:
    rows = []
    for o in outcomes:
        row: dict[str, Any] = {"id": f"batch_req_{uuid.uuid4().hex[:20]}", "custom_id": o["custom_id"],
                               "response": None, "error": None}
        if o["kind"] in ("ok", "failed"):
            row["response"] = {"status_code": o["status"], "request_id": f"req_{uuid.uuid4().hex[:20]}",
                               "body": o["payload"]}
        elif o["kind"] == "expired":
            row["error"] = {"code": "batch_expired",
                            "message": "This request could not be executed before the completion window expired."}
        else:
            row["error"] = {"code": "batch_cancelled", "message": "This request was cancelled."}
        rows.append(json.dumps(row) + "\n")
    return "".join(rows).encode()


def _anthropic_batch(store: BatchStore, batch: _Batch, scripted: Any) -> dict:
    state = store.state(batch)
    if state == "ended":
        store.answer(batch, scripted)
    counts = store.counts(batch)
    return {"id": batch.id, "type": "message_batch", "processing_status": state,
            "request_counts": {"processing": counts["processing"], "succeeded": counts["ok"],
                               "errored": counts["failed"], "canceled": counts["cancelled"],
                               "expired": counts["expired"]},
            "ended_at": _iso(time.time()) if state == "ended" else None, "created_at": _iso(batch.created_at),
            "expires_at": _iso(batch.created_at + 86400), "archived_at": None, "cancel_initiated_at": None,
            "results_url": (f"http://{batch.host}/v1/messages/batches/{batch.id}/results" if state == "ended"
                            else None)}


def _anthropic_results(batch: _Batch) -> bytes:
    rows = []
    for o in batch.outcomes or []:
        if o["kind"] == "ok":
            result: dict[str, Any] = {"type": "succeeded", "message": o["payload"]}
        elif o["kind"] == "failed":
            result = {"type": "errored", "error": o["payload"]}
        else:
            result = {"type": "expired" if o["kind"] == "expired" else "canceled"}
        rows.append(json.dumps({"custom_id": o["custom_id"], "result": result}) + "\n")
    return "".join(rows).encode()


def _multipart(content_type: str, raw: bytes) -> dict[str, bytes]:
    """The fields of a multipart/form-data body, by name."""
    message = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw)
    return {part.get_param("name", header="content-disposition"): part.get_payload(decode=True)
            for part in message.iter_parts()}


def handle(handler: _Handler, method: str, path: str, raw: bytes = b"") -> bool:
    """Serve a batch route (True), or say it is not one (False)."""
    scripted = handler.server.scripted
    store: BatchStore = scripted.batches
    parts = [p for p in path.split("?", 1)[0].strip("/").split("/") if p]
    if parts[:1] == ["v1"]:
        parts = parts[1:]
    api = "anthropic" if parts[:2] == ["messages", "batches"] else "openai"
    if api == "anthropic":
        parts = parts[1:]
    if not parts or parts[0] not in ("files", "batches"):
        return False
    headers = {k.lower(): v for k, v in handler.headers.items()}

    def send(status: int, payload: dict | bytes) -> bool:
        if isinstance(payload, bytes):
            handler._send_bytes(status, payload, "application/x-jsonl")
        else:
            handler._send_json(status, payload)
        return True

    def missing(what: str) -> bool:
        return send(404, error_body(api, 404, f"no such {what}"))

    try:
        if api == "openai" and parts[0] == "files":
            if method == "POST" and len(parts) == 1:
                fields = _multipart(headers.get("content-type", ""), raw)
                if fields.get("purpose") != b"batch" or "file" not in fields:
                    return send(400, error_body(api, 400, "an upload needs purpose=batch and a file"))
                file_id = f"file-{uuid.uuid4().hex[:24]}"
                store.files[file_id] = fields["file"]
                store._log("upload", api, file_id=file_id)
                return send(200, {"id": file_id, "object": "file", "bytes": len(fields["file"]),
                                  "created_at": int(time.time()), "filename": "batch.jsonl", "purpose": "batch",
                                  "status": "processed"})
            if method == "GET" and len(parts) == 3 and parts[2] == "content":
                store._log("content", api, file_id=parts[1])
                return send(200, store.files[parts[1]]) if parts[1] in store.files else missing("file")
            return missing("file route")
        if method == "POST" and len(parts) == 1:
            body = json.loads(raw or b"{}")
            lines = _openai_input(store, body) if api == "openai" else _anthropic_input(body)
            if isinstance(lines, str):
                return send(400, error_body(api, 400, lines))
            batch = _Batch(id=(f"batch_{uuid.uuid4().hex[:24]}" if api == "openai" else
                               f"msgbatch_{uuid.uuid4().hex[:24]}"), api=api, lines=lines, headers=headers,
                           host=headers.get("host", "127.0.0.1"), plan=store.plan,
                           input_file_id=body.get("input_file_id"), metadata=body.get("metadata"))
            store.batches[batch.id] = batch
            store._log("create", api, batch_id=batch.id)
            return send(200, _openai_batch(store, batch, scripted) if api == "openai" else
                        _anthropic_batch(store, batch, scripted))
        batch = store.batches.get(parts[1]) if len(parts) > 1 else None
        if batch is None or batch.api != api:
            return missing("batch")
        if method == "GET" and len(parts) == 2:
            batch.polls += 1
            store._log("poll", api, batch_id=batch.id)
            return send(200, _openai_batch(store, batch, scripted) if api == "openai" else
                        _anthropic_batch(store, batch, scripted))
        if method == "POST" and parts[2:] == ["cancel"]:
            batch.cancelled = batch.outcomes is None
            store._log("cancel", api, batch_id=batch.id)
            return send(200, _openai_batch(store, batch, scripted) if api == "openai" else
                        _anthropic_batch(store, batch, scripted))
        if method == "GET" and api == "anthropic" and parts[2:] == ["results"]:
            store._log("results", api, batch_id=batch.id)
            if store.state(batch) != "ended":
                return send(400, error_body(api, 400, "the batch has not ended"))
            return send(200, _anthropic_results(batch))
        return missing("batch route")
    except (ValueError, KeyError, TypeError) as err:
        return send(400, error_body(api, 400, f"bad batch request: {type(err).__name__}: {err}"))


def _openai_input(store: BatchStore, body: dict) -> list[tuple[str, dict]] | str:
    """The lines of an OpenAI batch's input file, or what is wrong with the request."""
    if body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
        return "endpoint must be /v1/chat/completions and completion_window 24h"
    data = store.files.get(body.get("input_file_id") or "")
    if data is None:
        return "no such input file"
    lines = []
    for text in data.decode().splitlines():
        row = json.loads(text)
        if row.get("method") != "POST" or row.get("url") != "/v1/chat/completions" or not isinstance(row.get("body"),
                                                                                                     dict):
            return f"bad input line {text[:200]!r}"
        lines.append((str(row["custom_id"]), row["body"]))
    ids = [cid for cid, _ in lines]
    return "duplicate custom_id" if len(set(ids)) != len(ids) else lines


def _anthropic_input(body: dict) -> list[tuple[str, dict]] | str:
    """The requests of an Anthropic batch, or what is wrong with them."""
    lines = [(str(r.get("custom_id")), r.get("params")) for r in body.get("requests") or []]
    if not lines or any(not _CUSTOM_ID.match(cid) or not isinstance(params, dict) for cid, params in lines):
        return "every request needs a custom_id (1-64 of [a-zA-Z0-9_-]) and params"
    ids = [cid for cid, _ in lines]
    return "duplicate custom_id" if len(set(ids)) != len(ids) else lines
