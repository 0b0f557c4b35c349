"""The scripted server's wire formats: the HTTP handler's routes (OpenAI chat completions and models,
Anthropic messages; the batch APIs are in :mod:`~groundjudge.testing.batch_routes`) and the reply and error bodies
of each provider."""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

from groundjudge.testing import batch_routes
from groundjudge.testing.faults import MODEL_ID, Reply, Request

if TYPE_CHECKING:
    from groundjudge.testing.scripted_server import ScriptedLLMServer

_OPENAI_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                       404: "not_found_error", 408: "timeout", 413: "invalid_request_error",
                       422: "invalid_request_error", 429: "rate_limit_exceeded", 503: "service_unavailable"}


_ANTHROPIC_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                          404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                          529: "overloaded_error"}


def _rough_tokens(text: str) -> int:
    return max(1, len(text) // 4)


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
            self._send_json(404, _openai_error(404, f"no route GET {self.path}"))

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
            self._send_json(404, _openai_error(404, f"no route POST {self.path}"))
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
        error = _error_body(api, 400, f"invalid JSON body: {bad}") if body is None else None
        if error is None and body.get("stream"):
            error = _error_body(api, 400, "streaming is not supported by the scripted server")
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
        status, payload = _reply_body(request, reply)
        if reply.fault == "truncate":
            self._send_json(status, payload, reply.headers, truncate=True)
        elif reply.fault is not None:
            self._send_json(500, _error_body(api, 500, f"unknown fault {reply.fault!r}"))
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


def _openai_error(status: int, message: str) -> dict:
    kind = _OPENAI_ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": kind if status == 429 else str(status)}}


def _anthropic_error(status: int, message: str) -> dict:
    kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def _error_body(api: str, status: int, message: str) -> dict:
    return _openai_error(status, message) if api == "openai" else _anthropic_error(status, message)


def _reply_body(request: Request, reply: Reply) -> tuple[int, dict]:
    """The status and JSON body for a reply (fault aside)."""
    api, body = request.api, request.body
    if reply.status != 200:
        message = reply.content if isinstance(reply.content, str) else f"scripted error {reply.status}"
        return reply.status, _error_body(api, reply.status, message)
    model = body.get("model") or MODEL_ID
    contents = reply.content if isinstance(reply.content, list) else None
    prompt_tokens = reply.prompt_tokens if reply.prompt_tokens is not None else _rough_tokens(request.text)
    if api == "openai":
        if contents is None:
            n = body.get("n") or 1
            contents = [reply.content] * (n if isinstance(n, int) and n > 0 else 1)
        completion_tokens = (reply.completion_tokens if reply.completion_tokens is not None
                             else sum(_rough_tokens(c or "") for c in contents))
        return 200, {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "system_fingerprint": None,
            "choices": [{"index": i, "message": {"role": "assistant", "content": c},
                         "logprobs": _logprobs(body, reply, c), "finish_reason": "stop"}
                        for i, c in enumerate(contents)],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }
    if contents is not None:
        return 500, _anthropic_error(500, "a list of contents needs an OpenAI request with n > 1")
    text = reply.content or ""
    completion_tokens = reply.completion_tokens if reply.completion_tokens is not None else _rough_tokens(text)
    return 200, {
        "id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": prompt_tokens, "output_tokens": completion_tokens},
    }


def _logprobs(body: dict, reply: Reply, content: str | None) -> dict | None:
    """OpenAI's ``logprobs`` object for the first generated token, when the request asked for it."""
    if not body.get("logprobs") or not content:
        return None
    top = reply.top_logprobs or {content.split()[0] if content.split() else content: 0.0}
    ranked = sorted(top.items(), key=lambda item: -item[1])[:max(int(body.get("top_logprobs") or 0), 1)]
    token, logprob = ranked[0]
    entry = lambda t, lp: {"token": t, "logprob": lp, "bytes": list(t.encode())}  # noqa: E731
    return {"content": [{**entry(token, logprob), "top_logprobs": [entry(t, lp) for t, lp in ranked]}],
            "refusal": None}


def _shutdown(conn: socket.socket) -> None:
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
