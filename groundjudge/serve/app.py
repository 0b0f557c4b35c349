"""The service's FastAPI app: routes, error shapes and the middleware around them.

``create_app`` takes judges already loaded (:func:`~groundjudge.serve.loading.load_judges`) and the service's
limits; it starts the judges' batchers (and warms them) on startup, and on shutdown, once uvicorn has answered
the requests in flight, stops them and closes the records folder (writing its ``summary.json``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import asynccontextmanager
from typing import Annotated

from fastapi import Body, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field, SecretStr
from starlette.exceptions import HTTPException as StarletteHTTPException

from groundjudge.runs.live_records import LiveRecords
from groundjudge.serve.limits import Admission, BearerToken, BodyCap, QueueFull
from groundjudge.serve.loading import JudgeSet, UnknownJudge, import_llm_client
from groundjudge.serve.metrics import MetricsMiddleware, ServiceMetrics
from groundjudge.serve.judging import JudgeTimeout, Judging, trace_meta
from groundjudge.serve.schemas import (MAX_BATCH_ITEMS, BatchResponse, ErrorResponse, FactualConsistencyRequest,
                                       FactualConsistencyResponse, HealthResponse, JudgeRequest, VerdictResponse)
from groundjudge.types import Example, JudgeResult

ROUTES = ("/v1/judge", "/v1/judge/batch", "/v1/evaluate_factual_consistency", "/healthz", "/metrics")
"""The service's paths (metrics label every other path ``other``)."""

WARMUP = Example(id="warmup", context=("The deposit is returned within 30 days.",),
                 answer="The deposit is returned within 30 days.")
"""What each batched judge scores once on startup, so its model is loaded before the first request."""


class ServeSettings(BaseModel):
    """The service's limits and access."""

    max_queue: int = Field(default=256, ge=1, description="Items admitted and not yet answered; past it, 503.")
    max_body_bytes: int = Field(default=1_000_000, ge=1, description="Largest request body; past it, 413.")
    timeout_s: float = Field(default=60.0, gt=0, description="Longest a request may take to judge; past it, 504.")
    retry_after_s: int = Field(default=1, ge=0, description="The Retry-After a 503 carries.")
    token: SecretStr | None = Field(default=None, description="Bearer token requests need (None: no token).")
    warmup: bool = Field(default=True, description="Score a tiny example with each batched judge on startup.")


def _error(status: int, message: str, detail: list | None = None, headers: dict | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "detail": detail or []}, status_code=status, headers=headers)


def _where(loc: tuple | list) -> str:
    return ".".join(str(part) for part in loc)


