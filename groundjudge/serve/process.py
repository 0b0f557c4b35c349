"""``groundjudge serve`` in a child process on a free 127.0.0.1 port, for tests and benchmarks: started, waited
for (``/healthz``, a bounded poll), and stopped with SIGTERM as an orchestrator would."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServeProcess:
    """``python -m groundjudge.cli serve ARGS --host 127.0.0.1 --port <free>``, its stderr kept in ``log``."""

    def __init__(self, args: Sequence[str], log: str | Path, env: Mapping[str, str] | None = None,
                 cwd: str | Path | None = None):
        self.args = list(args)
        self.log = Path(log)
        self.env = {**os.environ, **(env or {})}
        self.cwd = cwd
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        """The service's base URL."""
        return f"http://127.0.0.1:{self.port}"

    def start(self, ready_within_s: float = 180.0) -> ServeProcess:
        """Start the service and return once ``/healthz`` answers 200 (RuntimeError, with its log, if it exits
        or is not ready in time)."""
        import httpx

        command = [sys.executable, "-m", "groundjudge.cli", "serve", *self.args, "--host", "127.0.0.1",
                   "--port", str(self.port)]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=self.env, cwd=self.cwd)
        deadline = time.monotonic() + ready_within_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"serve exited with {self.process.returncode}:\n{self.output()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"serve was not ready within {ready_within_s:g} s:\n{self.output()}")

    def output(self) -> str:
        """What the service printed so far."""
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""

    def terminate(self) -> None:
        """Send SIGTERM (the service answers what it accepted, then exits)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)

    def wait(self, timeout_s: float = 60.0) -> int:
        """Wait for the process to exit; its return code."""
        return self.process.wait(timeout=timeout_s)

    def stop(self, timeout_s: float = 60.0) -> int | None:
        """SIGTERM, then SIGKILL if it has not exited within ``timeout_s``; the return code."""
        if self.process is None:
            return None
        self.terminate()
        try:
            return self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(timeout=10)

    def __enter__(self) -> ServeProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
