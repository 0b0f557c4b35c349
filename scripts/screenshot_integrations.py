"""Screenshots of groundjudge's verdicts inside the tools it integrates with, rebuilt from scratch into
results/integrations/ (one function per tool; README.md there says what each shows).

    python scripts/screenshot_integrations.py              # every tool whose extra is installed
    python scripts/screenshot_integrations.py --tool mlflow

mlflow: ``mlflow.genai.evaluate`` with the ``Groundedness`` scorer (judge quip) on the first answers of
datasets/legal_types' test split, logged to a sqlite store in a temporary folder; ``mlflow server`` on 127.0.0.1 over
that store; headless Chromium (tests/browser.py's settings) photographs the run's evaluation view. Run it with the
Python that has the [mlflow] extra (installed with -c constraints/integrations.txt, which holds pyarrow below 26 for
MLflow 3; docs/integrations/environment.md) and Debian's chromium + chromium-driver.

phoenix: one trace per answer logged into a ``phoenix serve`` on 127.0.0.1 (sqlite in a temporary folder), judged by
two quip judges and annotated with ``groundjudge export --to phoenix``; Chromium photographs the spans table and one
trace's annotations (scripts/screenshot_phoenix.py; the Python that has the [phoenix] extra, the same environment).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "integrations"
sys.path.insert(0, str(ROOT / "tests"))

from screenshot_common import open_page, test_rows  # noqa: E402  (scripts/ is on the path: run as a script)

MLFLOW_JUDGE = "quip:threshold=0.999"
"""The judge the MLflow scorer runs: local, no model (the screenshot rebuilds anywhere), at the threshold fitted on
legal_types' dev split in results/legal_types ("grounded only if copied")."""

MLFLOW_ROWS = 8
"""How many answers of legal_types' test split (file order) are evaluated."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(url: str, timeout_s: float = 120.0) -> None:
    """Return once ``url`` answers 200 (RuntimeError after ``timeout_s``)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not answer within {timeout_s:g} s")


def stop_group(process: subprocess.Popen) -> None:
    """SIGTERM the process group a server started (its workers too), SIGKILL what is left after 20 s."""
    import signal

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


def mlflow_evaluation(store: Path) -> tuple[str, str, dict]:
    """Evaluate the rows with the Groundedness scorer into a sqlite store: (experiment id, run id, metrics).

    The "app" is traced: a RETRIEVER span returns the row's documents and the app answers with the row's answer,
    so the scorer reads the documents from the trace, as it would from a real RAG app's.
    """
    import mlflow
    from mlflow.entities import Document, SpanType

    from groundjudge.integrations.mlflow import Groundedness

    rows = {row["id"]: row for row in test_rows(MLFLOW_ROWS)}

    @mlflow.trace(span_type=SpanType.RETRIEVER)
    def retrieve(question: str, example_id: str) -> list[Document]:
        return [Document(page_content=text, metadata={"doc_uri": f"legal_types/{example_id}/{i}"})
                for i, text in enumerate(rows[example_id]["context"])]

    @mlflow.trace
    def app(question: str, example_id: str) -> str:
        retrieve(question, example_id)
        return rows[example_id]["answer"]

    data = [{"inputs": {"question": row["question"], "example_id": row["id"]},
             "expectations": {"gold_label": row["label"], "error_type": ", ".join(row["error_types"]) or "-"}}
            for row in rows.values()]
    mlflow.set_tracking_uri(f"sqlite:///{store}")
    experiment = mlflow.set_experiment("groundjudge legal_types")
    with mlflow.start_run(run_name="groundedness-quip") as run:
        result = mlflow.genai.evaluate(data=data, predict_fn=app, scorers=[Groundedness(judge=MLFLOW_JUDGE)])
    mlflow.flush_trace_async_logging()
    return experiment.experiment_id, run.info.run_id, dict(result.metrics)


def click(driver, css: str, settle_s: float = 3.0) -> None:
    """Click the first element matching ``css`` (waiting for it, bounded), then let the page settle."""
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 30).until(expected_conditions.element_to_be_clickable(("css selector", css))).click()
    time.sleep(settle_s)


