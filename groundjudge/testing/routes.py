"""The scripted server's HTTP handler and its routes: OpenAI chat completions and models, Anthropic messages (the
batch APIs are in :mod:`~groundjudge.testing.batch_routes`, the reply and error bodies of each provider in
:mod:`~groundjudge.testing.bodies`)."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

from groundjudge.testing import batch_routes
from groundjudge.testing.bodies import error_body, openai_error, reply_body
from groundjudge.testing.faults import MODEL_ID, Request

if TYPE_CHECKING:
    from groundjudge.testing.scripted_server import ScriptedLLMServer


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False
    scripted: "ScriptedLLMServer"

    def process_request(self, request, client_address):
        """One daemon thread per connection, registered before it starts so that stop() can close and join it."""
        thread = threading.Thread(target=self.process_request_thread, args=(request, client_address),
                                  name=f"scripted-llm-conn-{client_address[1]}", daemon=True)
        self.scripted._track(request, thread)
        thread.start()

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.scripted._untrack(request)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive; every reply carries Content-Length
    timeout = 60  # an idle keep-alive connection is closed after this; stop() closes them at once
    disable_nagle_algorithm = True  # headers and body go out in two writes: with Nagle's algorithm the body waits
    # for the client's delayed ACK of the headers, ~40 ms on every keep-alive reply (as no real provider answers)
    server: _Server

    def log_message(self, format, *args):  # noqa: A002 - quiet
        pass

    # --- routes
    def do_GET(self):
        if batch_routes.handle(self, "GET", self.path):
            return
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send_json(200, {"object": "list", "data": [
                {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "scripted"}]})
        else:
            self._send_json(404, openai_error(404, f"no route GET {self.path}"))

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0].rstrip("/")
        if batch_routes.handle(self, "POST", path, raw):
            return
        if path in ("/v1/chat/completions", "/chat/completions"):
            api = "openai"
        elif path in ("/v1/messages", "/messages"):
            api = "anthropic"
        else:
            self._send_json(404, openai_error(404, f"no route POST {self.path}"))
            return
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("body is not a JSON object")
        except ValueError as err:
            body = None
            bad = str(err)
        request = Request(path=self.path, headers={k.lower(): v for k, v in self.headers.items()},
                          body=body if body is not None else {}, api=api)
        scripted = self.server.scripted
        scripted._record(request)
        error = error_body(api, 400, f"invalid JSON body: {bad}") if body is None else None
        if error is None and body.get("stream"):
            error = error_body(api, 400, "streaming is not supported by the scripted server")
        if error is not None:
            self._send_json(400, error)
            return
        reply = scripted._next_reply(request)
        if reply.delay > 0 and scripted._stopping.wait(reply.delay):
            self.close_connection = True  # stopping: do not answer
            return
        if reply.fault == "drop":
            self._drop()
            return
        status, payload = reply_body(request, reply)
        if reply.fault == "truncate":
            self._send_json(status, payload, reply.headers, truncate=True)
        elif reply.fault is not None:
            self._send_json(500, error_body(api, 500, f"unknown fault {reply.fault!r}"))
        else:
            self._send_json(status, payload, reply.headers)

    # --- writing
    def _drop(self):
        self.close_connection = True
        _shutdown(self.connection)

    def _send_bytes(self, status: int, data: bytes, content_type: str) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def _send_json(self, status: int, payload: dict, headers: dict[str, str] | None = None, truncate: bool = False):
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, str(value))
            if truncate:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data[: len(data) // 2] if truncate else data)
            self.wfile.flush()
        except OSError:  # the client went away (e.g. it timed out during a delay)
            self.close_connection = True
            return
        if truncate:
            self._drop()


def _shutdown(conn: socket.socket) -> None:
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
