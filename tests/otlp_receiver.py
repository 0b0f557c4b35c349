"""A tiny OTLP/HTTP logs receiver on 127.0.0.1 for tests: it accepts the exporter's protobuf POSTs to /v1/logs and
decodes them with the opentelemetry-proto package, as a collector would."""

from __future__ import annotations

import gzip
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _value(any_value: Any) -> Any:
    """A protobuf AnyValue as Python (string, number, bool, or a list of them)."""
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def decode_logs(body: bytes) -> list[dict[str, Any]]:
    """Every log record of an ExportLogsServiceRequest: event name, trace/span ids (hex), attributes, resource."""
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    request = ExportLogsServiceRequest()
    request.ParseFromString(body)
    records = []
    for resource_logs in request.resource_logs:
        resource = {kv.key: _value(kv.value) for kv in resource_logs.resource.attributes}
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                records.append({"event_name": record.event_name, "trace_id": record.trace_id.hex(),
                                "span_id": record.span_id.hex(), "scope": scope_logs.scope.name,
                                "attributes": {kv.key: _value(kv.value) for kv in record.attributes},
                                "resource": resource})
    return records


class OTLPReceiver:
    """Start with ``.start()``; ``.endpoint`` is the OTEL_EXPORTER_OTLP_ENDPOINT; ``.records`` what came in."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.paths: list[str] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:   # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                receiver.paths.append(self.path)
                if self.path == "/v1/logs":
                    receiver.records.extend(decode_logs(body))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        """The base URL the exporter posts to (it appends /v1/logs)."""
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> OTLPReceiver:
        """Serve in a background thread."""
        self.thread.start()
        return self

    def wait_for(self, n: int, timeout_s: float = 30.0) -> list[dict[str, Any]]:
        """The records once at least ``n`` came in (bounded wait)."""
        deadline = time.monotonic() + timeout_s
        while len(self.records) < n and time.monotonic() < deadline:
            time.sleep(0.05)
        return list(self.records)

    def stop(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()
