"""Regenerate the documentation's pictures (docs/images/) from real runs on the bundled data.

    python scripts/docs_pictures.py            # about two minutes on two cores; needs Debian's chromium + chromedriver

Runs, in a temporary folder: the quick start (quip and cosine on datasets/legal_qa), a prompt experiment (the claims
chain with the built-in verification prompt and the edited copy of docs/guides/compare-prompts.md, on the scripted
OpenAI-compatible server, and quip),
and a typed legal test set (``groundjudge perturb``) judged by quip, cosine and the error-type chain (scripted
server). Then it photographs, in headless Chromium (tests/browser.py's settings): the report page, its "Prompt
variants" section and the labelling page; and copies the report's ROC and error-type heat-map figures.
docs/images/SOURCES.txt says what each picture shows and how it was made. Nothing is pasted by hand.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
sys.path.insert(0, str(ROOT / "tests"))

EXPERIMENT = """[data]
files = ["{root}/datasets/legal_qa/legal_qa.jsonl"]
split = "test"
sample = 16
seed = 0

[judges.claims]
kind = "claims"
model = "openai/scripted"
api_base = "{base}"
against = "context"
threshold = 1.0
matrix = {{ prompts = ["built-in", "prompts/strict"] }}

[judges.quip]
kind = "quip"
n = 21
threshold = 0.177
"""


def gj(*args: str, cwd: Path) -> None:
    """Run the groundjudge command; stop on failure."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1", "COLUMNS": "160",
           "GROUNDJUDGE_CACHE_DIR": str(cwd / ".cache")}
    print("groundjudge", " ".join(args), flush=True)
    subprocess.run([sys.executable, "-m", "groundjudge.cli", *args], cwd=cwd, env=env, check=True,
                   stdout=subprocess.DEVNULL)


def make_runs(work: Path, base: str) -> None:
    """The three runs and their reports."""
    data = str(ROOT / "datasets" / "legal_qa" / "legal_qa.jsonl")
    gj("run", data, "--judge", "quip:n=21", "--judge", "cosine", "--out", "runs/quickstart", cwd=work)
    gj("report", "runs/quickstart", cwd=work)
    gj("prompts", "--copy-to", "prompts/strict", "claims_verify", cwd=work)   # as docs/guides/compare-prompts.md
    with open(work / "prompts" / "strict" / "claims_verify.system.j2", "a", encoding="utf-8") as template:
        template.write('A claim with any detail that the evidence lacks is "unverifiable", never "supported".\n')
    (work / "experiment.toml").write_text(EXPERIMENT.format(root=ROOT.as_posix(), base=base), encoding="utf-8")
    gj("run", "experiment.toml", "--out", "runs/prompts", cwd=work)
    gj("report", "runs/prompts", cwd=work)
    gj("perturb", data, "--out", "legal_typed.jsonl", "--seed", "0", "--per-answer", "1", cwd=work)
    gj("run", "legal_typed.jsonl", "--split", "test", "--sample", "60", "--seed", "0", "--calibrate-sample", "10",
       "--judge", "quip:n=21", "--judge", "cosine", "--judge", f"error_types:model=openai/scripted,api_base={base}",
       "--out", "runs/legal", cwd=work)
    gj("report", "runs/legal", cwd=work)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def photograph(work: Path) -> None:
    """The report page, its variants section and the labelling page, in headless Chromium."""
    import httpx
    from browser import chromium
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    with chromium() as browser:
        browser.set_window_size(1400, 1000)
        browser.get((work / "runs" / "quickstart" / "report" / "report.html").as_uri())
        time.sleep(1)
        browser.save_screenshot(str(IMAGES / "report_page.png"))
        browser.get((work / "runs" / "prompts" / "report" / "report.html").as_uri())
        section = WebDriverWait(browser, 20).until(lambda b: b.find_element(By.ID, "variants"))
        browser.execute_script("arguments[0].scrollIntoView(true);", section)
        time.sleep(1)
        browser.save_screenshot(str(IMAGES / "report_variants.png"))
        port = free_port()
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1"}
        server = subprocess.Popen([sys.executable, "-m", "groundjudge.cli", "label", "runs/quickstart", "--port",
                                   str(port), "--labeller", "docs"], cwd=work, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/api/config", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.3)
            browser.get(f"http://127.0.0.1:{port}/?labeller=docs")
            WebDriverWait(browser, 30).until(lambda b: b.find_element(By.ID, "answer").text.strip())
            time.sleep(1)
            browser.save_screenshot(str(IMAGES / "labelling_page.png"))
        finally:
            server.terminate()
            server.wait(timeout=30)


def main() -> int:
    """Make the runs, take the pictures, copy the figures, write SOURCES.txt."""
    from groundjudge.testing.oracle import oracle_responder
    from groundjudge.testing.scripted_server import ScriptedLLMServer

    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gj-docs-pictures-") as tmp, \
            ScriptedLLMServer(oracle_responder) as server:
        work = Path(tmp)
        make_runs(work, server.openai_base)
        photograph(work)
        figures = {"report_quality_vs_latency.png": work / "runs/quickstart/report/quality_vs_latency.png",
                   "roc_curves.png": work / "runs/quickstart/report/roc_curves.png",
                   "error_type_heatmap.png": work / "runs/legal/report/error_type_recall.png"}
        for name, source in figures.items():
            shutil.copyfile(source, IMAGES / name)
    (IMAGES / "SOURCES.txt").write_text(f"""Pictures of the documentation, made by `python scripts/docs_pictures.py` on {date.today()}.
Data: datasets/legal_qa (the bundled legal QA sample). LLM judges: the scripted OpenAI-compatible server
(groundjudge.testing, oracle replies: it exercises the machinery and measures no model).

report_page.png               report.html of `groundjudge run datasets/legal_qa/legal_qa.jsonl --judge quip:n=21 --judge cosine`
report_quality_vs_latency.png that report's quality_vs_latency.png
roc_curves.png                that report's roc_curves.png
labelling_page.png            `groundjudge label` on that run (its first queued answer)
report_variants.png           the "Prompt variants" section of the report of a claims-chain prompt experiment
                              (built-in against a copy with one rule added, as in docs/guides/compare-prompts.md;
                              16 test answers)
error_type_heatmap.png        error_type_recall.png of the report of quip, cosine and the error-type chain on
                              `groundjudge perturb datasets/legal_qa/legal_qa.jsonl --seed 0 --per-answer 1` (60 test answers)
""", encoding="utf-8")
    print("pictures ->", IMAGES)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
