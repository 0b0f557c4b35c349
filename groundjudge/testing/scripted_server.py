"""A scripted, real HTTP language-model server for tests.

``ScriptedLLMServer`` listens on 127.0.0.1 (a free port) in a background thread and speaks two wire formats:

* OpenAI chat completions: ``POST /v1/chat/completions`` (plus ``GET /v1/models``), base ``server.openai_base``;
* Anthropic messages: ``POST /v1/messages``, base ``server.anthropic_base``;
* both providers' batch APIs (OpenAI files + batches, Anthropic message batches), whose lines the same replies
  answer, played as ``server.batches.plan`` says (:mod:`~groundjudge.testing.batch_routes`).

Each request is answered by the next ``Reply`` pushed with ``push()`` or, when that queue is empty, by the
responder (``Request -> Reply``). Replies can be errors in the provider's error shape, be delayed, or be broken
on the wire ("drop", "truncate"). Every request received is recorded in ``server.requests`` (headers lower-cased).

How litellm (1.106.2) surfaces each reply, with ``max_retries=0`` -- the same for ``openai/`` and ``anthropic/``
models (checked by tests/test_scripted_llm_server.py, which fail and name the class if litellm changes):

* 429 + Retry-After -> ``litellm.RateLimitError``, ``err.status_code == 429``. Retry-After is ONLY in
  ``err.litellm_response_headers`` (an ``httpx.Headers``, case-insensitive: ``.get("retry-after") == "1"``);
  ``err.response`` is a synthetic ``httpx.Response`` (status 429) whose ``.headers`` are EMPTY.
* 500 -> ``litellm.InternalServerError``, ``err.status_code == 500`` (``litellm_response_headers`` set).
* 503 -> ``litellm.ServiceUnavailableError``, ``err.status_code == 503``.
* fault "drop" -> ``litellm.InternalServerError``, ``err.status_code == 500``, ``litellm_response_headers`` None;
  NOT ``litellm.APIConnectionError`` (message "Connection error." / "Server disconnected.").
* fault "truncate" -> ``litellm.InternalServerError`` as for "drop" (message "Connection error." for openai/,
  "Response payload is not completed ..." for anthropic/).
* delay > timeout -> ``litellm.Timeout``, ``err.status_code == 408``, no headers; a subclass of
  ``openai.APIConnectionError`` but not of ``litellm.APIConnectionError``.
* "malformed" -> no exception: a normal 200 whose content ``{"label": `` does not parse as JSON.

So a client honouring Retry-After reads ``getattr(err, "litellm_response_headers", None)`` and looks up
``"retry-after"`` case-insensitively; it must treat InternalServerError as transient (it covers broken connections).

The wire formats are in :mod:`~groundjudge.testing.routes`, the replies and faults in
:mod:`~groundjudge.testing.faults`; this module runs the server.
"""

from __future__ import annotations

import hashlib
import random
import socket
import threading
from collections import deque
from typing import Callable

from groundjudge.testing.batch_routes import BatchPlan, BatchStore
from groundjudge.testing.faults import FAULTS, MALFORMED, MODEL_ID, Reply, Request, _ran_out
from groundjudge.testing.routes import _Handler, _Server, _shutdown

__all__ = ["FAULTS", "MALFORMED", "MODEL_ID", "BatchPlan", "Reply", "Request", "ScriptedLLMServer"]


