"""What the service refuses before judging: a missing or wrong bearer token (401), a body over the cap (413),
and work past the bounded queue (503 with Retry-After).

The token and the body cap are ASGI middleware, so they apply before a body is parsed; the queue is an
:class:`Admission` counter the judging routes take their items from. The token is compared in constant time
and never logged or echoed.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, Collection
from contextlib import contextmanager
from typing import Any

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

OPEN_PATHS = frozenset({"/healthz", "/openapi.json"})
"""Paths served without the token: the liveness probe and the (public) API schema."""


async def send_json_error(send: Send, status: int, message: str, headers: dict[str, str] | None = None) -> None:
    """Answer with ``{"error": message, "detail": []}`` and the status given."""
    body = json.dumps({"error": message, "detail": []}).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class BearerToken:
    """ASGI middleware: requests other than ``open_paths`` need ``Authorization: Bearer <token>`` (else 401)."""

    def __init__(self, app: ASGIApp, token: str, open_paths: Collection[str] = OPEN_PATHS):
        self.app = app
        self._expected = f"Bearer {token}".encode()
        self.open_paths = frozenset(open_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.open_paths:
            return await self.app(scope, receive, send)
        given = dict(scope.get("headers") or ()).get(b"authorization", b"")
        if not hmac.compare_digest(given, self._expected):
            return await send_json_error(send, 401, "missing or wrong bearer token",
                                         {"WWW-Authenticate": "Bearer"})
        return await self.app(scope, receive, send)


class BodyCap:
    """ASGI middleware: a request body over ``max_bytes`` (announced or streamed) is refused with 413.

    The body is read here (at most ``max_bytes`` of it) and handed on as one message, so the app never reads
    past the cap.
    """

    def __init__(self, app: ASGIApp, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        announced = dict(scope.get("headers") or ()).get(b"content-length")
        if announced is not None and announced.isdigit() and int(announced) > self.max_bytes:
            return await send_json_error(send, 413, f"request body over {self.max_bytes} bytes")
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":   # the client went away
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_bytes:
                return await send_json_error(send, 413, f"request body over {self.max_bytes} bytes")
            if not message.get("more_body"):
                break
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": b"".join(chunks), "more_body": False}

        return await self.app(scope, replay, send)


class QueueFull(Exception):
    """More work than the bounded queue holds: answered 503 with Retry-After."""


class Admission:
    """The bounded queue: how many items (answers to judge) are admitted and not yet answered, at most ``limit``."""

    def __init__(self, limit: int, retry_after_s: int = 1):
        self.limit = limit
        self.retry_after_s = retry_after_s
        self.admitted = 0

    @contextmanager
    def admit(self, items: int = 1):
        """Hold ``items`` places while the block runs; QueueFull when they do not fit."""
        if self.admitted + items > self.limit:
            raise QueueFull(f"the queue is full ({self.admitted} of {self.limit} admitted): retry later")
        self.admitted += items
        try:
            yield
        finally:
            self.admitted -= items
