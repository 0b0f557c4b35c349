"""The labelling page of ``groundjudge label RUN``: one FastAPI app that serves the page and its JSON API over a run
folder's queue (``RUN/label_queue.jsonl``) and appends every label to ``RUN/labels.jsonl`` at once.

One writer: the app is the only process writing the labels file (``groundjudge label`` holds the run folder's
lock while it serves) and a lock inside it serialises the appends; each is flushed and fsynced before the answer
goes back, so a killed server loses no label it acknowledged, and a restarted one reads them all back.

Several people label through one server, each under a name (``?labeller=NAME``, default ``--labeller``). The first
``overlap`` items of the queue go to everybody (labelled twice or more: agreement between people); every later
item goes to one person: the first to label it. While someone has such an item open (for ``HOLD_S`` seconds
after they last opened it) it leaves the others' queues, so two people rarely label the same one. Everybody goes
in queue order, so the labelled items stay close to a prefix of the queue, which is what the estimates assume.

Judges' verdicts (and the stratum, which encodes them) are left out of an item until the asking labeller has
labelled it, unless ``show_judges``. Answers and documents go out as JSON strings; the page sets them as text.
"""

from __future__ import annotations

import hmac
import os
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from fastapi import Body, FastAPI, HTTPException, Query, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware

from groundjudge.judges.error_types import load_taxonomy
from groundjudge.labels.adaptive import current_batch, replan, replan_due
from groundjudge.labels.estimates import Estimates, estimate_run
from groundjudge.labels.queue import QUEUE_FILE, read_queue, write_queue
from groundjudge.labels.store import (LABELS_FILE, LabelRecord, LabelSpan, append_label, latest_labels,
                                      read_labels)
from groundjudge.labels.strata import judge_order, strata_of
from groundjudge.runs.records import find_records, read_records
from groundjudge.types import Verdict
from groundjudge.serve.label_schemas import (NAME_PATTERN, ErrorItem, ItemsOut, ItemView, LabelIn, LabelOut,
                                             LabelRefused, PageConfig, Problem, Progress, Refused, TaxonomyEntry,
                                             judge_view)

ASSETS = Path(__file__).resolve().parent / "assets"
"""label.html, label.js and label.css."""

HOLD_S = 600.0
"""How long an item past the overlap stays out of the others' queues after a labeller opened it."""

LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
"""Host headers always accepted (a page bound elsewhere adds its own host)."""

PAGE_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
               "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
"""Content-Security-Policy of every answer: nothing inline, nothing from elsewhere."""


