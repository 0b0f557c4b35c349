"""``groundjudge perturb`` end to end on the bundled legal QA sample: all six types written (the scripted server as
``--generator`` where no rule fires), the file loads back through groundjudge's loader, the same seed gives the same
file, the rejections are written; bad input and bad options are clear errors."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from conftest import ROOT, cli, write_jsonl

from groundjudge.cli import main
from groundjudge.formats.load import load_examples
from groundjudge.perturb import ERROR_TYPES, PerturbationRecord
from groundjudge.testing.oracle import blocks
from groundjudge.testing.scripted_server import Reply

LEGAL_QA = ROOT / "datasets" / "legal_qa" / "legal_qa.jsonl"


def scripted_generator(request) -> Reply:
    """A stand-in model: an edit that adds a remark naming the type after the answer's first long word; a
    paraphrase that opens with 'In short,'."""
    text = request.text
    answer = blocks(text)["answer"][0]
    if "Paraphrase the answer" in text:
        return Reply(content=json.dumps({"paraphrase": "In short, " + answer[0].lower() + answer[1:]}))
    word = next(w for w in re.findall(r"[A-Za-z]{7,}", answer))
    kind = re.search(r'- "(\w+)[^"]*": the answer', text).group(1).lower()
    return Reply(content=json.dumps({"before": word, "after": f"{word} (see the {kind} note)", "reason": "added"}))


@pytest.fixture(scope="module")
def perturbed(tmp_path_factory):
    """One run over the whole sample with the scripted generator (shared by the tests that read its output)."""
    from groundjudge.testing.scripted_server import ScriptedLLMServer

    out = tmp_path_factory.mktemp("perturb") / "legal.jsonl"
    with ScriptedLLMServer(scripted_generator) as server:
        spec = f"model=openai/gpt-4o-mini,api_base={server.openai_base},timeout=5"
        result = cli("perturb", str(LEGAL_QA), "--out", str(out), "--seed", "0", "--generator", spec,
                     "--no-cache", "--quiet")
        requests = len(server.requests)
    return out, result, requests, spec


@pytest.mark.slow
def test_all_six_types_are_written_and_load_back(perturbed):
    out, result, requests, _ = perturbed
    loaded = load_examples([out])
    assert loaded.formats == ["native"]
    rows = loaded.examples
    sources = [e for e in load_examples([LEGAL_QA]).examples if e.label == "grounded"]
    variants = [r for r in rows if r.label == "ungrounded"]
    assert Counter(r.error_types[0] for r in variants) == {name: len(sources) for name in ERROR_TYPES.values()}
    llm_rows = [r for r in variants if r.meta["perturbation"]["generator"].startswith("llm:")]
    assert 0 < len(llm_rows) <= requests       # the model filled the types no rule fills, and only those
    assert {r.meta["perturbation"]["rule"] for r in variants} - {"llm"}     # the rules made the rest
    for row in rows:
        record = PerturbationRecord.model_validate(row.meta["perturbation"])
        source = next(s for s in sources if s.id == record.source_id)
        assert row.meta["group"] == source.meta["group"] and row.split == source.split
        assert row.context == source.context and row.question == source.question
        if record.kind == "variant":
            slug = row.id.split("~")[1]
            assert row.id.startswith(f"{source.id}~{slug}~") and row.error_types == (ERROR_TYPES[slug],)
            assert source.answer[record.edit.before_start:record.edit.before_end] == record.edit.before
            assert row.answer[record.edit.after_start:record.edit.after_end] == record.edit.after
            assert record.check.judge == "lexical" and record.check.label == "ungrounded"
            assert record.context_sentence is not None and record.context_sentence.text in source.context_text
        else:
            assert row.label == "grounded" and row.error_types == ()
    assert sum(r.id.endswith("~orig") for r in rows) == len(sources)
    assert "kept:" in result.stdout and "Factual Inaccuracies" in result.stdout


def test_the_rejections_are_written_next_to_the_output(perturbed):
    out, result, _, _ = perturbed
    report = json.loads(out.with_name(out.name + ".rejections.json").read_text())
    assert report["check"] == "lexical" and report["sources"] == 28
    assert sum(report["rejected"].values()) == len(report["rejections"])
    assert report["kept"] == {slug: 28 for slug in ERROR_TYPES}
    for reason, n in report["rejected"].items():
        assert reason in result.stdout and n == sum(r["reason"] == reason for r in report["rejections"])


@pytest.mark.slow
def test_the_same_seed_gives_the_same_file(perturbed, tmp_path, capsys):
    out, _, _, spec = perturbed
    from groundjudge.testing.scripted_server import ScriptedLLMServer

    again = tmp_path / "again.jsonl"
    with ScriptedLLMServer(scripted_generator) as server:
        spec = spec.replace(spec.split("api_base=")[1].split(",")[0], server.openai_base)
        assert main(["perturb", str(LEGAL_QA), "--out", str(again), "--seed", "0", "--generator", spec,
                     "--no-cache", "--quiet"]) == 0
    assert again.read_bytes() == out.read_bytes()
    other = tmp_path / "other.jsonl"
    assert main(["perturb", str(LEGAL_QA), "--out", str(other), "--seed", "1", "--types", "factual",
                 "--quiet"]) == 0
    assert other.read_bytes() != out.read_bytes()
    capsys.readouterr()


def test_options_choose_types_sources_and_counts(tmp_path, capsys):
    out = tmp_path / "few.jsonl"
    assert main(["perturb", str(LEGAL_QA), "--out", str(out), "--types", "factual,terminological", "--sample", "3",
                 "--per-answer", "2", "--paraphrases", "0", "--quiet"]) == 0
    rows = load_examples([out]).examples
    assert sum(r.id.endswith("~orig") for r in rows) == 3 and not any("~para~" in r.id for r in rows)
    slugs = Counter(r.id.split("~")[1] for r in rows if r.label == "ungrounded")
    assert set(slugs) == {"factual", "terminological"} and max(slugs.values()) <= 6
    assert max(Counter(r.id.rsplit("~", 1)[0] for r in rows if r.label == "ungrounded").values()) == 2
    capsys.readouterr()


def test_bad_input_names_file_line_and_field(tmp_path, capsys):
    bad = write_jsonl(tmp_path / "bad.jsonl", [
        {"id": "a", "context": ["Rent is due within 30 days."], "answer": "Rent is due in 30 days.",
         "label": "grounded"},
        {"id": "b", "context": ["Rent is due within 30 days."], "label": "grounded"}])
    assert main(["perturb", str(bad), "--out", str(tmp_path / "out.jsonl")]) == 2
    assert "bad.jsonl:2: field 'answer'" in capsys.readouterr().err
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("args,message", [
    (["--types", "facts"], "unknown error type 'facts'"),
    (["--per-answer", "0"], "--per-answer must be at least 1"),
    (["--generator-only"], "--generator-only needs --generator"),
    (["--generator", "model=x,colour=red"], "no setting 'colour'"),
    (["--label", "unlabelled"], "no unlabelled answers to perturb"),
])
def test_bad_options_are_clear_errors(tmp_path, capsys, args, message):
    assert main(["perturb", str(LEGAL_QA), "--out", str(tmp_path / "o.jsonl"), "--quiet", *args]) == 2
    assert message in capsys.readouterr().err
