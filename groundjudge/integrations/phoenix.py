"""Arize Phoenix: verdicts as span annotations on the traced spans the examples name, else as a dataset + experiment.

```python
from groundjudge.integrations.phoenix import export_run

export_run("runs/latest", "http://127.0.0.1:6006")   # or: groundjudge export runs/latest --to phoenix --endpoint URL
```

An example whose ``meta`` holds ``span_id`` (a traced RAG call's span, 16 hex digits) gets one span annotation per
judge: name ``groundjudge:<judge>``, annotator_kind ``LLM`` for a verdict an LLM produced (its path names
``llm:``), ``CODE`` for a local judge's, label (grounded / ungrounded / abstain), score and the explanation naming
the unsupported claims; human labels of the run (``RUN/labels.jsonl``) become ``groundjudge:human`` annotations of
kind ``HUMAN``. The other examples go to a Phoenix dataset (question and documents as input, the gold label as the
reference output) and one experiment whose runs are the answers and whose evaluations are the verdicts
(:mod:`groundjudge.integrations.phoenix_dataset`). ``serve --phoenix URL`` annotates live
(:class:`LiveAnnotator`). How Phoenix stores a verdict (name, annotator kind, label, score, explanation, metadata)
is in :mod:`groundjudge.integrations.phoenix_fields`, shared by both.

Needs the ``[phoenix]`` extra (``arize-phoenix-client``); importing this module imports neither Phoenix nor its
client. ``PHOENIX_API_KEY`` is sent when set (a Phoenix with auth).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from groundjudge.integrations.extras import require
from groundjudge.integrations.phoenix_fields import (  # noqa: F401  (re-exported: how Phoenix stores a verdict)
    ANNOTATION_PREFIX,
    HUMAN,
    annotator_kind,
    verdict_fields,
)
from groundjudge.integrations.verdicts import VerdictView

BATCH = 100
"""Annotations sent per request."""


class PhoenixExport(BaseModel):
    """What an export sent to Phoenix."""

    endpoint: str
    span_annotations: int = Field(default=0, description="Span annotations written (verdicts and human labels).")
    dataset_id: str | None = Field(default=None, description="The dataset of the examples without a span id.")
    dataset_name: str | None = None
    experiment_id: str | None = None
    evaluations: int = Field(default=0, description="Experiment evaluations written (verdicts and human labels).")


def client_for(endpoint: str, api_key: str | None = None) -> Any:
    """A Phoenix client for ``endpoint`` (``PHOENIX_API_KEY`` when no key is given); needs the [phoenix] extra."""
    client = require("phoenix.client", "phoenix")
    key = api_key or os.environ.get("PHOENIX_API_KEY")
    return client.Client(base_url=endpoint.rstrip("/"), api_key=key)


def span_id_of(view: VerdictView) -> str | None:
    """The span id the verdict's example names, as Phoenix spells it (16 hex digits; an int id converted)."""
    value = view.meta.get("span_id")
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:016x}"
    text = str(value or "").strip().lower()
    return text or None


def span_annotation(view: VerdictView) -> dict[str, Any]:
    """The span annotation of a verdict whose example's meta names a ``span_id``."""
    fields = verdict_fields(view)
    result = {key: fields[key] for key in ("label", "score", "explanation") if fields[key] is not None}
    return {"name": fields["name"], "span_id": span_id_of(view), "annotator_kind": fields["annotator_kind"],
            "result": result, "metadata": fields["metadata"]}


def human_annotation(label: Any, span_id: str) -> dict[str, Any]:
    """The span annotation of a human label (a ``LabelRecord``): kind HUMAN, the labeller as its identifier."""
    result = {"label": label.label, **({"explanation": label.note} if label.note else {})}
    metadata = {"labeller": label.labeller, "time": label.time, "example_id": label.id,
                **({"error_types": list(label.error_types)} if label.error_types else {})}
    return {"name": ANNOTATION_PREFIX + HUMAN, "span_id": span_id, "annotator_kind": "HUMAN", "result": result,
            "metadata": metadata, "identifier": label.labeller}


