"""A real Arize Phoenix server on 127.0.0.1 (sqlite in a temporary folder), for the tests and the screenshot script.

Started as ``phoenix serve`` with ``PHOENIX_HOST=127.0.0.1``, free ``PHOENIX_PORT`` / ``PHOENIX_GRPC_PORT``, its
``PHOENIX_WORKING_DIR`` in a temporary folder and telemetry off; ready once ``/healthz`` answers (bounded wait).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

START_TIMEOUT_S = 240.0
"""Longest wait for the server to answer (about 10 s on an idle machine; much more on two busy cores)."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_ready(url: str, process: subprocess.Popen, log_path: str) -> None:
    """Return once ``url`` answers 200; RuntimeError (with the log's tail) if the server exits or is too slow."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    with open(log_path, encoding="utf-8", errors="replace") as handle:
        tail = handle.read()[-3000:]
    raise RuntimeError(f"phoenix serve did not answer {url} (exit {process.poll()}):\n{tail}")


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM the server's process group, SIGKILL it after 20 s."""
    for sig, wait_s in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


@contextmanager
def phoenix_server() -> Iterator[str]:
    """A running Phoenix; yields its base URL (http://127.0.0.1:PORT); stopped and its folder removed after."""
    folder = tempfile.mkdtemp(prefix="gj-phoenix-")
    port = free_port()
    env = {**os.environ, "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port),
           "PHOENIX_GRPC_PORT": str(free_port()), "PHOENIX_WORKING_DIR": folder,
           "PHOENIX_TELEMETRY_ENABLED": "false"}
    log_path = os.path.join(folder, "server.log")
    with open(log_path, "wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "phoenix.server.main", "serve"], env=env, stdout=log,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        _wait_ready(f"http://127.0.0.1:{port}/healthz", process, log_path)
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(process)
        shutil.rmtree(folder, ignore_errors=True)
