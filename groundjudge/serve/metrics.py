"""The service's Prometheus metrics, in a registry of its own per app (two apps in one process never mix).

``groundjudge_requests_total{route,status}``, ``groundjudge_request_seconds{route}`` (histogram),
``groundjudge_errors_total{route,status}`` (every 4xx / 5xx answer), ``groundjudge_in_flight`` (requests being
answered), ``groundjudge_queue_admitted`` (items holding a place in the bounded queue),
``groundjudge_judge_errors_total{judge}`` (verdicts that abstained because the judge raised) and
``groundjudge_batch_size{judge}`` (histogram of micro-batch sizes). Routes are the service's own paths; any other
path is counted as ``other``, so a scan of random paths cannot grow the label set.
"""

from __future__ import annotations

import time
from collections.abc import Collection

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from groundjudge.serve.limits import ASGIApp, Receive, Scope, Send

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
"""Histogram buckets of request latency, in seconds."""


class ServiceMetrics:
    """The metrics of one app, in their own registry."""

    def __init__(self, routes: Collection[str]):
        self.routes = frozenset(routes)
        self.registry = CollectorRegistry()
        self.requests = Counter("groundjudge_requests", "Requests answered, by route and status.",
                                ["route", "status"], registry=self.registry)
        self.latency = Histogram("groundjudge_request_seconds", "Time to answer a request, by route.", ["route"],
                                 buckets=LATENCY_BUCKETS, registry=self.registry)
        self.errors = Counter("groundjudge_errors", "Requests answered with a 4xx or 5xx status.",
                              ["route", "status"], registry=self.registry)
        self.in_flight = Gauge("groundjudge_in_flight", "Requests being answered now.", registry=self.registry)
        self.queue_admitted = Gauge("groundjudge_queue_admitted", "Items holding a place in the bounded queue.",
                                    registry=self.registry)
        self.judge_errors = Counter("groundjudge_judge_errors", "Verdicts that abstained because the judge raised.",
                                    ["judge"], registry=self.registry)
        self.batch_size = Histogram("groundjudge_batch_size", "Examples per micro-batch, by judge.", ["judge"],
                                    buckets=(1, 2, 4, 8, 16, 32, 64), registry=self.registry)

    def route_of(self, path: str) -> str:
        """The route label of a request path (``other`` for paths the service does not serve)."""
        return path if path in self.routes else "other"

    def render(self) -> tuple[bytes, str]:
        """The Prometheus text exposition and its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class MetricsMiddleware:
    """ASGI middleware counting every HTTP request (refusals by the token, cap and queue included)."""

    def __init__(self, app: ASGIApp, metrics: ServiceMetrics):
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        route = self.metrics.route_of(scope["path"])
        status = 500   # what is counted when the app fails before it answers
        start = time.perf_counter()

        async def send_counted(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        self.metrics.in_flight.inc()
        try:
            await self.app(scope, receive, send_counted)
        finally:
            self.metrics.in_flight.dec()
            self.metrics.requests.labels(route, str(status)).inc()
            self.metrics.latency.labels(route).observe(time.perf_counter() - start)
            if status >= 400:
                self.metrics.errors.labels(route, str(status)).inc()
