"""``--otel``: export the events over OTLP (HTTP/protobuf) to any collector, configured by the standard variables.

``OTEL_EXPORTER_OTLP_ENDPOINT`` (default ``http://localhost:4318``) or ``OTEL_EXPORTER_OTLP_LOGS_ENDPOINT``,
``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_EXPORTER_OTLP_TIMEOUT``..., ``OTEL_SERVICE_NAME`` (default ``groundjudge``)
and ``OTEL_RESOURCE_ATTRIBUTES``: the OpenTelemetry SDK reads them.
"""

from __future__ import annotations

import os
from typing import Any

from groundjudge.errors import UsageError
from groundjudge.integrations.extras import MissingExtraError, require


def otlp_logger_provider() -> Any:
    """A logger provider batching records to the OTLP HTTP exporter the environment describes.

    Call ``.shutdown()`` on it at the end: that flushes what is still batched. A missing ``[otel]`` extra, or an
    ``OTEL_EXPORTER_OTLP_PROTOCOL`` other than http/protobuf, is a UsageError (one line saying what to do).
    """
    protocol = os.environ.get("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL") or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
    if protocol and protocol != "http/protobuf":
        raise UsageError(f"--otel exports over OTLP http/protobuf; OTEL_EXPORTER_OTLP_PROTOCOL={protocol} is not "
                         "supported (unset it, or point a collector's HTTP receiver at it)")
    try:
        sdk_logs = require("opentelemetry.sdk._logs", "otel")
        export = require("opentelemetry.sdk._logs.export", "otel")
        resources = require("opentelemetry.sdk.resources", "otel")
        exporter = require("opentelemetry.exporter.otlp.proto.http._log_exporter", "otel")
    except MissingExtraError as error:
        raise UsageError(f"--otel: {error}") from None
    name = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": "groundjudge"}
    provider = sdk_logs.LoggerProvider(resource=resources.Resource.create(name))
    provider.add_log_record_processor(export.BatchLogRecordProcessor(exporter.OTLPLogExporter()))
    return provider


def results_before(out: str) -> set[tuple[str, str]]:
    """The (judge, example id) pairs a run folder already holds (a resumed run emits only the new ones)."""
    from pathlib import Path

    from groundjudge.runs.records import RecordsError, read_records

    path = Path(out) / "records.jsonl"
    if not path.exists() or path.stat().st_size == 0:
        return set()
    try:
        return read_records(path).done()
    except RecordsError:
        return set()


def export_run(out: str, provider: Any, skip: set[tuple[str, str]]) -> int:
    """Emit a finished (or stopped) run's new verdicts through ``provider``, flush and shut it; returns how many."""
    from pathlib import Path

    from groundjudge.integrations.otel import emit_records

    try:
        if not (Path(out) / "records.jsonl").exists():
            return 0
        return emit_records(out, logger_provider=provider, skip=skip)
    finally:
        provider.shutdown()


class VerdictExporter:
    """``serve --otel``: emit each answered verdict (judge name, example, result) as an event, through an OTLP
    logger provider; ``close()`` flushes and shuts it."""

    def __init__(self, specs: Any, provider: Any = None):
        """``specs``: the served judges' header entries (kind, templates); ``provider``: default the OTLP one."""
        self.specs = {spec.spec: spec for spec in specs}
        self.provider = provider if provider is not None else otlp_logger_provider()

    def __call__(self, judge: str, example: Any, result: Any) -> None:
        """Emit one verdict, parented to the span its example's meta names (the request's ``traceparent``)."""
        from groundjudge.integrations.otel import emit
        from groundjudge.integrations.verdicts import view_of
        from groundjudge.types import ResultRecord

        record = ResultRecord(judge=judge, example=example, result=result)
        emit(view_of(record, spec=self.specs.get(judge)), logger_provider=self.provider)

    def close(self) -> None:
        """Flush what is batched and shut the provider."""
        self.provider.shutdown()
