"""The groundjudge pytest plugin (entry point ``pytest11``): ``assert_grounded``, the ``groundjudge`` fixture and
marker, a table of verdicts in the terminal summary, ``--groundjudge-record DIR`` and ``--groundjudge-replay DIR``.

Inert until used: this module imports only pytest and the standard library; judges, models, litellm and pydantic
load on a test's first check. Verdicts travel on the test's reports (``user_properties``), so under pytest-xdist
the controller gets every worker's, prints the one table and writes the record folder (workers write nothing).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from groundjudge.testing import gate_active

PROPERTY = "groundjudge"
"""The ``user_properties`` name a verdict (its JSON) travels under."""

_STATE = pytest.StashKey["GateState"]()
_SCOPE = pytest.StashKey[Any]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """The gate's command-line options and ini setting."""
    group = parser.getgroup("groundjudge", "groundedness gate (groundjudge)")
    group.addoption("--groundjudge-record", metavar="DIR", default=None,
                    help="write the session's verdicts as a run folder (records.jsonl + summary.json)")
    group.addoption("--groundjudge-otel", action="store_true", default=False,
                    help="export every verdict as an OpenTelemetry gen_ai.evaluation.result event over OTLP "
                         "(OTEL_EXPORTER_OTLP_* variables; needs the otel extra)")
    group.addoption("--groundjudge-replay", metavar="DIR", default=None,
                    help="answer LLM judges only from the calls recorded in DIR (no network); local judges rerun")
    parser.addini("groundjudge_judge", "the judge spec for checks that name none (e.g. quip:n=21)", default="")


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker and the session's (empty, lazy) gate state."""
    config.addinivalue_line("markers", "groundjudge(judge=None, repeats=None, pass_rate=0.8, min_score=None): "
                                       "how assert_grounded judges in this test (judge N times, pass on a share)")
    replay = config.getoption("groundjudge_replay")
    if replay and not (Path(replay) / "records.jsonl").exists() and not (Path(replay) / "records.jsonl.gz").exists():
        raise pytest.UsageError(f"--groundjudge-replay {replay}: no records.jsonl there")
    state = config.stash[_STATE] = GateState(config)
    config.pluginmanager.register(state, "groundjudge-gate")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the session's judging loop, if one was started."""
    state = config.stash.get(_STATE, None)
    if state is not None:
        state.close()
        config.pluginmanager.unregister(state)


class GateState:
    """One session's gate: its judges (made on first check), the verdicts its tests reported, the record folder."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.replay: str | None = config.getoption("groundjudge_replay")
        record = config.getoption("groundjudge_record")
        self.record: Path | None = Path(record).resolve() if record else None
        self.controller = not hasattr(config, "workerinput")
        self.reported: list[str] = []
        """Every verdict (JSON) the tests reported, in the order they came."""
        self.recorded: Path | None = None
        self.record_error: str | None = None
        self.otel = bool(config.getoption("groundjudge_otel"))
        self.exported: int | None = None
        self._session = None

    def session(self):
        """The judging session (judges built once per spec and settings, one LLM service)."""
        if self._session is None:
            from groundjudge.testing.gate_session import GateSession

            self._session = GateSession(replay=self.replay, default_judge=self.config.getini("groundjudge_judge")
                                        or None)
        return self._session

    def scope_for(self, item: pytest.Item):
        """The test's scope (made on its first check): marker settings, and its verdicts onto its reports."""
        scope = item.stash.get(_SCOPE, None)
        if scope is None:
            from groundjudge.testing.assertions import GateScope
            from groundjudge.testing.gate_model import GateSettings

            def sink(verdict) -> None:
                item.user_properties.append((PROPERTY, verdict.model_dump_json()))

            scope = item.stash[_SCOPE] = GateScope(self.session(), item.nodeid,
                                                   GateSettings(**marker_settings(item)), sink)
        return scope

    def verdicts(self) -> list:
        """The reported verdicts, typed."""
        from groundjudge.testing.gate_model import GateVerdict

        return [GateVerdict.model_validate_json(text) for text in self.reported]

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Collect the verdicts a test reported (its teardown report carries them all, from a worker too)."""
        if report.when == "teardown":
            self.reported.extend(value for name, value in report.user_properties if name == PROPERTY)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """The controller writes the record folder and exports the events (workers never do)."""
        if self.controller and self.otel and self.reported:
            self.export_otel()
        if not self.controller or self.record is None or not self.reported:
            return
        from groundjudge.testing.gate_record import write_session

        try:
            self.recorded = write_session(self.record, self.verdicts(),
                                          ("pytest", *session.config.invocation_params.args))
        except Exception as err:  # noqa: BLE001 - shown in the summary; the tests' outcomes stand
            self.record_error = f"{type(err).__name__}: {err}"

    def pytest_terminal_summary(self, terminalreporter) -> None:
        """The table of every verdict of the session (with -n N: every worker's), and where they were recorded."""
        if not self.reported:
            return
        from groundjudge.testing.gate_text import render_table, totals

        verdicts = self.verdicts()
        title = "groundjudge verdicts" + (f" (replayed from {self.replay})" if self.replay else "")
        terminalreporter.write_sep("=", title)
        for line in render_table(verdicts):
            terminalreporter.write_line(line)
        terminalreporter.write_line(totals(verdicts))
        if self.recorded is not None:
            terminalreporter.write_line(f"recorded {len(verdicts)} verdicts in {self.recorded}")
        if self.exported is not None:
            terminalreporter.write_line(f"exported {self.exported} gen_ai.evaluation.result events over OTLP")
        if self.record_error is not None:
            terminalreporter.write_line(f"groundjudge: could not record the verdicts: {self.record_error}", red=True)

    def export_otel(self) -> None:
        """``--groundjudge-otel``: every verdict of the session as a gen_ai.evaluation.result event, over OTLP."""
        from groundjudge.integrations.otel import emit
        from groundjudge.integrations.otel_export import otlp_logger_provider

        try:
            provider = otlp_logger_provider()
        except Exception as err:  # noqa: BLE001 - shown in the summary; the tests' outcomes stand
            self.record_error = f"--groundjudge-otel: {err}"
            return
        try:
            for verdict in self.verdicts():
                emit(verdict, logger_provider=provider)
            self.exported = len(self.reported)
        finally:
            provider.shutdown()

    def close(self) -> None:
        """Stop the judging loop."""
        if self._session is not None:
            self._session.close()


def marker_settings(item: pytest.Item) -> dict[str, Any]:
    """The test's ``groundjudge`` marker keywords, the closest marker's over those of its class and module."""
    values: dict[str, Any] = {}
    for marker in reversed(list(item.iter_markers("groundjudge"))):
        if marker.args:
            values["judge"] = marker.args[0]
        values.update(marker.kwargs)
    return values


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """While a test runs, ``assert_grounded`` finds its scope."""
    state = item.config.stash.get(_STATE, None)
    if state is None:
        return (yield)

    def factory():
        return state.scope_for(item)

    gate_active.push(factory)
    try:
        return (yield)
    finally:
        gate_active.pop(factory)


@pytest.fixture
def groundjudge(request: pytest.FixtureRequest):
    """The test's gate: ``groundjudge.assert_grounded(answer, context, ...)`` and ``groundjudge.judge(...)`` with
    the test's ``@pytest.mark.groundjudge`` settings; verdicts go into the session's table and record."""
    return request.config.stash[_STATE].scope_for(request.node)


