"""Shared fixtures: paths to the repository, the bundled and shared data, and a CLI runner."""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from cli_forks import ForkedCli

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "datasets"

# hypothesis keeps its example database in memory and its other files (constants, unicode tables) in a temporary
# folder: no .hypothesis/ in the working tree
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", tempfile.mkdtemp(prefix="gj-hypothesis-"))
# dtype=auto caches its float32 agreement checks per machine and model: in a temporary folder here, never ~/.cache
os.environ.setdefault("GROUNDJUDGE_BACKEND_CACHE", tempfile.mkdtemp(prefix="gj-backend-"))
# pytest-xdist's workers share the machine's cores, so torch in each takes its share (GROUNDJUDGE_THREADS, which every
# model loader and the training loop apply): with torch on every core in each of two workers on two cores, their
# threads spun against each other and the model tests ran 2.5x slower (263 s against 105 s for six model-heavy files)
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
if _WORKERS > 1:
    _CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    os.environ.setdefault("GROUNDJUDGE_THREADS", str(max(1, _CORES // _WORKERS)))
try:
    from hypothesis import settings as _hypothesis_settings
    from hypothesis.database import InMemoryExampleDatabase
except ImportError:   # the integration environments install no hypothesis
    pass
else:
    _hypothesis_settings.register_profile("groundjudge", database=InMemoryExampleDatabase())
    _hypothesis_settings.load_profile("groundjudge")


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory) -> Path:
    """Where the browser tests save their screenshots: $GROUNDJUDGE_TEST_ARTIFACTS if set (CI may keep them),
    else a temporary folder; never the working tree."""
    chosen = os.environ.get("GROUNDJUDGE_TEST_ARTIFACTS")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def shared_datasets() -> Path:
    """../shared/datasets, or skip when this checkout has none beside it."""
    if not SHARED.is_dir():
        pytest.skip("../shared/datasets is not beside this checkout")
    return SHARED


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    """Write rows as JSON lines."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


_FORKS = ForkedCli({**os.environ, "COLUMNS": "200"})
"""This worker's fork server of the groundjudge command (tests/cli_forks.py), started by the first :func:`cli`."""
atexit.register(_FORKS.close)


def cli(*args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the groundjudge command in its own process, as a user would: forked from a process that has imported it
    once (tests/cli_forks.py; ``GROUNDJUDGE_TEST_FRESH_CLI=1`` starts a fresh interpreter every time)."""
    result = _FORKS.run([sys.executable, "-m", "groundjudge.cli"], list(args), cwd=ROOT,
                        env={**os.environ, "COLUMNS": "200"}, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"groundjudge {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
    return result


def rent_rows(n_groups: int = 10) -> list[dict]:
    """A small labelled native data set: per group one grounded and one altered answer."""
    rows = []
    for g in range(n_groups):
        context = (f"Clause {g}. Rent of {100 + g} crowns is due on day {g + 1} of each month. "
                   f"A late fee of {g + 2} percent applies after day {g + 5}.")
        rows.append({"id": f"g{g}", "context": [context], "label": "grounded", "meta": {"group": f"c{g}"},
                     "answer": f"Rent of {100 + g} crowns is due on day {g + 1} of each month."})
        rows.append({"id": f"u{g}", "context": [context], "label": "ungrounded", "meta": {"group": f"c{g}"},
                     "answer": f"Tenants may withhold rent whenever the landlord delays repairs for {g + 3} weeks."})
    return rows


@pytest.fixture
def llm_server():
    """A scripted OpenAI/Anthropic server on 127.0.0.1 answering groundjudge's prompts (the oracle)."""
    from groundjudge.testing.oracle import oracle_responder
    from groundjudge.testing.scripted_server import ScriptedLLMServer

    server = ScriptedLLMServer(oracle_responder).start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Every test gets its own LLM call cache, and no real provider key."""
    monkeypatch.setenv("GROUNDJUDGE_CACHE_DIR", str(tmp_path / "llm-cache"))
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AZURE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def qa_rows(n_groups: int = 6) -> list[dict]:
    """Labelled native rows with questions: a grounded and an altered answer per context."""
    rows = []
    for g in range(n_groups):
        context = (f"Section {g} of the Leases Act of Norland. A landlord must return a deposit within {20 + g} days "
                   f"after the lease ends. The Tenancy Board of district {g} hears disputes about deposits.")
        question = f"When must a deposit be returned under section {g}?"
        rows.append({"id": f"q{g}-g", "question": question, "context": [context], "label": "grounded",
                     "answer": f"A landlord must return a deposit within {20 + g} days after the lease ends.",
                     "error_types": []})
        rows.append({"id": f"q{g}-u", "question": question, "context": [context], "label": "ungrounded",
                     "answer": f"A landlord must return a deposit within {20 + g} days after the lease ends. "
                               f"The county court hears disputes about deposits.",
                     "error_types": ["Misattributions"]})
    return rows
