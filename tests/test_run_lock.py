"""Runs that cannot collide: one writer per run folder, and SIGINT / SIGTERM that stop a run cleanly.

Real `groundjudge run` subprocesses judge against the scripted server, whose gate answers the first few requests
and holds the rest until the test opens it, so that a run is surely still going (with a known number of results
written) when a second one starts or a signal arrives. Every wait is bounded; no timing assertions.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import ROOT, cli, rent_rows, write_jsonl

from groundjudge.runs.interrupts import RunInterrupted, interrupts_deferred, interrupts_raised
from groundjudge.runs.lock import LOCK_FILE, RunLock, RunLockError
from groundjudge.runs.records import RecordWriter, read_records
from groundjudge.runs.runner import JudgeTask, run_judges
from groundjudge.testing.oracle import oracle_responder
from groundjudge.testing.scripted_server import Reply, Request
from groundjudge.types import Example, JudgeResult, ResultRecord, Verdict

N_ROWS = 12
"""Examples judged (6 groups of a grounded and an altered answer)."""

ANSWERED = 3
"""Requests the gate answers before it holds the rest: the results a held run has written."""


class Gate:
    """A responder that answers the first ``answered`` requests and holds later ones until ``open`` is set
    (60 s at most, so that no server thread outlives a failed test by much)."""

    def __init__(self, answered: int):
        self.answered = answered
        self.seen = 0
        self.open = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, request: Request) -> Reply:
        with self._lock:
            self.seen += 1
            held = self.seen > self.answered
        if held:
            self.open.wait(60)
        return oracle_responder(request)


def start_run(data: Path, out: Path, spec: str, concurrency: int, dev_fraction: float = 0) -> subprocess.Popen:
    """`groundjudge run` in the background, without the call cache (so that it really waits on the server)."""
    return subprocess.Popen([sys.executable, "-m", "groundjudge.cli", "run", str(data), "--judge", spec,
                             "--concurrency", str(concurrency), "--dev-fraction", str(dev_fraction), "--no-cache",
                             "--quiet", "--out", str(out)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "200"})


def wait_until_held(out: Path, proc: subprocess.Popen, limit_s: float = 60, name: str = "records.jsonl",
                    results: int = ANSWERED) -> None:
    """Poll (bounded) until the run holds its lock and ``name`` has its header and ``results`` results."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        records = out / name
        lines = records.read_text().count("\n") if records.exists() else 0
        if (out / LOCK_FILE).exists() and lines >= 1 + results:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"the run did not write {ANSWERED} results in {limit_s} s")


def results_once_each(out: Path) -> Counter:
    """(judge, example) -> how many results records.jsonl holds for it."""
    return Counter((r.judge, r.example.id) for r in read_records(out / "records.jsonl").results)


@pytest.fixture
def held_run(request, tmp_path, llm_server):
    """(data, out, spec, process, gate): a direct-judge run holding its folder, waiting on the gate."""
    gate = Gate(ANSWERED)
    llm_server.set_responder(gate)
    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(N_ROWS // 2))
    spec = f"direct:model=openai/gpt-4o-mini,api_base={llm_server.openai_base}"
    out = tmp_path / "run"
    proc = start_run(data, out, spec, concurrency=getattr(request, "param", 1))
    try:
        wait_until_held(out, proc)
        yield data, out, spec, proc, gate
    finally:
        gate.open.set()
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


@pytest.mark.slow
def test_a_second_writer_stops_at_once_naming_the_holder(held_run):
    data, out, spec, proc, gate = held_run
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    second = cli("run", str(data), "--judge", spec, "--dev-fraction", "0", "--out", str(out), "--resume", "--quiet",
                 check=False, timeout=120)
    assert second.returncode == 2, second.stderr
    message = second.stderr.strip()
    assert message.count("\n") == 0 and "Traceback" not in message
    assert str(out) in message and f"pid {proc.pid}" in message and socket.gethostname() in message
    assert "since 20" in message  # when the holder started
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before  # nothing written, lock kept
    assert json.loads((out / LOCK_FILE).read_text())["pid"] == proc.pid

    gate.open.set()  # the holder goes on undisturbed and finishes the run
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert not (out / LOCK_FILE).exists()
    counts = results_once_each(out)
    assert len(counts) == N_ROWS and set(counts.values()) == {1}


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "held_run"), [(signal.SIGTERM, 1), (signal.SIGINT, 4)],
                         ids=["SIGTERM-one-in-flight", "SIGINT-four-in-flight"], indirect=["held_run"])
