"""OpenTelemetry: each verdict as a ``gen_ai.evaluation.result`` event (GenAI semantic conventions).

```python
from groundjudge.integrations.otel import emit

emit(groundjudge.judge(answer, documents, judge="quip"))   # on the current span
```

The event is a log record with ``event_name="gen_ai.evaluation.result"`` (the Logs API, as the conventions have it
since span events were deprecated), emitted through the global logger provider (or the one given) and parented to:
the span given, else the span an example's ``meta`` names (``trace_id`` and ``span_id``, hex or int), else the
caller's current span. Attributes: ``gen_ai.evaluation.name`` (``groundedness``), ``.score.value``,
``.score.label`` (grounded / ungrounded / abstain), ``.explanation``, ``error.type`` for an abstention,
``gen_ai.response.id`` when the meta has ``response_id``, and the judge's ``groundjudge.judge.name``, ``.kind``,
``.model``, ``.template_hashes`` with ``groundjudge.example.id`` and ``groundjudge.verdict.path``.

Needs the ``[otel]`` extra; importing this module does not import OpenTelemetry.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from groundjudge.integrations.extras import require
from groundjudge.integrations.verdicts import VerdictView, explanation, view_of

EVENT_NAME = "gen_ai.evaluation.result"
"""The event's name in the OpenTelemetry GenAI semantic conventions."""

EVALUATION_NAME = "groundedness"
"""``gen_ai.evaluation.name`` of every event groundjudge emits (the judge is in ``groundjudge.judge.name``)."""

SCOPE = "groundjudge"
"""The instrumentation scope (logger name) of the events."""


def event_attributes(view: VerdictView) -> dict[str, Any]:
    """The event's attributes for one verdict (absent values are left out, as OpenTelemetry wants)."""
    values: dict[str, Any] = {
        "gen_ai.evaluation.name": EVALUATION_NAME,
        "gen_ai.evaluation.score.value": view.score,
        "gen_ai.evaluation.score.label": view.label,
        "gen_ai.evaluation.explanation": explanation(view),
        "error.type": view.abstain_reason.split(":")[0] if view.label == "abstain" and view.abstain_reason else None,
        "gen_ai.response.id": view.meta.get("response_id"),
        "groundjudge.judge.name": view.judge,
        "groundjudge.judge.kind": view.kind,
        "groundjudge.judge.model": view.model,
        "groundjudge.judge.template_hashes": list(view.template_hashes) or None,
        "groundjudge.judge.threshold": view.threshold,
        "groundjudge.example.id": view.example_id,
        "groundjudge.verdict.path": view.path,
    }
    return {key: value for key, value in values.items() if value is not None}


def _span_id(value: Any, width: int) -> int | None:
    """A trace or span id given as an int or a hex string (0x-prefixed or not); None when absent or zero."""
    if value is None or value == "":
        return None
    number = value if isinstance(value, int) else int(str(value).removeprefix("0x"), 16)
    if number <= 0 or number >= 1 << (4 * width):
        raise ValueError(f"{value!r} is not a {width}-hex-digit OpenTelemetry id")
    return number


def parent_context(view: VerdictView, span: Any = None) -> Any:
    """The context the event is emitted in: ``span``'s, else the meta's trace_id/span_id, else the current one."""
    trace = require("opentelemetry.trace", "otel")
    if span is not None:
        return trace.set_span_in_context(span)
    trace_id = _span_id(view.meta.get("trace_id"), 32)
    span_id = _span_id(view.meta.get("span_id"), 16)
    if trace_id is None or span_id is None:
        return None   # the current context
    remote = trace.SpanContext(trace_id=trace_id, span_id=span_id, is_remote=True,
                               trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED))
    return trace.set_span_in_context(trace.NonRecordingSpan(remote))


def emit(verdict: Any, span: Any = None, *, logger_provider: Any = None, judge: str | None = None,
         meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """Emit one verdict as a ``gen_ai.evaluation.result`` event; returns the attributes it carried.

    ``verdict``: anything :func:`groundjudge.integrations.verdicts.view_of` reads (a run's ``ResultRecord``, the
    API's ``JudgeVerdict``, the pytest gate's ``GateVerdict``, a ``JudgeResult`` / ``Verdict``). ``span``: the
    span to parent it to (default: the example's ``meta`` trace_id/span_id, else the current span).
    ``logger_provider``: default the global one (set by your OpenTelemetry SDK set-up, or by ``--otel``).
    """
    logs = require("opentelemetry._logs", "otel")
    view = view_of(verdict, judge=judge, meta=meta)
    attributes = event_attributes(view)
    from groundjudge import __version__

    logger = logs.get_logger(SCOPE, __version__, logger_provider=logger_provider)
    logger.emit(logs.LogRecord(timestamp=time.time_ns(), context=parent_context(view, span),
                               event_name=EVENT_NAME, attributes=attributes))
    return attributes


def emit_records(run: Any, *, logger_provider: Any = None, skip: Iterable[tuple[str, str]] = ()) -> int:
    """Emit every verdict of a run (a run folder, a ``Run`` or read ``RunRecords``); returns how many.

    ``skip``: (judge, example id) pairs not to emit (those a resumed run had emitted before).
    """
    from groundjudge.runs.records import RunRecords, find_records, read_records

    records = run if isinstance(run, RunRecords) else \
        (run.records if hasattr(run, "records") else read_records(find_records(Path(run))))
    specs = {spec.spec: spec for spec in records.header.judges}
    left_out = set(skip)
    count = 0
    for record in records.results:
        if (record.judge, record.example.id) in left_out:
            continue
        view = view_of(record, spec=specs.get(record.judge))
        emit(view, logger_provider=logger_provider)
        count += 1
    return count
