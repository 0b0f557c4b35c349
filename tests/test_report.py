"""`groundjudge report` on recorded runs: Markdown numbers, plots, and a safe self-contained HTML page."""

from __future__ import annotations

import json
import re
import struct

import pytest
from conftest import ROOT, cli, qa_rows, rent_rows, write_jsonl

from groundjudge.report.plots import pareto
from groundjudge.report.compare import compare, display_name
from groundjudge.report.html import _script_json

SUMMEDITS = sorted(str(p) for p in (ROOT / "datasets" / "summedits_sample").glob("*.json"))
HOSTILE = '<img src=x onerror="window.__xss=1"> The county court </script><b>hears</b> disputes & appeals.'
LLM_LABEL = "claims:model=openai/gpt-4o-mini,threshold=1.0"


def hostile_rows() -> list[dict]:
    """qa rows with dev/test splits, domains, and one answer that is an HTML injection attempt."""
    rows = qa_rows(6)
    rows[9]["answer"] = HOSTILE
    return [{**r, "split": "dev" if i < 4 else "test", "meta": {"domain": "leases" if i % 4 < 2 else "courts"}}
            for i, r in enumerate(rows)]


@pytest.fixture
def runs(tmp_path, llm_server):
    """Local judges on the bundled SummEdits samples, and an LLM judge (scripted server) beside quip on QA data."""
    local, llm = tmp_path / "local", tmp_path / "llm"
    cli("run", *SUMMEDITS, "--judge", "quip:n=21", "--judge", "quip:n=8", "--judge", "span",
        "--out", str(local), "--quiet")
    data = write_jsonl(tmp_path / "qa.jsonl", hostile_rows())
    spec = f"claims:model=openai/gpt-4o-mini,api_base={llm_server.openai_base},threshold=1.0"
    cli("run", str(data), "--judge", spec, "--judge", "quip:n=8", "--out", str(llm), "--quiet")
    return local, llm, spec


def expected_row(s: dict, at: str = "") -> list[str]:
    """A leaderboard row as report.md must print it, from summary.json alone (``at``: the `` @N`` latency cells
    carry when the judges' latencies were measured at different concurrencies)."""
    def ci(metric):
        lo, hi = s["ci95"][metric]
        return f"{s[metric]:.3f} [{lo:.2f}, {hi:.2f}]"
    def ranking(metric):
        r = s.get("ranking") or {}
        if r.get(metric) is None:
            return "constant" if r.get("constant_score") else "-"
        if metric == "pr_auc":
            return f"{r['pr_auc']:.3f} (chance {r['pr_auc_baseline']:.2f})"
        lo, hi = r["roc_auc_ci95"]
        return f"{r['roc_auc']:.3f} [{lo:.2f}, {hi:.2f}]"
    n = s["n_judged"]
    return [ci("balanced_accuracy"), ci("macro_f1"), ranking("roc_auc"), ranking("pr_auc"),
            f"{s['macro_precision']:.3f}", f"{s['macro_recall']:.3f}",
            f"{s['accuracy']:.3f}", str(s["n"]), str(s["n_abstained"]), f"{s['latency_s']['p50']:.4f}{at}",
            f"{s['latency_s']['p95']:.4f}{at}", f"{1000 * s['cost_usd'] / n:.4f}",
            f"{(s['tokens']['input'] + s['tokens']['output']) / n:.0f}"]


