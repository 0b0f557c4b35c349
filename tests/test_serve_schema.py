"""Schemathesis against ``groundjudge serve``'s own OpenAPI schema, on a real uvicorn process: generated requests
(valid ones, then invalid ones) find no 5xx, no response that breaks the schema, no undocumented status or
content type, and invalid data is always refused. Bounded: at most 25 valid and 15 invalid examples per
operation, derandomised."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import (content_type_conformance, negative_data_rejection,  # noqa: E402
                                               response_headers_conformance, response_schema_conformance,
                                               status_code_conformance)

from groundjudge.serve.process import ServeProcess  # noqa: E402

CONFORMANCE = [not_a_server_error, response_schema_conformance, status_code_conformance, content_type_conformance,
               response_headers_conformance]
"""The checks every generated request's answer passes."""


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    """quip (default) and cosine, recording, with a small body cap so the cap is met too."""
    folder = tmp_path_factory.mktemp("serve-schema")
    with ServeProcess(["--judge", "quip", "--judge", "cosine", "--record", str(folder / "run"),
                       "--max-body-bytes", "200000"], log=folder / "serve.log") as served:
        yield served


def load_schema(service: ServeProcess, mode: GenerationMode, max_examples: int):
    """The service's schema, generating ``mode`` data, derandomised."""
    schema = schemathesis.openapi.from_url(f"{service.url}/openapi.json")
    schema.config.generation.update(modes=[mode], max_examples=max_examples, deterministic=True)
    return schema


OPERATIONS = [("POST", "/v1/judge"), ("POST", "/v1/judge/batch"), ("POST", "/v1/evaluate_factual_consistency"),
              ("GET", "/healthz"), ("GET", "/metrics")]
"""Every operation of the schema (checked below, so a new route is not left untested)."""


@pytest.mark.slow
def test_the_schema_has_every_operation(service):
    schema = schemathesis.openapi.from_url(f"{service.url}/openapi.json")
    found = {(result.ok().method.upper(), result.ok().path) for result in schema.get_all_operations()}
    assert found == set(OPERATIONS)


def run_cases(service: ServeProcess, method: str, path: str, mode: GenerationMode, max_examples: int,
              checks: list) -> None:
    """Generate up to ``max_examples`` requests of ``mode`` for one operation and validate each answer."""
    schema = load_schema(service, mode, max_examples)
    strategy = schema[path][method].as_strategy(generation_mode=mode)

    @settings(max_examples=max_examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=strategy)
    def check(case) -> None:
        case.call_and_validate(checks=checks, timeout=60)

    check()


@pytest.mark.slow
@pytest.mark.parametrize("method, path", OPERATIONS)
def test_valid_requests_conform(service, method, path):
    run_cases(service, method, path, GenerationMode.POSITIVE, 25, CONFORMANCE)


@pytest.mark.parametrize("method, path", [op for op in OPERATIONS if op[0] == "POST"])
def test_invalid_requests_are_refused_and_conform(service, method, path):
    run_cases(service, method, path, GenerationMode.NEGATIVE, 15, [*CONFORMANCE, negative_data_rejection])