class LabelBook:
    """The run's queue, answers, verdicts and labels, shared by every request (appends under one lock)."""

    def __init__(self, run_dir: str | Path, taxonomy: Sequence[str], overlap: int = 0):
        self.run_dir = Path(run_dir)
        self.records = read_records(find_records(self.run_dir))
        self.judges = judge_order(self.records)
        self.examples = {r.example.id: r.example for r in self.records.results}
        self.verdicts: dict[str, dict[str, Verdict]] = {}
        for record in self.records.results:
            self.verdicts.setdefault(record.example.id, {})[record.judge] = record.result.verdict
        self.queue = read_queue(self.run_dir)
        if not self.queue:
            raise ValueError(f"{self.run_dir / QUEUE_FILE}: no labelling queue (groundjudge label makes one)")
        unknown = [item.id for item in self.queue if item.id not in self.examples]
        if unknown:
            raise ValueError(f"{self.run_dir / QUEUE_FILE}: ids not in the run's records: {unknown[:5]}")
        self.position = {item.id: i for i, item in enumerate(self.queue)}
        self.taxonomy = list(taxonomy)
        self.overlap = max(0, overlap)
        self.path = self.run_dir / LABELS_FILE
        self.labels = read_labels(self.path, set(self.examples)) if self.path.exists() else []
        _end_with_newline(self.path)
        self.mine = {(r.id, r.labeller): r for r in self.labels}
        self.owner: dict[str, str] = {}
        for record in self.labels:
            self.owner.setdefault(record.id, record.labeller)
        self.held: dict[str, tuple[str, float]] = {}
        self.lock = threading.Lock()
        self._estimates: tuple[int, Estimates] | None = None
        self.replan()

    # --- the adaptive queue
    def replan(self) -> bool:
        """Re-plan an adaptive queue whose current batch is labelled (rewriting ``RUN/label_queue.jsonl``), keeping
        the items a labeller holds open; whether it did (:mod:`groundjudge.labels.adaptive`)."""
        with self.lock:
            labels = {i: r.label for i, r in latest_labels(self.labels).items()}
            if not replan_due(self.queue, labels):
                return False
            now = time.monotonic()
            pinned = [i for i, (_, since) in self.held.items() if now - since <= HOLD_S and i not in labels]
            self.queue = replan(self.queue, strata_of(self.records), self.judges, labels, pinned)
            write_queue(self.queue, self.run_dir)
            self.position = {item.id: i for i, item in enumerate(self.queue)}
            self._estimates = None
            return True

    # --- whose item is it
    def order(self, labeller: str) -> list[str]:
        """This labeller's queue now: the overlap, then the later items nobody else took or holds."""
        now = time.monotonic()
        out = []
        for i, item in enumerate(self.queue):
            owner = self.owner.get(item.id)
            holder, since = self.held.get(item.id, (labeller, now))
            free = owner is None and (holder == labeller or now - since > HOLD_S)
            if i < self.overlap or owner == labeller or free:
                out.append(item.id)
        return out

    def hold(self, item_id: str, labeller: str) -> None:
        """Keep a later item out of the others' queues while this labeller has it open."""
        with self.lock:
            holder, since = self.held.get(item_id, (labeller, 0.0))
            if self.position[item_id] >= self.overlap and item_id not in self.owner and (
                    holder == labeller or time.monotonic() - since > HOLD_S):
                self.held[item_id] = (labeller, time.monotonic())

    # --- what a labeller sees
    def item(self, item_id: str, labeller: str, show_judges: bool) -> ItemView:
        """One item for this labeller: the judges (and stratum) only once they labelled it, or when shown."""
        example = self.examples[item_id]
        mine = self.mine.get((item_id, labeller))
        reveal = show_judges or mine is not None
        verdicts = self.verdicts.get(item_id, {})
        judges = [judge_view(j, verdicts[j]) for j in self.judges if j in verdicts] if reveal else None
        position = self.position[item_id]
        return ItemView(id=item_id, position=position + 1, shared=position < self.overlap, question=example.question,
                        documents=list(example.context), answer=example.answer, mine=mine,
                        stratum=self.queue[position].stratum if reveal else None, judges=judges)

    def progress(self, labeller: str) -> Progress:
        """How far this labeller got in their queue, and how many items anybody labelled."""
        order = self.order(labeller)
        done = [i for i in order if (i, labeller) in self.mine]
        pending = [i for i in order if (i, labeller) not in self.mine]
        batch = current_batch(self.queue, {r.id for r in self.labels})
        planned = next((item.seen for item in self.queue if item.batch == batch), None)
        return Progress(labeller=labeller, labelled=len(done), queue_size=len(order), order=order, done=done,
                        next=pending[0] if pending else None,
                        labelled_by_anyone=len({r.id for r in self.labels if r.id in self.position}),
                        queue_total=len(self.queue), batch=None if batch is None else batch + 1,
                        planned_from=planned)

    # --- writing
    def check(self, body: LabelIn) -> LabelIn:
        """The label with its error types and spans checked against the taxonomy and the answer (LabelRefused)."""
        if body.id not in self.position:
            raise LabelRefused(["id"], f"unknown id {body.id!r}: not in this run's labelling queue")
        unknown = [t for t in body.error_types if t not in self.taxonomy]
        if unknown:
            raise LabelRefused(["error_types"], f"unknown error type {unknown[0]!r} (the taxonomy has: "
                                                f"{', '.join(self.taxonomy)})")
        answer = self.examples[body.id].answer
        spans = []
        for n, span in enumerate(body.spans):
            if not span.start < span.end <= len(answer):
                raise LabelRefused(["spans", n], f"offsets {span.start}-{span.end} are not a span of the answer "
                                                 f"({len(answer)} characters)")
            text = answer[span.start:span.end]
            if span.text and span.text != text:
                raise LabelRefused(["spans", n, "text"], f"{span.text!r} is not the answer's text at "
                                                         f"{span.start}-{span.end} ({text!r})")
            spans.append(LabelSpan(start=span.start, end=span.end, text=text))
        spans.sort(key=lambda s: (s.start, s.end))
        types = list(dict.fromkeys(body.error_types))
        return body.model_copy(update={"spans": spans, "error_types": types})

    def add(self, body: LabelIn, labeller: str) -> LabelRecord:
        """Check the label, append it to the labels file (synced) and take it into account."""
        body = self.check(body)
        record = LabelRecord(id=body.id, label=body.label, error_types=body.error_types, spans=body.spans,
                             note=body.note, labeller=labeller)
        with self.lock:
            append_label(self.path, record)
            self.labels.append(record)
            self.mine[(record.id, labeller)] = record
            self.owner.setdefault(record.id, labeller)
            self.held.pop(record.id, None)
        return record

    def estimates(self) -> Estimates:
        """What the labels so far prove (recomputed only when a label was added)."""
        with self.lock:
            count, labels = len(self.labels), list(self.labels)
        cached = self._estimates
        if cached is None or cached[0] != count:
            cached = (count, estimate_run(self.records, latest_labels(labels), queue=self.queue))
            self._estimates = cached
        return cached[1]