def markdown_rows(markdown: str, heading: str) -> dict[str, list[str]]:
    section = markdown.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("|").split(" | ") for line in section.splitlines() if line.startswith("| ")]
    return {cells[0].strip(): [c.strip() for c in cells[1:]] for cells in rows[1:]}


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR" and data.endswith(b"IEND\xaeB`\x82")
    return struct.unpack(">II", data[16:24])


@pytest.mark.slow
def test_report_of_two_runs_matches_their_records(runs, tmp_path):
    local, llm, spec = runs
    out = tmp_path / "report"
    printed = cli("report", str(local), str(llm), "--out", str(out)).stdout
    assert str(out / "report.md") in printed and str(out / "report.html") in printed
    assert "different data" in printed

    # report.md: every leaderboard number is summary.json's, formatted; quip:n=8 ran twice, so it is prefixed
    markdown = (out / "report.md").read_text()
    summaries = {run: json.loads((run / "summary.json").read_text())["judges"] for run in (local, llm)}
    expected = {"quip:n=21": summaries[local]["quip:n=21"], "local/quip:n=8": summaries[local]["quip:n=8"],
                "span": summaries[local]["span"], "llm/quip:n=8": summaries[llm]["quip:n=8"],
                LLM_LABEL: summaries[llm][spec]}
    board = markdown_rows(markdown, "Leaderboard")
    assert set(board) == set(expected)
    ats = {f"@{stats['latency_concurrency']}" for stats in expected.values()}
    header = next(line for line in markdown.splitlines() if line.startswith("| judge |"))
    assert f"latency p50 s {ats.pop() if len(ats) == 1 else '@concurrency'}" in header
    for label, stats in expected.items():
        at = "" if len({s["latency_concurrency"] for s in expected.values()}) == 1 \
            else f" @{stats['latency_concurrency']}"
        assert board[label] == expected_row(stats, at), label
    assert summaries[llm][spec]["cost_usd"] > 0 and float(board[LLM_LABEL][11]) > 0
    assert "different data" in markdown and "How to read it" in markdown
    # McNemar matrix: across runs only where examples are shared; within a run, the run's own p-values
    matrix = markdown_rows(markdown, "McNemar (exact) p-values")
    assert len(matrix) == 5 and all(len(row) == 5 for row in matrix.values())
    p_local = json.loads((local / "summary.json").read_text())["pairwise"]
    pair = next(p for p in p_local if {p["a"], p["b"]} == {"quip:n=21", "span"})
    row = next(cells for name, cells in matrix.items() if name.endswith(" quip:n=21"))
    assert f"{pair['mcnemar_p']:.2g}" in " ".join(row) and "n/a" in row
    thresholds = markdown_rows(markdown, "Thresholds")
    assert thresholds[LLM_LABEL] == ["1.0000", "setting"]
    assert thresholds["llm/quip:n=8"][1] == "split:dev"
    assert f"{summaries[llm]['quip:n=8']['threshold']:.4f}" == thresholds["llm/quip:n=8"][0]
    assert "## Missed errors by gold error type" in markdown and "Misattributions" in markdown

    # plots: valid PNGs, all linked from the Markdown
    pngs = {p.name: p for p in out.glob("*.png")}
    assert {"quality_vs_latency.png", "quality_vs_cost.png", "confusion_matrices.png", "threshold_sweep.png",
            "error_types.png", "slices.png"} <= set(pngs)
    for name, path in pngs.items():
        width, height = png_size(path)
        assert width > 300 and height > 200
        assert f"({name})" in markdown

    # report.html: self-contained, the data embedded, hostile text escaped
    page = (out / "report.html").read_text()
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page, re.IGNORECASE)
    assert not re.search(r"<link\b|@import|url\(", page, re.IGNORECASE)
    assert "innerHTML" not in page and "insertAdjacentHTML" not in page and "document.write" not in page
    assert len(re.findall(r'src="data:image/png;base64,', page)) == len(pngs)
    assert "<img src=x" not in page and "</script><b>" not in page
    blobs = re.findall(r'<script type="application/json" id="data">(.*?)</script>', page, re.DOTALL)
    assert len(blobs) == 1
    data = json.loads(blobs[0])
    assert HOSTILE in {e["answer"] for e in data["examples"]}
    assert {row["judge"] for row in data["leaderboard"]} == {"quip:n=21", "local/quip:n=8", "span", "llm/quip:n=8",
                                                            spec}
    for row in data["leaderboard"]:
        label = row["label"]
        assert row["cells"]["balanced_accuracy"]["value"] == expected[label]["balanced_accuracy"]
        assert row["cells"]["macro_f1"]["ci"] == expected[label]["ci95"]["macro_f1"]
    assert data["total_examples"] == len(data["examples"]) == 93 + 8      # SummEdits test part + QA test part
    calls = [c for e in data["examples"] for v in e["verdicts"].values() for c in v["calls"]]
    assert {c["template"] for c in calls} >= {"claims_extract", "claims_verify"}
    assert all(isinstance(m["content"], int) and data["strings"][m["content"]] for c in calls for m in c["messages"])
    marks = [c for e in data["examples"] for v in e["verdicts"].values() for c in v["claims"]
             if c["evidence"] and c["evidence"]["start"] is not None]
    assert marks, "evidence spans located in their documents"


@pytest.mark.slow
def test_one_run_defaults_to_its_report_folder_and_caps_the_page(tmp_path):
    data = write_jsonl(tmp_path / "qa.jsonl", hostile_rows())
    run = tmp_path / "run"
    cli("run", str(data), "--judge", "quip:n=8", "--judge", "span", "--out", str(run), "--quiet")
    cli("report", str(run), "--max-examples", "3")
    out = run / "report"
    assert (out / "report.md").exists() and (out / "report.html").exists()
    assert "different data" not in (out / "report.md").read_text()
    page = (out / "report.html").read_text()
    data = json.loads(re.search(r'id="data">(.*?)</script>', page, re.DOTALL).group(1))
    assert data["total_examples"] == 8 and len(data["examples"]) == 3 and data["max_examples"] == 3
    # disagreements come first: span abstains on every long answer, so each kept example is one
    assert all(len({v["label"] for v in e["verdicts"].values()}) > 1 for e in data["examples"])
    not_a_run = cli("report", str(tmp_path), check=False)
    assert not_a_run.returncode != 0 and "records.jsonl" in not_a_run.stderr


def test_display_names_drop_connection_settings():
    assert display_name("claims:model=m,api_base=http://h:1/v1,threshold=1.0") == "claims:model=m,threshold=1.0"
    assert display_name("direct:api_base=http://h/v1,model=m") == "direct:model=m"
    assert display_name("cascade:local=quip:n=21,llm=claims:model=m;api_base=http://h/v1;timeout=5,band=0.3-0.8") \
        == "cascade:local=quip:n=21,llm=claims:model=m,band=0.3-0.8"
    assert display_name("quip:n=8") == "quip:n=8" and display_name("span") == "span"


def test_pareto_frontier_and_script_json():
    points = [(0.0, 0.5), (0.1, 0.7), (0.2, 0.6), (0.3, 0.9), (0.0, 0.4)]
    assert pareto(points) == [0, 1, 3]
    text = _script_json({"a": "</script><script>alert(1)</script> & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"a": "</script><script>alert(1)</script> & \u2028"}


@pytest.mark.slow
def test_common_restricts_every_run_to_the_shared_examples(tmp_path):
    data = write_jsonl(tmp_path / "rent.jsonl", rent_rows(12))
    whole, part = tmp_path / "whole", tmp_path / "part"
    cli("run", str(data), "--judge", "quip:n=8", "--judge", "span", "--out", str(whole), "--quiet")
    cli("run", str(data), "--judge", "quip:n=21", "--sample", "10", "--seed", "3", "--out", str(part), "--quiet")
    judged = {run: {json.loads(line)["example"]["id"] for line in (run / "records.jsonl").read_text().splitlines()
                    if json.loads(line)["kind"] == "result"} for run in (whole, part)}
    sampled = judged[part]
    assert len(sampled) == 10 and sampled < judged[whole]

    merged = compare([whole, part])
    assert "different data" in merged.notes[0]
    assert merged.judges["quip:n=8"]["n"] == len(judged[whole]) > 10 and merged.judges["quip:n=21"]["n"] == 10

    common = compare([whole, part], common_only=True)
    assert common.notes == ["Every run is restricted to the 10 examples all of them judged (--common): the rows are "
                            "on the same data."]
    assert {stats["n"] for stats in common.judges.values()} == {10}
    # the restricted summaries are the whole run's verdicts on those 10 examples, recomputed
    verdicts = {r.example.id: r.result.verdict.label for r in merged.results["quip:n=8"]}
    kept = common.results["quip:n=8"]
    assert {r.example.id for r in kept} == sampled and all(verdicts[r.example.id] == r.result.verdict.label
                                                         for r in kept)
    correct = sum(r.result.verdict.label == r.example.label for r in kept)
    assert common.judges["quip:n=8"]["accuracy"] == pytest.approx(correct / 10)
    assert common.judges["quip:n=21"] == merged.judges["quip:n=21"]        # already on the shared examples

    out = tmp_path / "report"
    printed = cli("report", str(whole), str(part), "--common", "--out", str(out)).stdout
    assert "restricted to the 10 examples" in printed
    board = markdown_rows((out / "report.md").read_text(), "Leaderboard")
    assert {cells[7] for cells in board.values()} == {"10"}        # n, after ROC AUC and PR AUC

    other = write_jsonl(tmp_path / "other.jsonl", [{**r, "id": "x" + r["id"]} for r in rent_rows(3)])
    elsewhere = tmp_path / "elsewhere"
    cli("run", str(other), "--judge", "quip:n=8", "--out", str(elsewhere), "--quiet")
    failed = cli("report", str(whole), str(elsewhere), "--common", "--out", str(out), check=False)
    assert failed.returncode == 2 and "no example in common" in failed.stderr