async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
    """422: bad JSON, a missing field or a wrong type, each error with where it is (the input is not echoed)."""
    detail = [{"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))}
              for e in exc.errors()]
    first = detail[0] if detail else {"loc": [], "msg": "invalid request"}
    return _error(422, f"{_where(first['loc'])}: {first['msg']}", detail)


ERRORS = {status: {"model": ErrorResponse, "description": text} for status, text in (
    (401, "Missing or wrong bearer token."), (413, "Request body over the cap."),
    (422, "Bad JSON, a missing field, a wrong type or an unknown judge (``loc`` names it)."),
    (503, "The queue is full: retry after Retry-After seconds."), (504, "Judging took longer than the limit."))}
"""The error answers every judging route documents."""


def _install_errors(app: FastAPI, admission: Admission) -> None:
    """Every error answered as ``{"error", "detail"}`` JSON."""
    app.add_exception_handler(RequestValidationError, _invalid)

    async def unknown_judge(request: Request, exc: UnknownJudge) -> JSONResponse:
        return _error(422, f"body.judge: {exc.args[0]}", [{"loc": ["body", "judge"], "msg": exc.args[0],
                                                           "type": "unknown_judge"}])

    async def queue_full(request: Request, exc: QueueFull) -> JSONResponse:
        return _error(503, str(exc), headers={"Retry-After": str(admission.retry_after_s)})

    async def timeout(request: Request, exc: JudgeTimeout) -> JSONResponse:
        return _error(504, str(exc))

    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400:   # a body that is not text (not UTF-8): bad JSON like any other
            return _error(422, f"body: {exc.detail}", [{"loc": ["body"], "msg": str(exc.detail),
                                                        "type": "json_invalid"}])
        return _error(exc.status_code, str(exc.detail), headers=getattr(exc, "headers", None))

    app.add_exception_handler(UnknownJudge, unknown_judge)
    app.add_exception_handler(QueueFull, queue_full)
    app.add_exception_handler(JudgeTimeout, timeout)
    app.add_exception_handler(StarletteHTTPException, http_error)


def _add_routes(app: FastAPI, judging: Judging, admission: Admission, metrics: ServiceMetrics) -> None:
    """The judging routes, /healthz and /metrics."""

    @app.post("/v1/judge", response_model=VerdictResponse, responses=ERRORS, tags=["judge"])
    async def judge(body: JudgeRequest, request: Request) -> VerdictResponse:
        """Judge one answer against its context with a loaded judge."""
        judging.judges.pick(body.judge)
        with admission.admit(1):
            metrics.queue_admitted.set(admission.admitted)
            return (await judging.judge_many([body], trace_meta(request.headers.get("traceparent"))))[0]

    @app.post("/v1/judge/batch", response_model=BatchResponse, responses=ERRORS, tags=["judge"])
    async def judge_batch(items: Annotated[list[JudgeRequest], Body(min_length=1, max_length=MAX_BATCH_ITEMS)],
                          request: Request) -> BatchResponse:
        """Judge a list of answers (a JSON array of /v1/judge bodies); verdicts in the same order."""
        for item in items:
            judging.judges.pick(item.judge)
        with admission.admit(len(items)):
            metrics.queue_admitted.set(admission.admitted)
            meta = trace_meta(request.headers.get("traceparent"))
            return BatchResponse(results=await judging.judge_many(items, meta))

    @app.post("/v1/evaluate_factual_consistency", response_model=FactualConsistencyResponse, responses=ERRORS,
              tags=["hhem"])
    async def evaluate_factual_consistency(body: FactualConsistencyRequest) -> FactualConsistencyResponse:
        """Vectara HHEM's API: the probability that ``generated_text`` is consistent with ``source_texts``."""
        request = JudgeRequest(answer=body.generated_text, context=body.source_texts, judge=body.judge)
        judging.judges.pick(body.judge)
        with admission.admit(1):
            metrics.queue_admitted.set(admission.admitted)
            verdict = (await judging.judge_many([request]))[0]
        score = min(max(verdict.score or 0.0, 0.0), 1.0)
        return FactualConsistencyResponse(score=score, p_consistent=score, p_inconsistent=1.0 - score)

    @app.get("/healthz", response_model=HealthResponse, tags=["service"])
    async def healthz() -> HealthResponse:
        """The service is up and its judges are loaded."""
        return HealthResponse(judges=judging.judges.names, in_flight=admission.admitted,
                              queue_limit=admission.limit)

    @app.get("/metrics", response_class=Response, tags=["service"],
             responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}},
                              "description": "Prometheus text format."}})
    async def prometheus() -> Response:
        """Requests by route and status, latency histogram, errors, in flight (Prometheus text format)."""
        metrics.queue_admitted.set(admission.admitted)
        body, content_type = metrics.render()
        return Response(content=body, media_type=content_type)


def create_app(judges: JudgeSet, settings: ServeSettings, records: LiveRecords | None = None,
               on_verdict: Callable[[str, Example, JudgeResult], None] | None = None) -> FastAPI:
    """The service over ``judges`` (loaded already), with its limits, token, (optional) records folder and a
    callback given every verdict answered (``--otel``)."""
    metrics = ServiceMetrics(ROUTES)
    admission = Admission(settings.max_queue, settings.retry_after_s)
    judging = Judging(judges=judges, metrics=metrics, timeout_s=settings.timeout_s, records=records,
                      on_verdict=on_verdict)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        batchers = [j.batcher for j in judges.judges if j.batcher is not None]
        if judges.calls_llm:
            await asyncio.to_thread(import_llm_client)
        for batcher in batchers:
            batcher.start()
            if settings.warmup:
                await batcher.submit(WARMUP)
        try:
            yield
        finally:
            for batcher in batchers:
                await batcher.stop()
            if records is not None:
                records.close()

    app = FastAPI(title="groundjudge", summary="Is an answer grounded in its source documents?",
                  version="1", lifespan=lifespan, docs_url=None, redoc_url=None)
    _install_errors(app, admission)
    _add_routes(app, judging, admission, metrics)
    app.add_middleware(BodyCap, max_bytes=settings.max_body_bytes)
    if settings.token is not None:
        app.add_middleware(BearerToken, token=settings.token.get_secret_value())
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    app.state.judging, app.state.admission, app.state.metrics = judging, admission, metrics
    return app
