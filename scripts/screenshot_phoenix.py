"""Phoenix's part of scripts/screenshot_integrations.py: groundjudge's annotations on traced RAG answers.

A Phoenix server on 127.0.0.1 with sqlite in a temporary folder (tests/phoenix_server.py); one trace per answer of
datasets/legal_types' test split (first rows in file order): a ``rag_answer`` span (question in, answer out) with a
``retrieve`` child (the documents out), logged through Phoenix's REST API; ``groundjudge run`` judges the answers,
each example carrying its span's id, and ``groundjudge export --to phoenix`` annotates the spans; headless Chromium
photographs the project's spans table (annotation columns) and one ungrounded answer's trace with its annotations.
Run it with the Python that has the [phoenix] extra and Debian's chromium + chromium-driver.
"""

from __future__ import annotations

import json
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

PHOENIX_JUDGES = ("quip:threshold=0.999", "quip:n=11")
"""Two local judges, no model (the first at the threshold fitted on legal_types' dev split in results/legal_types)."""

PHOENIX_ROWS = 8
"""How many answers of legal_types' test split (file order) are traced and judged."""

PROJECT = "default"


def _ids(index: int) -> tuple[str, str, str]:
    """Trace id, answer span id and retrieval span id of the ``index``-th answer (fixed hex)."""
    return f"{index + 1:032x}", f"{0xa000 + index:016x}", f"{0xb000 + index:016x}"


def trace_rows(rows: list[dict], client) -> list[dict]:
    """Log one trace per row into Phoenix; the rows with their answer span's ids in ``meta``."""
    start = datetime.now(timezone.utc) - timedelta(minutes=len(rows))
    spans, traced = [], []
    for index, row in enumerate(rows):
        trace_id, answer_span, retrieve_span = _ids(index)
        begin = start + timedelta(minutes=index)
        spans.append({"name": "rag_answer", "span_kind": "CHAIN", "status_code": "OK",
                      "context": {"trace_id": trace_id, "span_id": answer_span},
                      "start_time": begin.isoformat(), "end_time": (begin + timedelta(seconds=2)).isoformat(),
                      "attributes": {"openinference.span.kind": "CHAIN", "input.value": row["question"],
                                     "output.value": row["answer"]}})
        spans.append({"name": "retrieve", "span_kind": "RETRIEVER", "status_code": "OK", "parent_id": answer_span,
                      "context": {"trace_id": trace_id, "span_id": retrieve_span},
                      "start_time": begin.isoformat(), "end_time": (begin + timedelta(seconds=1)).isoformat(),
                      "attributes": {"openinference.span.kind": "RETRIEVER", "input.value": row["question"],
                                     "output.value": "\n\n".join(row["context"])}})
        traced.append({**row, "meta": {**row.get("meta", {}), "trace_id": trace_id, "span_id": answer_span}})
    client.spans.log_spans(project_identifier=PROJECT, spans=spans)
    deadline = time.monotonic() + 60
    while len(client.spans.get_spans(project_identifier=PROJECT, limit=1000)) < len(spans):
        if time.monotonic() > deadline:
            raise RuntimeError("Phoenix did not store the spans within 60 s")
        time.sleep(0.5)
    return traced


def judge_and_export(rows: list[dict], work: Path, endpoint: str) -> dict:
    """``groundjudge run`` on the rows, then ``export --to phoenix``; the export's counts and the verdicts."""
    from groundjudge.cli import main
    from groundjudge.integrations.phoenix import export_run
    from groundjudge.runs.records import read_records

    data = work / "traced.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    argv = ["run", str(data), "--dev-fraction", "0", "--out", str(work / "run"), "--quiet"]
    for judge in PHOENIX_JUDGES:
        argv += ["--judge", judge]
    if main(argv) != 0:
        raise RuntimeError("groundjudge run failed")
    sent = export_run(work / "run", endpoint)
    verdicts = {f"{r.judge} {r.example.id}": r.result.verdict.label
                for r in read_records(work / "run" / "records.jsonl").results}
    return {"span_annotations": sent.span_annotations, "verdicts": verdicts}


def photograph_phoenix(base: str, out: Path, trace_id: str) -> list[str]:
    """The project's spans table with the annotation summaries (``phoenix_spans.png``) and the trace ``trace_id``
    with its annotations opened (``phoenix_trace.png``)."""
    import base64

    from browser import chromium
    from screenshot_common import open_page

    project = base64.b64encode(b"Project:1").decode()   # the first project: "default"
    out.mkdir(parents=True, exist_ok=True)
    with chromium() as driver:
        driver.set_window_size(2000, 1000)
        open_page(driver, f"{base}/projects/{project}/spans", "rag_answer")
        driver.save_screenshot(str(out / "phoenix_spans.png"))
        open_page(driver, f"{base}/projects/{project}/traces/{trace_id}", "Annotations")
        driver.find_element("xpath", "//*[normalize-space(text())='Annotations']").click()   # open the section
        time.sleep(3)
        for button in driver.find_elements("xpath", "//button[normalize-space(.)='Table']"):   # label, score, why
            button.click()
            time.sleep(3)
        driver.save_screenshot(str(out / "phoenix_trace.png"))
    return ["phoenix_spans.png", "phoenix_trace.png"]


def screenshot_phoenix(out: Path) -> dict:
    """Phoenix's spans table and one trace, annotated by groundjudge; their facts."""
    import phoenix

    from phoenix_server import phoenix_server
    from screenshot_common import test_rows

    from groundjudge.integrations.phoenix import client_for

    rows = test_rows(PHOENIX_ROWS)
    with tempfile.TemporaryDirectory(prefix="gj-phoenix-shot-") as work, phoenix_server() as base:
        traced = trace_rows(rows, client_for(base))
        facts = judge_and_export(traced, Path(work), base)
        shown = next((row for row in traced if row["label"] == "ungrounded"), traced[0])
        pictures = photograph_phoenix(base, out, shown["meta"]["trace_id"])
    return {"tool": "phoenix", "version": phoenix.__version__, "judges": list(PHOENIX_JUDGES), "rows": PHOENIX_ROWS,
            "data": "datasets/legal_types/legal_types.jsonl (test split, first rows in file order)",
            "span_annotations": facts["span_annotations"], "verdicts": facts["verdicts"], "pictures": pictures,
            "trace_shown": shown["id"],
            "views": ["project 'default' > Spans: the rag_answer spans, each with its 2 groundjudge annotations, and "
                      "the project's annotation means",
                      f"the trace of {shown['id']} (an ungrounded answer), its annotations"]}
