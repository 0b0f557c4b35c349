"""Schemathesis against the labelling page's API (``groundjudge label RUN``), on a real server process: requests
generated from the app's own OpenAPI schema (valid ones, then invalid ones; labels name the queue's items) find
no 5xx, no response that breaks the schema, no undocumented status or content type, and invalid data is always
refused. Labels that the server refuses write nothing: ``labels.jsonl`` then holds exactly the labels it answered
200 to. Bounded: at most 25 valid and 15 invalid examples per operation, derandomised (cases driven through
hypothesis, as in test_serve_schema: schemathesis' pytest fixture mode is broken under pytest 9)."""

from __future__ import annotations

import httpx
import pytest

pytest.importorskip("fastapi")
schemathesis = pytest.importorskip("schemathesis")

from conftest import cli, rent_rows, write_jsonl  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import (content_type_conformance, negative_data_rejection,  # noqa: E402
                                               response_headers_conformance, response_schema_conformance,
                                               status_code_conformance)
from test_label_page import LabelServer  # noqa: E402

from groundjudge.judges.error_types import load_taxonomy  # noqa: E402
from groundjudge.labels.queue import queue_for_run, read_queue, write_queue  # noqa: E402
from groundjudge.labels.store import read_labels  # noqa: E402
from groundjudge.runs.records import read_records  # noqa: E402
from groundjudge.serve.label_app import label_app  # noqa: E402

CONFORMANCE = [not_a_server_error, response_schema_conformance, status_code_conformance, content_type_conformance,
               response_headers_conformance]
"""The checks every generated request's answer passes."""

OPERATIONS = [("GET", "/api/config"), ("GET", "/api/items"), ("GET", "/api/items/{item_id}"),
              ("POST", "/api/labels"), ("GET", "/api/progress"), ("GET", "/api/estimates"), ("POST", "/api/replan")]
"""Every operation of the schema (checked below, so a new route is not left untested)."""


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """A run of two quip judges with its queue, served by ``groundjudge label``; yields (server, schema dict,
    accepted labels (filled by the tests))."""
    folder = tmp_path_factory.mktemp("label-schema")
    data = write_jsonl(folder / "data.jsonl", rent_rows(3))
    cli("run", str(data), "--judge", "quip:n=21,threshold=0.5", "--judge", "quip:n=8,threshold=0.7",
        "--out", str(folder / "run"), "--quiet", "--dev-fraction", "0")
    run = folder / "run"
    write_queue(queue_for_run(read_records(run / "records.jsonl")), run)
    schema = label_app(run).openapi()
    # generated labels name real items and error types (else nearly all would be refused as unknown and the
    # writing path go untested); anything else is still generated, and refused with a 422
    fields = schema["components"]["schemas"]["LabelIn"]["properties"]
    fields["id"] = {"type": "string", "enum": [item.id for item in read_queue(run)]}
    fields["error_types"]["items"] = {"type": "string", "enum": [entry.name for entry in load_taxonomy(None)]}
    server = LabelServer(run, "--labeller", "alice").start()
    try:
        yield server, schema, []
    finally:
        server.stop()


def run_cases(page, method: str, path: str, mode: GenerationMode, max_examples: int, checks: list) -> None:
    """Generate up to ``max_examples`` requests of ``mode`` for one operation and validate each answer; the
    labels answered 200 are kept in the fixture's list."""
    server, raw, accepted = page
    schema = schemathesis.openapi.from_dict(raw)
    schema.config.update(base_url=server.base)
    schema.config.generation.update(modes=[mode], max_examples=max_examples, deterministic=True)
    strategy = schema[path][method].as_strategy(generation_mode=mode)

    @settings(max_examples=max_examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=strategy)
    def check(case) -> None:
        response = case.call_and_validate(checks=checks, timeout=60)
        if path == "/api/labels" and response.status_code == 200:
            accepted.append(response.json()["label"]["id"])

    check()


@pytest.mark.slow
def test_the_schema_has_every_operation(page):
    schema = schemathesis.openapi.from_dict(page[1])
    found = {(result.ok().method.upper(), result.ok().path) for result in schema.get_all_operations()}
    assert found == set(OPERATIONS)


@pytest.mark.slow
@pytest.mark.parametrize("method, path", OPERATIONS)
def test_valid_requests_conform(page, method, path):
    run_cases(page, method, path, GenerationMode.POSITIVE, 25, CONFORMANCE)


@pytest.mark.parametrize("method, path", [op for op in OPERATIONS if op[1] != "/api/estimates"])   # no inputs
def test_invalid_requests_are_refused_and_conform(page, method, path):
    run_cases(page, method, path, GenerationMode.NEGATIVE, 15, [*CONFORMANCE, negative_data_rejection])


def test_what_schemathesis_found_is_refused_with_where_it_is(page):
    """A lone surrogate in the note (refused, but its 422 echoed the input, which JSON cannot encode: a 500), a
    query parameter given twice (which one counted was unclear), an unknown id (its 422 broke the documented
    shape), a body that is not UTF-8 (FastAPI's undocumented 400): each a 422 naming where it is."""
    server, _, accepted = page
    item = read_queue(server.run)[0].id
    cases = [(dict(content=b'{"id": "%s", "label": "grounded", "note": "\\ud800"}' % item.encode()),
              ["body", "note"]),
             (dict(json={"id": item, "label": "grounded"}, params=[("labeller", "ann"), ("labeller", "bob")]),
              ["query", "labeller"]),
             (dict(json={"id": "no-such-id", "label": "grounded"}), ["body", "id"]),
             (dict(content=b"QI)k\xff"), ["body"])]
    for request, loc in cases:
        response = httpx.post(f"{server.base}/api/labels", headers={"Content-Type": "application/json"}, timeout=30,
                              **request)
        assert response.status_code == 422, response.text
        assert response.json()["detail"][0]["loc"] == loc
    assert httpx.get(f"{server.base}/api/items/no-such-id").json() == {
        "detail": "unknown id 'no-such-id': not in this run's labelling queue"}


@pytest.mark.slow   # reads what the (slow) valid requests above were accepted
def test_only_the_accepted_labels_were_written(page):
    server, _, accepted = page
    labels = server.run / "labels.jsonl"
    written = [r.id for r in read_labels(labels)] if labels.exists() else []
    assert accepted and written == accepted
