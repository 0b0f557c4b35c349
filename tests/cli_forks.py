"""The ``groundjudge`` command for the tests, forked from a process that has imported it once.

A test that runs ``python -m groundjudge.cli ...`` in a fresh interpreter spends 3-15 s importing groundjudge and
the libraries a verb needs (litellm, torch, transformers, sentence-transformers, anthropic) before it does anything;
the suite ran the command some hundred times, and that was a fifth of its CPU. This module keeps, per test worker,
one *fork server*: a process started with the workers' environment that imports all of that once, never runs any
of it (no thread, no model, no event loop), and then forks a child per command. The child becomes
``python -m groundjudge.cli ARGS`` from there on: its own process group, working directory, environment, argv, a
stdin of /dev/null and stdout/stderr captured into files, then the module run as ``__main__`` and the interpreter's
own exit (atexit handlers, buffers flushed, the exit code of ``sys.exit``). What the test sees is what
:func:`subprocess.run` gives: a :class:`subprocess.CompletedProcess`, or :class:`subprocess.TimeoutExpired` after the
command's process group was killed.

A command is run in a fresh interpreter instead when forking cannot give the same process: the test's environment
differs from the server's (after its imports) in a variable that a library may read at import time (anything but
the GROUNDJUDGE_* settings, pytest's PYTEST_* variables and :data:`CALL_TIME_VARIABLES`), another thread of the
test already has a command in flight, or ``GROUNDJUDGE_TEST_FRESH_CLI=1`` asks for fresh interpreters throughout.
Tests about what a command imports, how it starts, or how it takes a signal start their own subprocesses and do
not come here.

Run as a script, this file is the server: ``python tests/cli_forks.py`` reads one JSON request per line on stdin and
answers one JSON line per request on stdout.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any

PRELOAD = ("groundjudge.cli", "groundjudge.cli.run", "groundjudge.cli.train", "groundjudge.cli.label",
           "groundjudge.cli.report", "groundjudge.cli.serve", "groundjudge.cli.tune", "groundjudge.runs.execute",
           "groundjudge.judges", "groundjudge.local_nli.engine", "groundjudge.llm", "litellm", "anthropic",
           "openai", "torch", "transformers", "transformers.modeling_utils", "sentence_transformers",
           "sklearn.metrics", "scipy.stats", "jinja2", "tenacity", "rich", "ray")
"""What the server imports before it forks anything (a missing optional package is skipped). Ray is among them
for the variable its import sets (RAY_CLIENT_MODE=0), which a test process that imported it has too."""

CALL_TIME_VARIABLES = ("COLUMNS", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AZURE_API_KEY", "GEMINI_API_KEY",
                       "TIKTOKEN_CACHE_DIR", "TOKENIZERS_PARALLELISM", "PYTHONBREAKPOINT",
                       "PATH", "PWD", "OLDPWD", "SHLVL", "_")
"""Variables that are read when a command runs, not when a library is imported: a test may change these (and any
``GROUNDJUDGE_*``, and pytest its ``PYTEST_*``) and still be served by a fork. tiktoken reads its cache folder when
it loads an encoding (litellm sets it when it first counts tokens, so a test process that has counted tokens has it
and the server may not); ``breakpoint()`` reads PYTHONBREAKPOINT on each call (``ray.init`` sets it in the test
process); PATH is read when a program is looked up, and a shell sets PWD, OLDPWD, SHLVL and ``_`` for the commands
it starts (tests/cli_relay.py)."""

FRESH_VARIABLE = "GROUNDJUDGE_TEST_FRESH_CLI"
"""Set to 1 to run every command in a fresh interpreter."""


def _unforkable_variables(server: dict[str, str], added: set[str], env: dict[str, str]) -> set[str]:
    """The variables in which ``env`` differs from the ``server``'s environment (after its imports, which ``added``
    some variables), less those read when a command runs: empty when a fork gives the same process. A variable that
    the imports set and ``env`` lacks is no difference: the same imports in a fresh process set it too."""
    changed = {name for name in server.keys() | env.keys() if server.get(name) != env.get(name)
               and not (name in added and name not in env)}
    return {name for name in changed
            if not (name.startswith(("GROUNDJUDGE_", "PYTEST_")) or name in CALL_TIME_VARIABLES)}


class ForkedCli:
    """A client of one fork server, started on first use with ``base_env``; :meth:`run` answers as
    :func:`subprocess.run` with ``capture_output=True, text=True`` would."""

    def __init__(self, base_env: dict[str, str]):
        self.base_env = dict(base_env)
        self._server: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self._log = tempfile.NamedTemporaryFile(prefix="gj-cli-forks-", suffix=".log", delete=False)
        self.refused: str | None = None
        """Why the server would not serve (then every command runs in a fresh interpreter)."""
        self.server_env: dict[str, str] = {}
        """The server's environment after its imports (which set variables of their own, such as oneDNN's cache
        bounds): a command whose environment differs from it only in call-time variables is forked."""
        self.server_added: set[str] = set()
        """The variables the server's imports set (torch's ``KMP_*``, groundjudge's oneDNN bounds, ...)."""
        self.forked = 0
        """Commands served by a fork so far."""
        self.fresh: dict[str, int] = {}
        """Commands run in a fresh interpreter so far, counted by why (the variables that differed, or another
        reason); written to the file named by ``GROUNDJUDGE_TEST_FORK_REPORT`` at :meth:`close`, if set."""

    def _start(self) -> subprocess.Popen | None:
        """The running server, started (and its imports awaited) on first use; None once it refused to serve."""
        if self.refused:
            return None
        if self._server is None or self._server.poll() is not None:
            self._server = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=self._log, env=self.base_env, text=True,
                                            cwd=Path(__file__).resolve().parents[1])
            assert self._server.stdout is not None
            hello = json.loads(self._server.stdout.readline() or '{"refused": "it exited while importing"}')
            self.server_env = hello.get("env", {})
            self.server_added = set(hello.get("added", ()))
            if "refused" in hello:
                self.refused = hello["refused"]
                warnings.warn(f"the groundjudge fork server refused to serve ({self.refused}): every command "
                              "runs in a fresh interpreter", stacklevel=3)
                self._server.wait()
                return None
        return self._server

    def run(self, command: list[str], args: list[str], cwd: Path, env: dict[str, str],
            timeout: float, import_root: Path | None = None) -> subprocess.CompletedProcess:
        """``command`` + ``args`` (``[python, -m, groundjudge.cli]`` + the verb's arguments), forked when it can be,
        else in a fresh interpreter; the result (or timeout) of :func:`subprocess.run`. A forked command imports
        from ``cwd`` first, as ``python -m`` does, or from ``import_root`` where given (an installed script's
        folder, for a command that stands for the ``groundjudge`` script)."""
        wanted = hasattr(os, "fork") and env.get(FRESH_VARIABLE, self.base_env.get(FRESH_VARIABLE)) != "1"
        why = "asked for" if not wanted else "another command in flight"
        if wanted and self._lock.acquire(blocking=False):
            try:
                server = self._start()
                why = f"server refused: {self.refused}"
                if server is not None:
                    differing = _unforkable_variables(self.server_env, self.server_added, env)
                    if not differing:
                        return self._forked(server, command, args, cwd, env, timeout, import_root or cwd)
                    why = "variables differ: " + " ".join(sorted(differing))
            finally:
                self._lock.release()
        self.fresh[why] = self.fresh.get(why, 0) + 1
        return subprocess.run([*command, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)

    def _forked(self, server: subprocess.Popen, command: list[str], args: list[str], cwd: Path,
                env: dict[str, str], timeout: float, import_root: Path) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory(prefix="gj-cli-") as folder:
            out, err = Path(folder, "stdout"), Path(folder, "stderr")
            request = {"args": args, "cwd": str(cwd), "import_root": str(import_root), "env": env,
                       "stdout": str(out), "stderr": str(err), "timeout": timeout}
            assert server.stdin is not None and server.stdout is not None
            server.stdin.write(json.dumps(request) + "\n")
            server.stdin.flush()
            line = server.stdout.readline()
            if not line:
                self._log.flush()
                tail = Path(self._log.name).read_text(encoding="utf-8", errors="replace")[-4000:]
                raise RuntimeError(f"the groundjudge fork server stopped (its log: {self._log.name}):\n{tail}")
            reply = json.loads(line)
            stdout = out.read_text(errors="replace") if out.exists() else ""
            stderr = err.read_text(errors="replace") if err.exists() else ""
        self.forked += 1
        if reply["timed_out"]:
            raise subprocess.TimeoutExpired([*command, *args], timeout, output=stdout, stderr=stderr)
        return subprocess.CompletedProcess([*command, *args], reply["returncode"], stdout, stderr)

    def close(self) -> None:
        """Stop the server (its children have all been reaped); append this client's counts to the file named by
        ``GROUNDJUDGE_TEST_FORK_REPORT``, if set."""
        report = os.environ.get("GROUNDJUDGE_TEST_FORK_REPORT")
        if report:
            with open(report, "a", encoding="utf-8") as out:
                out.write(json.dumps({"pid": os.getpid(), "forked": self.forked, "fresh": self.fresh}) + "\n")
        if self._server is not None and self._server.poll() is None:
            assert self._server.stdin is not None
            self._server.stdin.close()
            try:
                self._server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._server.kill()
                self._server.wait()
        self._log.close()
        os.unlink(self._log.name)


def _wait(pid: int, timeout: float) -> tuple[int, bool]:
    """(returncode as subprocess gives it, timed out) of child ``pid``; its process group is killed at the timeout."""
    deadline = time.monotonic() + timeout
    pause = 0.002
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), False
        if time.monotonic() > deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _, status = os.waitpid(pid, 0)
            return os.waitstatus_to_exitcode(status), True
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _become_command(request: dict[str, Any], added: dict[str, str]) -> None:
    """In the forked child: take the request's process group, folder, import path (``import_root`` first: the folder
    for ``python -m``, the script's folder for the script), environment, argv and standard streams (with the
    variables that the imports ``added`` where the request does not set them: the same imports in a fresh process
    set them too)."""
    os.setsid()
    os.chdir(request["cwd"])
    sys.path[0] = request["import_root"]
    os.environ.clear()
    os.environ.update({**{k: v for k, v in added.items() if k not in request["env"]}, **request["env"]})
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    for source, target in ((null, 0), (out, 1), (err, 2)):
        os.dup2(source, target)
        os.close(source)