def test_a_signal_keeps_the_records_releases_the_lock_and_prints_the_resume_command(held_run, sig):
    data, out, spec, proc, gate = held_run
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, stderr
    assert "Traceback" not in stderr and "exception" not in stderr.lower(), stderr
    assert signal.Signals(sig).name in stderr and "every verdict written so far is kept" in stderr
    assert not (out / LOCK_FILE).exists()
    assert (out / "records.jsonl").read_bytes().endswith(b"\n")  # nothing half-written
    assert len(read_records(out / "records.jsonl").results) == ANSWERED  # every line parses; none lost

    # the resume hint's command; a warning the interpreter prints as it exits may follow it
    command = shlex.split(next(line for line in reversed(stderr.splitlines()) if line.startswith("groundjudge ")))
    assert command[:2] == ["groundjudge", "run"] and command.count("--resume") == 1 and str(out) in command
    gate.open.set()
    resumed = subprocess.run([sys.executable, "-m", "groundjudge.cli", *command[1:]], cwd=ROOT, capture_output=True,
                             text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert resumed.returncode == 0, resumed.stderr
    assert f"{ANSWERED} result(s) kept" in resumed.stderr
    counts = results_once_each(out)
    assert len(counts) == N_ROWS and set(counts.values()) == {1}
    assert not (out / LOCK_FILE).exists()


@pytest.mark.slow
def test_a_run_stopped_while_calibrating_resumes_its_calibration(tmp_path, llm_server):
    gate = Gate(answered=4)  # a claims judge asks twice per example (extract, verify): two dev results
    llm_server.set_responder(gate)
    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(N_ROWS // 2))
    spec = f"claims:model=openai/gpt-4o-mini,api_base={llm_server.openai_base}"
    out = tmp_path / "run"
    proc = start_run(data, out, spec, concurrency=1, dev_fraction=0.5)
    try:
        wait_until_held(out, proc, name="calibration.jsonl", results=1)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        gate.open.set()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 143 and "nothing was judged yet" in stderr, stderr
    assert not (out / "records.jsonl").exists() and not (out / LOCK_FILE).exists()
    kept = read_records(out / "calibration.jsonl")

    # the resume hint's command; a warning the interpreter prints as it exits may follow it
    command = shlex.split(next(line for line in reversed(stderr.splitlines()) if line.startswith("groundjudge ")))
    resumed = subprocess.run([sys.executable, "-m", "groundjudge.cli", *command[1:]], cwd=ROOT, capture_output=True,
                             text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert resumed.returncode == 0, resumed.stderr
    assert "(resumed)" in resumed.stderr
    calibration = read_records(out / "calibration.jsonl")
    assert calibration.header.run_id == kept.header.run_id == read_records(out / "records.jsonl").header.run_id
    dev_counts = Counter((r.judge, r.example.id) for r in calibration.results)
    assert set(dev_counts.values()) == {1} and len(dev_counts) > len(kept.results) > 0
    assert calibration.results[:len(kept.results)] == kept.results  # the dev verdicts before the stop, kept
    counts = results_once_each(out)
    assert set(counts.values()) == {1} and len(counts) + len(dev_counts) == N_ROWS


def ended_pid() -> int:
    """The pid of a process that has ended."""
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                           timeout=60)
    return int(ended.stdout)


def plant_lock(out: Path, pid: int, host: str) -> None:
    """Write a lock file as a holder with that pid and host would (without holding it)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / LOCK_FILE).write_text(json.dumps({"pid": pid, "host": host, "started_at": "2026-11-25T00:00:00+00:00",
                                             "command": ["groundjudge", "run"]}))


@pytest.mark.slow
def test_a_stale_lock_is_taken_over_another_hosts_refused_and_replay_locks_its_folder(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(3))
    out = tmp_path / "run"
    pid = ended_pid()
    plant_lock(out, pid, socket.gethostname())
    taken = cli("run", str(data), "--judge", "quip:n=21", "--dev-fraction", "0", "--out", str(out), "--quiet")
    assert f"left by pid {pid}" in taken.stderr and "no longer running" in taken.stderr
    assert len(read_records(out / "records.jsonl").results) == 6 and not (out / LOCK_FILE).exists()

    other = tmp_path / "other"
    plant_lock(other, 4242, "another-host")
    refused = cli("run", str(data), "--judge", "quip:n=21", "--dev-fraction", "0", "--out", str(other), "--quiet",
                  check=False)
    assert refused.returncode == 2 and refused.stderr.strip().count("\n") == 0
    assert "pid 4242 on host another-host" in refused.stderr and "cannot be checked" in refused.stderr
    assert f"remove {other / LOCK_FILE}" in refused.stderr
    assert sorted(p.name for p in other.iterdir()) == [LOCK_FILE]  # nothing written, the lock left alone

    replay_out = tmp_path / "replayed"
    plant_lock(replay_out, os.getpid(), socket.gethostname())  # this test process: alive
    blocked = cli("replay", str(out), "--out", str(replay_out), "--quiet", check=False)
    assert blocked.returncode == 2 and f"pid {os.getpid()}" in blocked.stderr
    assert sorted(p.name for p in replay_out.iterdir()) == [LOCK_FILE]


def test_a_lock_taken_in_a_new_folder_leaves_none_behind_when_nothing_was_written(tmp_path):
    folder = tmp_path / "a" / "b" / "run"
    lock = RunLock(folder, ["groundjudge", "run"]).acquire()
    holder = json.loads((folder / LOCK_FILE).read_text())
    assert holder["pid"] == os.getpid() and holder["host"] == socket.gethostname() and holder["started_at"]
    with pytest.raises(RunLockError, match=f"pid {os.getpid()}"):  # held, even against this same process
        RunLock(folder, ["groundjudge", "run"]).acquire()
    lock.release()
    assert not (tmp_path / "a").exists()

    with RunLock(folder, ["groundjudge", "run"]):
        (folder / "records.jsonl").write_text("{}\n")
    assert sorted(p.name for p in folder.iterdir()) == ["records.jsonl"]


class SignalsItself:
    """A judge that sends this process SIGTERM while judging its third example, inside an asyncio task step."""

    name = "signals-itself"
    max_concurrency = None

    def __init__(self):
        self.started = 0

    async def judge(self, example: Example) -> JudgeResult:
        self.started += 1
        if self.started == 3:
            os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.sleep(0.01)
        return JudgeResult(verdict=Verdict(example_id=example.id, label="grounded"))


def test_an_interrupt_inside_a_task_stops_the_judging_without_asyncio_errors(tmp_path, caplog):
    examples = [Example(id=f"e{i}", context=("Rent is due.",), answer="Rent is due.") for i in range(10)]
    path = tmp_path / "records.jsonl"
    exit_code = None
    try:
        with interrupts_raised(), RecordWriter(path) as writer:
            run_judges([JudgeTask("signals-itself", SignalsItself())], examples, writer, concurrency=2,
                       show_progress=False)
    except RunInterrupted as stop:  # the name goes at the end of the block, and with it the last frames
        exit_code = stop.exit_code
    gc.collect()  # a task left holding the interrupt would complain now ("Task exception was never retrieved")
    assert exit_code == 128 + signal.SIGTERM
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []
    lines = path.read_text().splitlines()
    assert 0 < len(lines) < len(examples) and all(ResultRecord.model_validate_json(line) for line in lines)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handlers are given back


def test_a_signal_in_a_critical_section_waits_for_its_end(tmp_path):
    steps = []
    with pytest.raises(RunInterrupted) as stopped, interrupts_raised():
        with interrupts_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            steps.append("the section ran to its end")
        steps.append("not reached")
    assert steps == ["the section ran to its end"] and stopped.value.exit_code == 130
