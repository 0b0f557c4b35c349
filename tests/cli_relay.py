"""A ``groundjudge`` command for shell scripts run by the tests, served by the worker's fork server.

The documentation's shell blocks (tests/test_docs_snippets.py) call ``groundjudge`` by name, about 35 times over
the pages, each a fresh interpreter that imports groundjudge, litellm and torch again (3-15 s). :class:`CliRelay`
puts a small ``groundjudge`` first on the blocks' PATH: a stdlib-only Python script that sends its argv, folder and
environment over a Unix socket to a thread of the test process, which runs the command through the fork server
(tests/cli_forks.py, with its rules for when a fresh interpreter is needed) and sends back the exit code and both
streams. A command that serves until it is stopped (``serve``, ``label`` without ``--no-serve``, ``--export`` or
``--import``) or reads its standard input is not relayed: the script becomes the real ``groundjudge``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Protocol

SHIM = '''#!{python} -IS
"""groundjudge, relayed to the test process's fork server (tests/cli_relay.py)."""
import json, os, socket, sys
args = sys.argv[1:]
verb = next((a for a in args if not a.startswith("-")), "")
serving = verb == "serve" or (verb == "label" and not {{"--no-serve", "--export", "--import"}} & set(args))
if serving or "-" in args:
    os.execv({real!r}, [{real!r}, *args])
with socket.socket(socket.AF_UNIX) as link:
    link.connect({socket_path!r})
    link.sendall(json.dumps({{"args": args, "cwd": os.getcwd(), "env": dict(os.environ)}}).encode() + b"\\n")
    link.shutdown(socket.SHUT_WR)
    reply = json.loads(b"".join(iter(lambda: link.recv(1 << 16), b"")))
sys.stdout.write(reply["stdout"])
sys.stderr.write(reply["stderr"])
sys.exit(reply["returncode"])
'''
"""The relayed command (one shebang argument, so ``-IS``): isolated and without site, it keeps its own start to
the interpreter's bare minimum (stdlib only)."""


class Runner(Protocol):
    """What runs a relayed command: :meth:`tests.cli_forks.ForkedCli.run`."""

    def run(self, command: list[str], args: list[str], cwd: Path, env: dict[str, str],
            timeout: float, import_root: Path | None = None) -> subprocess.CompletedProcess: ...


class CliRelay:
    """A ``groundjudge`` on :attr:`bin_dir` whose commands ``runner`` runs (each within ``timeout`` seconds); use as
    a context manager. :attr:`relayed` counts the commands it answered."""

    def __init__(self, runner: Runner, timeout: float = 300):
        self.runner, self.timeout = runner, timeout
        self._folder = tempfile.TemporaryDirectory(prefix="gj-relay-")
        self.bin_dir = Path(self._folder.name, "bin")
        """Put this first on PATH."""
        self.relayed = 0
        """Commands answered through the runner so far."""
        self._listener = socket.socket(socket.AF_UNIX)
        self._thread = threading.Thread(target=self._serve, name="groundjudge-relay", daemon=True)

    def __enter__(self) -> CliRelay:
        socket_path = str(Path(self._folder.name, "relay.sock"))
        self._listener.bind(socket_path)
        self._listener.listen()
        self.bin_dir.mkdir()
        real = str(Path(sys.executable).with_name("groundjudge"))
        shim = self.bin_dir / "groundjudge"
        shim.write_text(SHIM.format(python=sys.executable, real=real, socket_path=socket_path), encoding="utf-8")
        shim.chmod(0o755)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._listener.shutdown(socket.SHUT_RDWR)   # wakes the thread's accept(), which fails: the thread ends
        self._listener.close()
        self._thread.join(timeout=10)
        self._folder.cleanup()

    def _serve(self) -> None:
        while True:
            try:
                link, _ = self._listener.accept()
            except OSError:
                return
            with link:
                request = json.loads(b"".join(iter(lambda: link.recv(1 << 16), b"")))
                link.sendall(json.dumps(self._answer(request)).encode())

    def _answer(self, request: dict) -> dict:
        command = [sys.executable, "-m", "groundjudge.cli"]
        try:
            result = self.runner.run(command, request["args"], Path(request["cwd"]), request["env"], self.timeout,
                                     import_root=Path(sys.executable).parent)   # the script's folder, not cwd
        except subprocess.TimeoutExpired as late:
            return {"returncode": 124, "stdout": _text(late.output),
                    "stderr": _text(late.stderr) + f"\n(relayed command timed out after {self.timeout} s)\n"}
        self.relayed += 1
        return {"returncode": result.returncode, "stdout": result.stdout, "stderr": result.stderr}


def _text(stream: str | bytes | None) -> str:
    return stream.decode(errors="replace") if isinstance(stream, bytes) else (stream or "")