def serve() -> dict[str, Any] | None:
    """The server's loop: import :data:`PRELOAD`, say ``ready`` (or why not), then fork a child per request and
    answer its exit. Returns the request in a forked child (which then runs the command), None in the server when
    its stdin closes."""
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)   # whatever an import prints goes nowhere, not into the answers
    os.close(null)
    sys.path[0] = os.getcwd()   # as ``python -m`` has it, not this file's folder
    before = dict(os.environ)
    for name in PRELOAD:
        try:
            __import__(name)
        except ImportError:
            pass
    if threading.active_count() != 1:   # a fork copies one thread only: refuse rather than serve half a process
        answers.write(json.dumps({"refused": f"the imports started threads: {threading.enumerate()}"}) + "\n")
        answers.flush()
        return None
    gc.freeze()   # what the imports made stays out of the children's collections: their pages stay shared
    added = {name: value for name, value in os.environ.items() if name not in before}
    answers.write(json.dumps({"ready": True, "env": dict(os.environ), "added": sorted(added)}) + "\n")
    answers.flush()
    for line in requests:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            requests.close()
            answers.close()
            _become_command(request, added)
            return request
        returncode, timed_out = _wait(pid, float(request["timeout"]))
        answers.write(json.dumps({"returncode": returncode, "timed_out": timed_out}) + "\n")
        answers.flush()
    return None


