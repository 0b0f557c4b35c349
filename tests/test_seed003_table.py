"""scripts/seed003_table.py: our numbers recomputed from the records, beside the seed paper's published rows."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import defaultdict
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from conftest import ROOT, cli, qa_rows, write_jsonl
from sklearn.metrics import accuracy_score, precision_recall_fscore_support

from groundjudge.judges import BUILTIN

LEGAL = ROOT / "datasets" / "legal_qa" / "legal_qa.jsonl"


def load_script() -> ModuleType:
    """The script as a module (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location("seed003_table", ROOT / "scripts" / "seed003_table.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def runs(tmp_path) -> list[Path]:
    """Two cheap runs on two data sets (the legal sample, and small QA rows), with lying summary.json files."""
    legal, qa = tmp_path / "legal", tmp_path / "qa"
    cli("run", str(LEGAL), "--judge", "quip:n=21", "--judge", "span", "--out", str(legal), "--quiet")
    data = write_jsonl(tmp_path / "qa.jsonl", qa_rows(6))
    cli("run", str(data), "--judge", "quip:n=8", "--judge", "span", "--out", str(qa), "--quiet")
    for run in (legal, qa):                        # the script must recompute, never read these
        summary = json.loads((run / "summary.json").read_text())
        for stats in summary["judges"].values():
            stats.update(macro_f1=0.999, macro_precision=0.999, macro_recall=0.999, accuracy=0.999)
        (run / "summary.json").write_text(json.dumps(summary))
    return [legal, qa]


def by_hand(run: Path) -> dict[str, dict]:
    """Per judge spec, from the raw records: sklearn macro P/R/F1 (abstain is neither class), accuracy,
    mean latency, and per gold error type the ungrounded answers called ungrounded."""
    lines = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()[1:] if line.strip()]
    per_judge = defaultdict(list)
    for record in lines:
        per_judge[record["judge"]].append(record)
    out = {}
    for spec, records in per_judge.items():
        gold = [r["example"]["label"] for r in records]
        pred = [r["result"]["verdict"]["label"] for r in records]
        p, r, f1, _ = precision_recall_fscore_support(gold, pred, labels=["ungrounded", "grounded"],
                                                      average="macro", zero_division=0)
        caught: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for record, label in zip(records, pred):
            for kind in record["example"]["error_types"]:
                caught[kind][0] += label == "ungrounded"
                caught[kind][1] += 1
        out[spec] = {"macro_precision": p, "macro_recall": r, "macro_f1": f1, "accuracy": accuracy_score(gold, pred),
                     "balanced_accuracy": r, "n": len(gold), "n_abstained": pred.count("abstain"),
                     "latency_mean_s": float(np.mean([x["result"]["latency_s"] for x in records])),
                     "caught": {k: tuple(v) for k, v in caught.items()}}
    return out


@pytest.mark.slow
def test_numbers_are_recomputed_and_paper_rows_printed(runs, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    script = load_script()
    md, numbers = tmp_path / "t.md", tmp_path / "t.json"
    assert script.main([*map(str, runs), "--out", str(md), "--json", str(numbers)]) == 0
    printed, markdown, result = capsys.readouterr().out, md.read_text(), json.loads(numbers.read_text())

    assert [d["runs"] for d in result["datasets"]] == [[str(runs[0])], [str(runs[1])]]
    abstained = 0
    for dataset, run in zip(result["datasets"], runs):
        expected = by_hand(run)
        ours = {row["spec"]: row for row in dataset["rows"] if row["source"] == "ours"}
        assert ours.keys() == expected.keys()
        for spec, want in expected.items():
            for metric in ("macro_precision", "macro_recall", "macro_f1", "accuracy", "balanced_accuracy",
                           "n", "n_abstained", "latency_mean_s"):
                assert ours[spec][metric] == pytest.approx(want[metric]), (spec, metric)
            assert ours[spec]["usd_per_response"] == 0.0
            abstained += want["n_abstained"]
        got = {row["spec"]: {k: (v["caught"], v["n"]) for k, v in row["per_type"].items()}
               for row in dataset["error_types"]}
        assert got == {spec: want["caught"] for spec, want in expected.items()}
        assert ours["span"]["family"] == "no counterpart"
    assert abstained > 0                           # the abstention rule was exercised
    assert result["datasets"][0]["rows"][0]["family"] == "Quoted Information Precision"
    assert not any(r["judge"] == "COS_SIM" for d in result["datasets"] for r in d["rows"])  # only corresponding rows

    quip = next(r for r in result["datasets"][0]["rows"] if r["judge"] == "QUIP")
    assert (quip["source"], quip["n"], quip["macro_precision"], quip["macro_recall"], quip["macro_f1"],
            quip["accuracy"]) == ("paper, Table 3 (test)", 316, 0.560, 0.509, 0.379, 0.509)
    for text in (printed, markdown):
        assert "not on ours" in text
        assert "paper, Table 3 (test)" in text and "QUIP" in text and "0.379" in text
        assert "paper, Table 4 (dev)" in text and "DeepEval Claims Verify" in text and "0.33 (1/3)" in text
    row = next(line for line in markdown.splitlines() if line.startswith("| ours |") and "quip:n=21" in line)
    legal_quip = by_hand(runs[0])["quip:n=21"]
    assert f"| {legal_quip['macro_f1']:.3f} |" in row and "0.999" not in row


def test_every_judge_has_a_family() -> None:
    script = load_script()
    assert set(script.JUDGE_FAMILIES) == set(BUILTIN)
    assert {family for family, _ in script.JUDGE_FAMILIES.values()} <= {*script.FAMILIES, script.NO_COUNTERPART}
    assert {row.family for row in script.PAPER_ROWS} == set(script.FAMILIES)
