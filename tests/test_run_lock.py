"""Runs that cannot collide: one writer per run folder, and SIGINT / SIGTERM that stop a run cleanly.

Real `groundjudge run` subprocesses judge against the scripted server with slow replies, so that a run is still
going when a second one starts or a signal arrives. Loops are bounded in count and time; no timing assertions.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import ROOT, cli, rent_rows, write_jsonl

from groundjudge.runs.lock import LOCK_FILE
from groundjudge.runs.records import read_records
from groundjudge.testing.oracle import oracle_responder
from groundjudge.testing.scripted_server import Reply

N_ROWS = 12
"""Examples judged: enough that a run at one call in flight lasts several seconds against slow replies."""


def start_run(data: Path, out: Path, spec: str) -> subprocess.Popen:
    """`groundjudge run` in the background, one example at a time, no cache (so it really waits)."""
    return subprocess.Popen([sys.executable, "-m", "groundjudge.cli", "run", str(data), "--judge", spec,
                             "--concurrency", "1", "--dev-fraction", "0", "--no-cache", "--quiet", "--out", str(out)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "200"})


def wait_for_records(out: Path, proc: subprocess.Popen, at_least: int = 2, limit_s: float = 60) -> None:
    """Poll (bounded) until the run holds its lock and has written ``at_least`` lines."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        records = out / "records.jsonl"
        lines = records.read_text().count("\n") if records.exists() else 0
        if (out / LOCK_FILE).exists() and lines >= at_least:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("the run did not start writing in time")


@pytest.fixture
def slow_run(tmp_path, llm_server):
    """(data, out, spec, process): a direct-judge run in progress against replies delayed by 0.4 s."""
    llm_server.set_responder(lambda request: Reply(content=oracle_responder(request).content, delay=0.4))
    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(N_ROWS // 2))
    spec = f"direct:model=openai/gpt-4o-mini,api_base={llm_server.openai_base}"
    out = tmp_path / "run"
    proc = start_run(data, out, spec)
    wait_for_records(out, proc)
    yield data, out, spec, proc
    if proc.poll() is None:
        proc.kill()
        proc.communicate()


def test_a_second_writer_stops_at_once_naming_the_holder(slow_run):
    data, out, spec, proc = slow_run
    before = (out / "records.jsonl").read_bytes()
    second = cli("run", str(data), "--judge", spec, "--dev-fraction", "0", "--out", str(out), "--resume", "--quiet",
                 check=False, timeout=60)
    assert second.returncode == 2
    assert f"pid {proc.pid}" in second.stderr and socket.gethostname() in second.stderr
    assert second.stderr.strip().count("\n") == 0 and "Traceback" not in second.stderr
    assert (out / "records.jsonl").read_bytes()[:len(before)] == before  # the holder's records are untouched
    holder = json.loads((out / LOCK_FILE).read_text())
    assert holder["pid"] == proc.pid


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_flushes_releases_and_prints_the_resume_command(slow_run, sig):
    data, out, spec, proc = slow_run
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, stderr
    assert "Traceback" not in stderr and not (out / LOCK_FILE).exists()
    kept = read_records(out / "records.jsonl").results  # every written line parses: nothing half-written
    assert 0 < len(kept) < N_ROWS

    command = shlex.split(stderr.strip().splitlines()[-1])
    assert command[0] == "groundjudge" and "--resume" in command
    resumed = subprocess.run([sys.executable, "-m", "groundjudge.cli", *command[1:]], cwd=ROOT, capture_output=True,
                             text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    counts = Counter((r.judge, r.example.id) for r in read_records(out / "records.jsonl").results)
    assert len(counts) == N_ROWS and set(counts.values()) == {1}


def stale_lock(out: Path, host: str) -> int:
    """Write a lock held by a process that has ended; its pid."""
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(ended.stdout)
    out.mkdir(parents=True, exist_ok=True)
    (out / LOCK_FILE).write_text(json.dumps({"pid": pid, "host": host, "started_at": "2026-11-25T00:00:00+00:00",
                                             "command": ["groundjudge", "run"]}))
    return pid


def test_a_stale_lock_of_this_host_is_taken_over_and_another_hosts_is_refused(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(3))
    out = tmp_path / "run"
    pid = stale_lock(out, socket.gethostname())
    taken = cli("run", str(data), "--judge", "quip:n=21", "--dev-fraction", "0", "--out", str(out), "--quiet")
    assert f"left by pid {pid}" in taken.stderr and len(read_records(out / "records.jsonl").results) == 6
    assert not (out / LOCK_FILE).exists()

    other = tmp_path / "other"
    stale_lock(other, "another-host")
    refused = cli("run", str(data), "--judge", "quip:n=21", "--dev-fraction", "0", "--out", str(other), "--quiet",
                  check=False)
    assert refused.returncode == 2 and "another-host" in refused.stderr and "cannot be checked" in refused.stderr
    assert not (other / "records.jsonl").exists() and (other / LOCK_FILE).exists()