def _end_with_newline(path: Path) -> None:
    """End a labels file whose last line has no newline (edited by hand) with one, so an append starts a line."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as handle:
        handle.seek(-1, 2)
        if handle.read(1) != b"\n":
            handle.write(b"\n")
            handle.flush()
            os.fsync(handle.fileno())


PROBLEMS = {401: {"model": Problem, "description": "A token is required (a page started with --token-env)."},
            422: {"model": Refused, "description": "A bad field or query parameter, each named by ``loc``."}}
"""The errors every API route documents."""


def _repeated_query(request: Request) -> list[str]:
    """The query parameters given more than once (which one would count is unclear: refused)."""
    names = [name for name, _ in request.query_params.multi_items()]
    return sorted({name for name in names if names.count(name) > 1})


def _token_given(request: Request) -> str:
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.query_params.get("token", "")


def _taxonomy_entries(path: str | None) -> list[TaxonomyEntry]:
    entries = load_taxonomy(path)
    return [TaxonomyEntry(key=str(i + 1) if i < 9 else "", name=e.name, definition=e.definition)
            for i, e in enumerate(entries)]


def label_app(run_dir: str | Path, labeller: str = "anonymous", *, show_judges: bool = False, overlap: int = 0,
              taxonomy: str | None = None, token: str | None = None,
              hosts: Sequence[str] = ()) -> FastAPI:
    """The labelling page's app over a run folder that has a queue (see the module's description); ``token``: a
    secret every request but the static assets must carry; ``hosts``: Host headers accepted besides 127.0.0.1
    and localhost (``*``: any)."""
    if not re.fullmatch(NAME_PATTERN, labeller):
        raise ValueError(f"labeller {labeller!r}: ASCII letters, digits, . @ + - _ or spaces (64 at most)")
    entries = _taxonomy_entries(taxonomy)
    book = LabelBook(run_dir, [e.name for e in entries], overlap)
    app = FastAPI(title="groundjudge labelling page", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.book = book

    def who(name: str | None) -> str:
        return name or labeller

    @app.middleware("http")
    async def guard(request: Request, call_next):
        if token and not request.url.path.startswith("/assets/") and not hmac.compare_digest(
                _token_given(request).encode(), token.encode()):
            response = JSONResponse({"detail": "a token is required: Authorization: Bearer <token>, or ?token= "
                                               "in the page's address"}, status_code=401)
        elif request.method == "POST" and request.headers.get("content-type", "").split(";")[0] != "application/json":
            response = JSONResponse({"detail": "send JSON (Content-Type: application/json)"}, status_code=415)
        elif repeated := _repeated_query(request):
            response = JSONResponse(Refused(detail=[ErrorItem(loc=["query", name], msg="given more than once",
                                                              type="value_error") for name in repeated]).model_dump(),
                                    status_code=422)
        else:
            response = await call_next(request)
        response.headers["Content-Security-Policy"] = PAGE_POLICY
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        """422 naming each bad field, the input not echoed (it may not even be writable as JSON: a lone
        surrogate)."""
        detail = [ErrorItem(loc=list(e.get("loc", ())), msg=str(e.get("msg", "")), type=str(e.get("type", "")))
                  for e in exc.errors()]
        return JSONResponse(Refused(detail=detail).model_dump(), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        """A body that is not text (not UTF-8) is bad JSON like any other: a 422 at ``body``, not FastAPI's 400."""
        if exc.status_code == 400:
            return JSONResponse(Refused(detail=[ErrorItem(loc=["body"], msg=str(exc.detail), type="json_invalid")]
                                        ).model_dump(), status_code=422)
        return await http_exception_handler(request, exc)

    app.add_middleware(TrustedHostMiddleware, allowed_hosts=["*"] if "*" in hosts else [*LOCAL_HOSTS, *hosts])
    app.mount("/assets", StaticFiles(directory=ASSETS), name="assets")
    name_query = Query(default=None, pattern=NAME_PATTERN)

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        """The labelling page (its data comes from the API)."""
        return FileResponse(ASSETS / "label.html", media_type="text/html")

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        """No icon (an empty answer, so the browser logs no error)."""
        return Response(status_code=204)

    @app.get("/api/config", responses=PROBLEMS)
    def config(labeller: str | None = name_query) -> PageConfig:
        """The run, the labeller, the judges' names and the error types the page offers."""
        return PageConfig(run=book.run_dir.name, labeller=who(labeller), show_judges=show_judges,
                          overlap=book.overlap, judges=book.judges, taxonomy=entries)

    @app.get("/api/items", responses=PROBLEMS)
    def items(labeller: str | None = name_query) -> ItemsOut:
        """This labeller's queue with each item's text (verdicts only where they labelled, unless shown)."""
        name = who(labeller)
        return ItemsOut(labeller=name, items=[book.item(i, name, show_judges) for i in book.order(name)])

    @app.get("/api/items/{item_id:path}", responses={**PROBLEMS, 404: {"model": Problem,
                                                                       "description": "No such item in the queue."}})
    def item(item_id: str, labeller: str | None = name_query) -> ItemView:
        """One item; opening a later item keeps it out of the others' queues for a while."""
        if item_id not in book.position:
            raise HTTPException(404, f"unknown id {item_id!r}: not in this run's labelling queue")
        book.hold(item_id, who(labeller))
        return book.item(item_id, who(labeller), show_judges)

    @app.post("/api/labels", responses={**PROBLEMS, 415: {"model": Problem, "description": "The body is not JSON."}})
    def post_label(body: LabelIn = Body(), labeller: str | None = name_query) -> LabelOut:
        """Append a label (422 with the reason, and nothing written, when it is not valid); the label that completes
        a batch of an adaptive queue re-plans the rest (``replanned``)."""
        name = body.labeller or who(labeller)
        try:
            record = book.add(body, name)
        except LabelRefused as err:
            raise HTTPException(422, err.refused()["detail"]) from None
        replanned = book.replan()
        return LabelOut(label=record, item=book.item(record.id, name, show_judges), progress=book.progress(name),
                        replanned=replanned)

    @app.post("/api/replan", responses={**PROBLEMS, 415: {"model": Problem, "description": "Not sent as JSON."}})
    def post_replan(labeller: str | None = name_query) -> Progress:
        """Re-plan an adaptive queue from the labels so far if its current batch is labelled (a label posted does
        this by itself; this is for labels that came another way); the labeller's progress after it."""
        book.replan()
        return book.progress(who(labeller))

    @app.get("/api/progress", responses=PROBLEMS)
    def progress(labeller: str | None = name_query) -> Progress:
        """How far this labeller got."""
        return book.progress(who(labeller))

    @app.get("/api/estimates", responses=PROBLEMS)
    def estimates() -> Estimates:
        """Each judge's figures and every pair's difference from the labels so far (95% intervals)."""
        return book.estimates()

    return app