def run_command(request: dict[str, Any]) -> None:
    """In the forked child: ``python -m groundjudge.cli ARGS``, then the interpreter's exit as far as a command can
    tell: non-daemon threads joined, garbage collected, atexit handlers run, streams flushed, the exit code of
    ``sys.exit`` (a message to stderr and 1 for a non-integer one, a traceback and 1 for an uncaught exception,
    death by SIGINT for an uncaught KeyboardInterrupt). Only the teardown of the modules that the server imported is
    skipped (``os._exit``): it took seconds per command and writes nothing."""
    import atexit
    import gc
    import runpy
    import traceback

    sys.argv = ["groundjudge", *request["args"]]
    code: int = 0
    interrupted = False
    try:
        runpy.run_module("groundjudge.cli", run_name="__main__", alter_sys=True)
    except SystemExit as exited:
        if exited.code is None:
            code = 0
        elif isinstance(exited.code, int):
            code = exited.code & 0xFF
        else:
            print(exited.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:
        traceback.print_exc()
        interrupted = True
    except BaseException:   # noqa: BLE001 -- what the interpreter does with an uncaught exception
        traceback.print_exc()
        code = 1
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    gc.collect()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if interrupted:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code)


if __name__ == "__main__":
    forked = serve()
    if forked is not None:   # a forked child: from here on, ``python -m groundjudge.cli ARGS``
        run_command(forked)
