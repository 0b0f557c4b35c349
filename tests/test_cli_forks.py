"""The tests' ``groundjudge`` runner (tests/cli_forks.py): a command forked from the server that imported it once
answers as the same command in a fresh interpreter, a timeout kills the command's whole process group, and an
environment that a library could read at import time gets a fresh interpreter. The ``groundjudge`` that shell
scripts find on PATH (tests/cli_relay.py) answers as the installed script does."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_forks import FRESH_VARIABLE, ForkedCli, _unforkable_variables
from cli_relay import CliRelay
from conftest import ROOT, write_jsonl

from groundjudge.runs.records import read_records

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def forks():
    """A fork server of this module's own, started with the environment the module's tests run in (the worker's
    shared one may have been started before another test module changed a variable that keeps commands fresh)."""
    server = ForkedCli({**os.environ, "COLUMNS": "200"})
    yield server
    server.close()


@pytest.fixture(autouse=True)
def own_backend_checks(tmp_path, monkeypatch):
    """A dtype-check cache of this test's own: ``groundjudge judges`` lists the cached checks, and the suite's shared
    cache gains one whenever another worker loads a new model, which would change the listing between two runs of
    the command that are compared."""
    monkeypatch.setenv("GROUNDJUDGE_BACKEND_CACHE", str(tmp_path / "backend-checks"))


def _run(forks: ForkedCli, *args: str, fresh: bool = False, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", **({FRESH_VARIABLE: "1"} if fresh else {})}
    return forks.run([sys.executable, "-m", "groundjudge.cli"], list(args), cwd=ROOT, env=env, timeout=timeout)


def test_a_forked_command_answers_as_a_fresh_interpreter_does(tmp_path, forks):
    rows = [{"id": "a", "context": "Rent is due on day 1.", "answer": "Rent is due on day 1.", "label": "grounded"},
            {"id": "b", "context": "Rent is due on day 1.", "answer": "Rent is due on day 9.", "label": "ungrounded"}]
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "context": "c"}\n', encoding="utf-8")
    forked_before = forks.forked
    for args in (("judges",), ("run", str(bad), "--judge", "quip", "--out", str(tmp_path / "bad-run"), "--quiet"),
                 ("prompts", "--no-such-flag")):
        forked, fresh = _run(forks, *args), _run(forks, *args, fresh=True)
        assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)
    assert forks.forked == forked_before + 3   # and the fresh ones were not forked
    # a run writes the same records and summary either way (timings apart)
    first = _run(forks, "run", str(data), "--judge", "quip", "--out", str(tmp_path / "forked"), "--quiet",
                 "--dev-fraction", "0")
    second = _run(forks, "run", str(data), "--judge", "quip", "--out", str(tmp_path / "fresh"), "--quiet",
                  "--dev-fraction", "0", fresh=True)
    assert first.returncode == second.returncode == 0
    verdicts = [[(r.judge, r.example.id, r.result.verdict.label, r.result.verdict.score)
                 for r in read_records(tmp_path / name / "records.jsonl").results] for name in ("forked", "fresh")]
    assert verdicts[0] == verdicts[1] and len(verdicts[0]) == 2


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_a_timeout_kills_the_commands_process_group_as_subprocess_run_would(forks):
    port = _free_port()
    before = forks.forked
    with pytest.raises(subprocess.TimeoutExpired) as expired:
        _run(forks, "serve", "--judge", "quip", "--port", str(port), timeout=20)
    assert forks.forked == before + 1
    assert expired.value.timeout == 20 and "serve" in expired.value.cmd
    for _ in range(50):   # the service went with its process group
        if not _listening(port):
            break
        time.sleep(0.1)
    assert not _listening(port)
    assert _run(forks, "judges").returncode == 0 and forks.forked == before + 2   # the next one is forked as before


def test_only_call_time_variables_may_differ_for_a_fork():
    server = {"PATH": "/bin", "HF_HUB_OFFLINE": "1", "KMP_INIT_AT_FORK": "FALSE"}
    added = {"KMP_INIT_AT_FORK"}
    assert _unforkable_variables(server, added, {"PATH": "/bin", "HF_HUB_OFFLINE": "1"}) == set()
    assert _unforkable_variables(server, added, {**server, "GROUNDJUDGE_CACHE_DIR": "/x", "OPENAI_API_KEY": "k",
                                                 "PYTEST_CURRENT_TEST": "t", "COLUMNS": "80"}) == set()
    assert _unforkable_variables(server, added, {**server, "HF_HUB_OFFLINE": "0"}) == {"HF_HUB_OFFLINE"}
    assert _unforkable_variables(server, added, {**server, "OMP_NUM_THREADS": "1"}) == {"OMP_NUM_THREADS"}
    assert _unforkable_variables(server, added, {"PATH": "/bin"}) == {"HF_HUB_OFFLINE"}   # a variable removed
    assert _unforkable_variables(server, added, {**server, "KMP_INIT_AT_FORK": "TRUE"}) == {"KMP_INIT_AT_FORK"}


def test_an_import_time_variable_gets_a_fresh_interpreter(monkeypatch, forks):
    assert _run(forks, "judges").returncode == 0
    before = forks.forked
    monkeypatch.setenv("TRANSFORMERS_VERBOSITY", "error")
    assert _run(forks, "judges").returncode == 0
    assert forks.forked == before
    assert forks.fresh.get("variables differ: TRANSFORMERS_VERBOSITY") == 1   # counted by why, for the report


def _figures_out(text: str) -> str:
    return re.sub(r"\d+(\.\d+)?", "#", text)


def test_a_relayed_command_answers_as_the_installed_script(tmp_path, forks):
    row = {"id": "a", "context": "Rent is due on day 1.", "answer": "Rent is due on day 9.", "label": "ungrounded"}
    for side in ("installed", "relayed"):
        (tmp_path / side).mkdir()
        write_jsonl(tmp_path / side / "data.jsonl", [row])
    script = ("groundjudge judges; groundjudge run data.jsonl --judge quip --out run --quiet --dev-fraction 0; "
              "groundjudge run missing.jsonl --judge quip --out other || echo exit $?")
    env = {**os.environ, "COLUMNS": "200", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    installed = subprocess.run(["bash", "-c", script], cwd=tmp_path / "installed", env=env, capture_output=True,
                               text=True, timeout=600, stdin=subprocess.DEVNULL)
    before = forks.forked
    with CliRelay(forks) as relay:
        relayed = subprocess.run(["bash", "-c", script], cwd=tmp_path / "relayed", capture_output=True, text=True,
                                 env={**env, "PATH": f"{relay.bin_dir}{os.pathsep}{env['PATH']}"}, timeout=600,
                                 stdin=subprocess.DEVNULL)
        assert relay.relayed == 3 and forks.forked == before + 3
    assert relayed.returncode == installed.returncode == 0
    assert _figures_out(relayed.stdout) == _figures_out(installed.stdout)   # the run's table gives its times
    assert "exit 2" in relayed.stdout and relayed.stderr == installed.stderr
    verdicts = [[(r.judge, r.example.id, r.result.verdict.label, r.result.verdict.score)
                 for r in read_records(tmp_path / side / "run" / "records.jsonl").results]
                for side in ("relayed", "installed")]
    assert verdicts[0] == verdicts[1] and len(verdicts[0]) == 1
