"""Every code block of README.md and docs/ runs as written (or, where marked, is checked for syntax only).

One temporary workspace per page (the repository's datasets/, scripts/ and results/ linked in, examples/ copied),
the page's blocks in order: shell blocks as subprocesses with the project's ``groundjudge`` and ``python`` first
on PATH (that ``groundjudge`` relayed to the worker's fork server: tests/cli_relay.py), Python blocks executed in
one namespace per page, TOML blocks parsed. LLM judges in the docs call the scripted OpenAI-compatible server
(``python -m groundjudge.testing``), which this module starts at http://127.0.0.1:8765/v1 (or, if that port is
taken, elsewhere, and the blocks are pointed at it); a service the docs start on port 8080 is started on a port
free at the time instead. The marker convention is in tests/doc_blocks.py and docs/design.md.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from cli_relay import CliRelay
from conftest import _FORKS
from doc_blocks import ROOT, Block, blocks, doc_pages

DOCS_BASE = "http://127.0.0.1:8765/v1"
LINKED = ("datasets", "scripts", "results")


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def llm_base():
    """The scripted oracle server the docs' LLM judges call; its OpenAI base URL."""
    from groundjudge.testing.oracle import oracle_responder
    from groundjudge.testing.scripted_server import ScriptedLLMServer

    server = ScriptedLLMServer(oracle_responder, port=8765 if _port_free(8765) else 0).start()
    yield server.openai_base
    server.stop()


@pytest.fixture(scope="module")
def relay():
    """The ``groundjudge`` the shell blocks find first on PATH: served by this worker's fork server."""
    with CliRelay(_FORKS) as served:
        yield served


def _workspace(tmp: Path, base: str) -> Path:
    for name in LINKED:
        (tmp / name).symlink_to(ROOT / name)
    if sys.prefix != sys.base_prefix:   # the README's commands name .venv/bin/...: this environment
        (tmp / ".venv").symlink_to(Path(sys.prefix))
    shutil.copytree(ROOT / "examples", tmp / "examples")
    for path in (tmp / "examples").rglob("*.toml"):
        path.write_text(path.read_text(encoding="utf-8").replace(DOCS_BASE, base), encoding="utf-8")
    return tmp


def _env(workspace: Path, relay: CliRelay) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_API_KEY") and not k.startswith(("PYTEST_", "COV_"))}
    path = os.pathsep.join([str(relay.bin_dir), str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(PATH=path, COLUMNS="160",
               LITELLM_LOCAL_MODEL_COST_MAP="True", HF_HUB_OFFLINE="1",
               GROUNDJUDGE_CACHE_DIR=str(workspace / ".cache"))
    return env


def _check_syntax(block: Block) -> None:
    if block.lang == "bash":
        result = subprocess.run(["bash", "-n"], input=block.code, capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, f"{block.where}: shell syntax: {result.stderr}"
    elif block.lang == "python":
        compile(block.code, block.where, "exec")
    else:
        tomllib.loads(block.code)


def _run(block: Block, workspace: Path, namespace: dict, env: dict[str, str]) -> None:
    if block.mode == "syntax-only":
        _check_syntax(block)
    elif block.mode == "file":
        target = workspace / block.arg
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.code, encoding="utf-8")
        if block.lang == "toml":
            tomllib.loads(block.code)
    elif block.lang == "toml":
        tomllib.loads(block.code)
    elif block.lang == "python":
        cwd = os.getcwd()
        os.chdir(workspace)
        try:
            exec(compile(block.code, block.where, "exec"), namespace)   # noqa: S102 - our own documentation
        finally:
            os.chdir(cwd)
    else:
        result = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.code], cwd=workspace,
                                env=env, capture_output=True, text=True, timeout=300,
                                stdin=subprocess.DEVNULL)
        assert result.returncode == 0, (f"{block.where}: exit {result.returncode}\n{block.code}\n"
                                        f"--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-3000:]}")


PAGES = [page for page in doc_pages() if blocks(page)]


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_the_page_s_code_blocks_run(page, llm_base, relay, tmp_path, monkeypatch):
    workspace = _workspace(tmp_path, llm_base)
    env = _env(workspace, relay)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    namespace: dict = {"__name__": "__docs__"}
    service_port = _free_port()   # the docs' services listen on 8080: here on a port free now
    for block in blocks(page):
        if block.lang in ("bash", "toml"):
            code = block.code.replace(DOCS_BASE, llm_base)
            code = code.replace("127.0.0.1:8080", f"127.0.0.1:{service_port}").replace("--port 8080",
                                                                                     f"--port {service_port}")
            block = Block(block.page, block.line, block.lang, code, block.mode, block.arg)
        _run(block, workspace, namespace, env)


def test_every_marker_names_its_reason_or_path():
    for page in doc_pages():
        for block in blocks(page):
            assert block.mode == "run" or block.arg, f"{block.where}: a snippet marker needs a (reason) or a path"
