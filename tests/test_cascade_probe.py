"""scripts/cascade_local.py: the cascade's band from a run's dev verdicts, and the probe that checks the LLM on it."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT, cli, qa_rows, write_jsonl

from groundjudge.runs.records import find_records, read_records


@pytest.mark.slow
def test_probe_judges_dev_answers_inside_the_band_with_the_llm(llm_server, tmp_path):
    data = write_jsonl(tmp_path / "qa.jsonl", qa_rows(10))
    run = tmp_path / "local"
    cli("run", str(data), "--judge", "quip:n=8", "--dev-fraction", "0.6", "--out", str(run), "--quiet")
    llm = f"direct:model=openai/gpt-4o-mini,api_base={llm_server.openai_base},timeout=5"
    command = [sys.executable, "scripts/cascade_local.py", str(run), "--escalate", "0.5",
               "--probe", "4", "--llm", llm, "--out", str(tmp_path / "probe")]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300,
                            env={**os.environ, "GROUNDJUDGE_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 0, result.stderr
    spec, threshold, band, _, n, llm_right, local_right, p = result.stdout.split()
    low, high = (float(x) for x in band.split("-"))
    dev = [r for r in read_records(find_records(run, "calibration.jsonl")).results
           if low <= r.result.verdict.score <= high]
    assert spec == "quip:n=8" and int(n) == min(4, len(dev)) == len(llm_server.requests)
    # the scripted oracle is always right; the probed answers are the ones the server was asked about
    assert int(llm_right) == int(n) and 0 <= int(local_right) <= int(n) and 0 < float(p) <= 1
    asked = {re.search(r'<answer boundary="\w+">\n(.*?)\n</answer boundary=', q.text, re.S).group(1)
             for q in llm_server.requests}
    assert len(asked) == int(n) and asked <= {r.example.answer for r in dev}
    assert "escalating them" in result.stderr
    probed = read_records(find_records(tmp_path / "probe", "records.jsonl")).results     # a run like any other
    assert len(probed) == int(n) and all(r.result.verdict.path == "llm:openai/gpt-4o-mini" for r in probed)