def photograph_mlflow(base: str, experiment_id: str, run_id: str, out: Path) -> list[str]:
    """The run's evaluation table (``mlflow_evaluation.png``) and one failed answer's trace with the feedback's
    rationale opened (``mlflow_feedback.png``)."""
    from browser import chromium

    out.mkdir(parents=True, exist_ok=True)
    with chromium() as driver:
        driver.set_window_size(2000, 1000)
        open_page(driver, f"{base}/#/experiments/{experiment_id}/runs/{run_id}/traces", "Groundedness")
        for close in driver.find_elements("css selector", "button[aria-label='Close']"):   # the assistant panel
            close.click()
            time.sleep(2)
        driver.save_screenshot(str(out / "mlflow_evaluation.png"))
        failed = driver.find_elements("xpath", "//*[normalize-space(text())='Fail']/ancestor::*[@role='row'][1]"
                                               "//*[starts-with(normalize-space(text()), 'tr-')]")
        failed[0].click()
        time.sleep(5)
        assess = [b for b in driver.find_elements("tag name", "button") if b.text.startswith("Assess")]
        assess[0].click()
        time.sleep(3)
        click(driver, "button[data-component-id='shared.model-trace-explorer.toggle-assessment-expanded']")
        driver.save_screenshot(str(out / "mlflow_feedback.png"))
    return ["mlflow_evaluation.png", "mlflow_feedback.png"]


def screenshot_mlflow(out: Path) -> dict:
    """MLflow's evaluation view of a run scored by Groundedness, and one trace's feedback; their facts."""
    import mlflow

    with tempfile.TemporaryDirectory(prefix="gj-mlflow-") as work:
        store = Path(work) / "mlflow.db"
        experiment_id, run_id, metrics = mlflow_evaluation(store)
        port = free_port()
        env = {**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true", "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
        server = subprocess.Popen([sys.executable, "-m", "mlflow", "server", "--backend-store-uri",
                                   f"sqlite:///{store}", "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
                                  cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)   # its own process group: stopped whole below
        try:
            base = f"http://127.0.0.1:{port}"
            wait_for(f"{base}/health")
            pictures = photograph_mlflow(base, experiment_id, run_id, out)
        finally:
            stop_group(server)
    return {"tool": "mlflow", "version": mlflow.__version__, "judge": MLFLOW_JUDGE, "rows": MLFLOW_ROWS,
            "data": "datasets/legal_types/legal_types.jsonl (test split, first rows in file order)",
            "metrics": {k: round(float(v), 4) for k, v in metrics.items()}, "pictures": pictures,
            "views": ["experiment > Evaluation runs > the run (its traces with the groundedness feedback)",
                      "one failed trace, Assessments panel, the groundedness feedback expanded"]}


def screenshot_phoenix(out: Path) -> dict:
    """Phoenix's spans table and one trace annotated by groundjudge (scripts/screenshot_phoenix.py)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from screenshot_phoenix import screenshot_phoenix as phoenix_pictures

    return phoenix_pictures(out)


TOOLS: dict[str, Callable[[Path], dict]] = {"mlflow": screenshot_mlflow, "phoenix": screenshot_phoenix}
"""Each tool's screenshot function (tool name -> function writing its PNG into the folder, returning its facts)."""

EXTRAS = {"mlflow": "mlflow", "phoenix": "phoenix"}
"""The module each tool needs (its absence skips the tool when no --tool is named)."""


def main(argv: list[str] | None = None) -> int:
    """Photograph the tools named (default: every tool whose package is installed); write facts.json."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", action="append", choices=sorted(TOOLS), help="only this tool (repeatable)")
    parser.add_argument("--out", type=Path, default=OUT, help="folder of the pictures (default results/integrations)")
    args = parser.parse_args(argv)
    import importlib.util

    tools = args.tool or [name for name in TOOLS if importlib.util.find_spec(EXTRAS.get(name, name)) is not None]
    facts_path = args.out / "facts.json"
    facts = json.loads(facts_path.read_text(encoding="utf-8")) if facts_path.exists() else {}
    for name in tools:
        started = time.monotonic()
        facts[name] = {**TOOLS[name](args.out), "date": date.today().isoformat(),
                       "seconds": round(time.monotonic() - started, 1),
                       "command": f"python scripts/screenshot_integrations.py --tool {name}"}
        print(f"{name}: {', '.join(facts[name]['pictures'])} in {args.out}", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    facts_path.write_text(json.dumps(facts, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