def log_span_annotations(client: Any, annotations: Iterable[dict[str, Any]]) -> int:
    """Send span annotations (upserted by name, span and identifier) in batches; returns how many were sent."""
    batch: list[dict[str, Any]] = []
    sent = 0
    for annotation in annotations:
        batch.append(annotation)
        if len(batch) == BATCH:
            client.spans.log_span_annotations(span_annotations=batch, sync=True)
            sent, batch = sent + len(batch), []
    if batch:
        client.spans.log_span_annotations(span_annotations=batch, sync=True)
        sent += len(batch)
    return sent


def has_span(view: VerdictView) -> bool:
    """Whether the verdict's example names the span it is about."""
    return span_id_of(view) is not None


def export_run(run: Any, endpoint: str, *, dataset_name: str | None = None, api_key: str | None = None,
               skip: Iterable[tuple[str, str]] = ()) -> PhoenixExport:
    """Send a run folder's verdicts (and human labels) to the Phoenix at ``endpoint``.

    Examples with ``meta.span_id``: span annotations; the others: a dataset (``dataset_name``, default
    ``groundjudge <run id>``, reused when it exists) and one experiment with the verdicts as evaluations.
    ``skip``: (judge, example id) pairs not to send (a resumed run's earlier results).
    """
    from groundjudge.integrations.phoenix_dataset import export_dataset
    from groundjudge.integrations.run_views import human_labels, run_views

    records, views = run_views(run, skip)
    client = client_for(endpoint, api_key)
    spans = {view.example_id: span_id_of(view) for view in views if has_span(view)}
    labels = human_labels(run)
    annotations = [span_annotation(view) for view in views if has_span(view)]
    annotations += [human_annotation(label, spans[label.id]) for label in labels.values() if label.id in spans]
    summary = PhoenixExport(endpoint=endpoint, span_annotations=log_span_annotations(client, annotations))
    rest = [view for view in views if not has_span(view)]
    if rest:
        name = dataset_name or f"groundjudge {records.header.run_id}"
        summary = summary.model_copy(update=export_dataset(client, records, rest, name, labels))
    return summary


class LiveAnnotator:
    """``serve --phoenix URL``: annotate the span each answered request names (its ``traceparent``), from a
    background thread so a request never waits for Phoenix; ``close()`` sends what is queued."""

    def __init__(self, endpoint: str, specs: Any = (), client: Any = None):
        """``specs``: the served judges' header entries; ``client``: default a client for ``endpoint``."""
        import queue
        import threading

        self.client = client if client is not None else client_for(endpoint)
        self.specs = {spec.spec: spec for spec in specs}
        self.sent = self.skipped = self.failed = 0
        self._queue: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=self._drain, name="groundjudge-phoenix", daemon=True)
        self._thread.start()

    def __call__(self, judge: str, example: Any, result: Any) -> None:
        """Queue one verdict's annotation (skipped when the request named no span)."""
        from groundjudge.integrations.verdicts import view_of
        from groundjudge.types import ResultRecord

        view = view_of(ResultRecord(judge=judge, example=example, result=result), spec=self.specs.get(judge))
        if not has_span(view):
            self.skipped += 1
            return
        self._queue.put(span_annotation(view))

    def _drain(self) -> None:
        """Send queued annotations until the ``None`` that ``close`` puts."""
        import logging

        while True:
            item = self._queue.get()
            if item is None:
                return
            try:
                self.sent += log_span_annotations(self.client, [item])
            except Exception as error:  # noqa: BLE001 - Phoenix down must not fail a served request
                self.failed += 1
                logging.getLogger(__name__).warning("phoenix: annotation not sent: %s", error)

    def close(self, timeout_s: float = 30.0) -> None:
        """Send what is queued (waiting at most ``timeout_s``) and stop the thread."""
        self._queue.put(None)
        self._thread.join(timeout_s)
