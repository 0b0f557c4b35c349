"""The bundled prompt experiment (examples/prompt_experiment), end to end against the scripted server.

Three claims judges that differ only in their verification prompt (a matrix over ``prompts``), repeated twice,
and two local judges, on a sample of the bundled legal data: the expanded names, the extraction calls shared by
the three variants, the variants and stability figures, the report section, the export round trip, and the
Python API re-running it from the cache with no new call.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

import groundjudge
from groundjudge.cli import main
from groundjudge.runs.records import read_records
from groundjudge.testing.oracle import answer, best_quote, blocks, numbered
from groundjudge.testing.scripted_server import Reply, ScriptedLLMServer

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "prompt_experiment"
VARIANTS = ["claims[prompts=built-in]", "claims[prompts=checklist]", "claims[prompts=legal_errors]"]


class VariantModel:
    """Plays a judge model for the three verification prompts: the built-in one as the oracle does, the checklist
    one with another cut-off (half of the claim's words in the documents), and the legal-errors one like the
    oracle but changing its mind on a repeated request now and then (as a sampling model would)."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()
        self.kinds: Counter[str] = Counter()

    def __call__(self, request) -> Reply:
        text = request.text
        key = hashlib.sha256(json.dumps(request.body.get("messages"), sort_keys=True).encode()).hexdigest()
        self.seen[key] += 1
        if "detail by detail" in text or "legal question against the legal text" in text:
            checklist = "detail by detail" in text
            self.kinds["verify:checklist" if checklist else "verify:legal_errors"] += 1
            found = blocks(text)
            original = " ".join(found.get("document", []))
            documents = original.lower()
            verdicts = []
            for index, claim in enumerate(numbered(found["claims"][0]), start=1):
                words = re.findall(r"[a-z0-9]+", claim.lower())
                share = sum(w in documents for w in words) / max(len(words), 1)
                ok = share >= (0.5 if checklist else 0.8)
                if not checklist and self.seen[key] > 1 and int(key, 16) % 3 == 0:
                    ok = not ok     # the repeat disagrees with the first reply
                verdicts.append({"claim": index, "verdict": "supported" if ok else "contradicted",
                                 "evidence": best_quote(claim, original) if ok else "",
                                 "reason": f"{share:.2f} of the words found"})
            return Reply(content=json.dumps({"verdicts": verdicts}))
        self.kinds["extract" if "atomic claims" in text else "verify:built-in"
                   if "You verify claims against evidence" in text else "other"] += 1
        return Reply(content=json.dumps(answer(request)))


@pytest.fixture(scope="module")
def experiment(tmp_path_factory):
    """The example copied next to a scripted server: its data path, the server's address, two repeats."""
    model = VariantModel()
    server = ScriptedLLMServer(model).start()
    folder = tmp_path_factory.mktemp("experiment")
    shutil.copytree(EXAMPLE / "prompts", folder / "prompts")
    text = (EXAMPLE / "experiment.toml").read_text(encoding="utf-8")
    text = text.replace("../../datasets/legal_qa/legal_qa.jsonl", (ROOT / "datasets/legal_qa/legal_qa.jsonl").as_posix())
    text = text.replace("http://127.0.0.1:8765/v1", server.openai_base)
    text = text.replace("sample = 24", "sample = 12").replace("seed = 0", "seed = 1").replace("timeout = 900", "timeout = 30\nrepeats = 2")
    text += '\n[run]\ncache_dir = "llm-cache"     # this module\'s own call cache (relative to the file)\n'
    path = folder / "experiment.toml"
    path.write_text(text, encoding="utf-8")
    out = folder / "run"
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 0
    yield path, out, model, server
    server.stop()


@pytest.mark.slow
def test_the_matrix_expands_into_readable_names_and_records_each_prompt(experiment):
    _, out, _, _ = experiment
    header = read_records(out / "records.jsonl").header
    assert [j.spec for j in header.judges] == [*VARIANTS, "quip", "cosine"]
    by_name = {j.spec: j for j in header.judges}
    assert {by_name[v].name for v in VARIANTS} == {"claims"}
    assert by_name[VARIANTS[0]].settings["prompts"] is None
    assert by_name[VARIANTS[1]].settings["prompts"] == "checklist"      # outside the project: its name only
    # every template's full text is in the header: the variant's own file, the built-ins for the rest
    checklist = by_name[VARIANTS[1]].templates["claims_verify"]
    assert "detail by detail" in checklist.files["claims_verify.system.j2"]
    assert checklist.origin["claims_verify.system.j2"] != "built-in"
    assert checklist.origin["claims_verify.user.j2"] == "built-in"
    assert checklist.hash != by_name[VARIANTS[0]].templates["claims_verify"].hash
    assert by_name[VARIANTS[1]].templates["claims_extract"] == by_name[VARIANTS[0]].templates["claims_extract"]
    assert "facts_extract" not in by_name[VARIANTS[0]].templates      # against = "context"


def test_the_variants_share_the_extraction_calls(experiment):
    _, out, model, _ = experiment
    records = read_records(out / "records.jsonl")
    n = len({r.example.id for r in records.results})
    # one extraction per answer and repeat, for all three variants; one verification per variant, answer, repeat
    assert model.kinds["extract"] == n * 2
    assert model.kinds["verify:built-in"] == model.kinds["verify:checklist"] == model.kinds["verify:legal_errors"]
    assert model.kinds["verify:built-in"] <= n * 2
    later = [c for r in records.results if r.judge == VARIANTS[2] for c in r.result.calls if c.template == "claims_extract"]
    assert later and all(c.cached for c in later)


@pytest.mark.slow
def test_summary_compares_the_variants_and_measures_stability(experiment):
    _, out, _, _ = experiment
    summary = json.loads((out / "summary.json").read_text())
    pairs = {(v["a"], v["b"]) for v in summary["variants"]}
    assert pairs == {(VARIANTS[0], VARIANTS[1]), (VARIANTS[0], VARIANTS[2]), (VARIANTS[1], VARIANTS[2])}
    row = next(v for v in summary["variants"] if v["b"] == VARIANTS[1] and v["a"] == VARIANTS[0])
    assert row["differs"] == ["prompts"]
    lo, hi = row["metrics"]["balanced_accuracy"]["ci95"]
    assert lo <= row["metrics"]["balanced_accuracy"]["delta"] <= hi
    assert 0.0 <= row["mcnemar_p"] <= 1.0
    # the checklist prompt's model finds more claims supported than the built-in one's: they disagree somewhere
    assert row["disagree"]
    assert row["per_answer"]["a"]["input_tokens"] > 0
    for name in VARIANTS:
        stability = summary["judges"][name]["stability"]
        assert stability["repeats"] == 2 and stability["n"] == 12
    assert summary["judges"][VARIANTS[0]]["stability"]["flip_rate"] == 0.0
    assert summary["judges"][VARIANTS[0]]["stability"]["fleiss_kappa"] in (None, 1.0)
    assert summary["judges"][VARIANTS[2]]["stability"]["flip_rate"] >= 0.0
    assert "stability" not in summary["judges"]["quip"]


@pytest.mark.slow
def test_report_shows_the_variants_and_export_round_trips(experiment, tmp_path):
    pandas = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    _, out, _, _ = experiment
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 0
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "Prompt variants" in markdown and "claims[prompts=checklist]" in markdown
    assert "detail by detail" in markdown       # the diff of the verification prompts
    assert main(["export", str(out), "--format", "parquet", "--to", str(tmp_path / "export")]) == 0
    verdicts = pandas.read_parquet(tmp_path / "export" / "verdicts.parquet")
    records = read_records(out / "records.jsonl")
    assert len(verdicts) == len(records.results) == 5 * 12
    assert set(verdicts["judge"]) == {*VARIANTS, "quip", "cosine"}
    mine = {(r.judge, r.example.id): r.result.verdict.label for r in records.results}
    assert {(j, e): lab for j, e, lab in zip(verdicts["judge"], verdicts["example_id"], verdicts["label"])} == mine


@pytest.mark.slow
def test_python_api_reruns_the_experiment_from_the_cache(experiment, tmp_path):
    path, out, _, server = experiment
    before = len(server.requests)
    run = groundjudge.evaluate(str(path), out=tmp_path / "again")
    assert len(server.requests) == before          # every call answered by the cache
    first = {(r.judge, r.example.id): r.result.verdict.label for r in read_records(out / "records.jsonl").results}
    again = {(r.judge, r.example.id): r.result.verdict.label for r in run.records.results}
    assert again == first
    assert run.summary.judges[VARIANTS[1]].stability["repeats"] == 2
    assert len(run.summary.variants) == 3


@pytest.mark.slow
def test_replay_without_the_prompt_folders_rebuilds_them_from_the_header(experiment, tmp_path):
    path, out, _, server = experiment
    shutil.rmtree(path.parent / "prompts")        # the variants' folders are gone: the header has their text
    before = len(server.requests)
    assert main(["replay", str(out), "--out", str(tmp_path / "replay"), "--quiet"]) == 0   # 0: every verdict same
    assert len(server.requests) == before
    rebuilt = list((tmp_path / "replay" / "prompts").glob("*/claims_verify.system.j2"))
    assert len(rebuilt) == 2 and any("detail by detail" in p.read_text() for p in rebuilt)