class ScriptedLLMServer:
    """An OpenAI- and Anthropic-compatible HTTP server on 127.0.0.1 whose replies a test scripts.

    Use as a context manager (or ``start()``/``stop()``). Replies come first from the FIFO filled by ``push()``,
    then from the responder; with neither, the reply is a 500 saying the script ran out. A responder that raises
    yields a 500 and the exception is kept in ``errors``.
    """

    def __init__(self, responder: Callable[[Request], Reply] | None = None, port: int = 0):
        self.responder = responder
        self._bind_port = port
        """The port to listen on; 0 (the default) picks a free one."""
        self.requests: list[Request] = []
        self.errors: list[BaseException] = []
        self.batches = BatchStore()
        """The batch APIs' files, batches, plan (``batches.plan``) and request log (``batches.events``)."""
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: dict[socket.socket, threading.Thread] = {}
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self.port: int | None = None

    # --- lifecycle
    def start(self) -> "ScriptedLLMServer":
        """Bind 127.0.0.1 (the port given, else a free one) and serve in a background thread."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = _Server(("127.0.0.1", self._bind_port), _Handler)
        self._httpd.scripted = self
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"scripted-llm-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close the port and every open connection, and join the threads."""
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            open_connections = list(self._connections.items())
        for conn, _ in open_connections:
            _shutdown(conn)
        for _, thread in open_connections:
            if thread is not threading.current_thread():
                thread.join(timeout=5)
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> "ScriptedLLMServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def openai_base(self) -> str:
        """Base URL for OpenAI-format clients: ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self._require_port()}/v1"

    @property
    def anthropic_base(self) -> str:
        """Base URL for Anthropic-format clients: ``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self._require_port()}"

    def _require_port(self) -> int:
        if self.port is None:
            raise RuntimeError("the server is not started")
        return self.port

    # --- scripting
    def push(self, *replies: Reply) -> None:
        """Queue replies; each request consumes the oldest one before the responder is asked."""
        with self._lock:
            self._queue.extend(replies)

    def set_responder(self, fn: Callable[[Request], Reply] | None) -> None:
        """Answer requests (once the pushed queue is empty) with ``fn(request)``."""
        self.responder = fn

    def fault_injector(self, rate: float, seed: int, faults=FAULTS, retry_after: str = "0"):
        """Wrap the current responder so that a fraction ``rate`` of its replies become faults; install and return it.

        Faults: "429" (with ``Retry-After: retry_after``), "500", "drop", "truncate", "malformed" (a 200 whose
        content is ``{"label": ``). The decision is deterministic: it comes from a RNG seeded by ``seed``, the
        request text and how many times that same text was seen before -- so it does not depend on the order in
        which concurrent requests arrive, and a retried request draws afresh.
        """
        unknown = set(faults) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown faults {sorted(unknown)}; choose from {FAULTS}")
        faults = tuple(faults)
        inner = self.responder
        seen: dict[str, int] = {}
        lock = threading.Lock()

        def injected(request: Request) -> Reply:
            text = request.text
            with lock:
                k = seen.get(text, 0)
                seen[text] = k + 1
            digest = hashlib.sha256(f"{seed}\0{k}\0{text}".encode()).digest()
            rng = random.Random(int.from_bytes(digest[:8], "big"))
            if faults and rng.random() < rate:
                kind = rng.choice(faults)
                if kind == "429":
                    return Reply(status=429, headers={"Retry-After": retry_after}, content="rate limited (injected)")
                if kind == "500":
                    return Reply(status=500, content="server error (injected)")
                if kind == "malformed":
                    return Reply(content=MALFORMED)
                return Reply(content="{}", fault=kind)
            return inner(request) if inner is not None else _ran_out()

        self.responder = injected
        return injected

    # --- used by the handler
    def _next_reply(self, request: Request) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        responder = self.responder
        if responder is None:
            return _ran_out()
        try:
            reply = responder(request)
            if not isinstance(reply, Reply):
                raise TypeError(f"the responder returned {type(reply).__name__}, not Reply")
            return reply
        except Exception as err:  # noqa: BLE001 - report it to the client and the test
            with self._lock:
                self.errors.append(err)
            return Reply(status=500, content=f"scripted responder raised {type(err).__name__}: {err}")

    def _record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def _track(self, conn: socket.socket, thread: threading.Thread) -> None:
        with self._lock:
            self._connections[conn] = thread
        if self._stopping.is_set():
            _shutdown(conn)

    def _untrack(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections.pop(conn, None)
