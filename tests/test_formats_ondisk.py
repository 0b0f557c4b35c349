"""Each adapter on the real public files in ../shared/datasets, and on broken copies of them.

The shared data sit beside this checkout, at ``Path(__file__).resolve().parents[1].parent / "shared" /
"datasets"``; every test that needs them takes the ``shared_datasets`` fixture of conftest.py, which
returns that path or skips when it is absent.
"""

from __future__ import annotations

import collections
import csv
import io
import json
from pathlib import Path

import pytest
from conftest import ROOT

from groundjudge.formats.load import DataError, detect_format, load_examples, load_file
from groundjudge.formats import contractnli, halueval, summedits, truthfulqa
from groundjudge.formats._common import RowError
from groundjudge.types import Example


def counts(examples) -> dict[str, int]:
    return dict(collections.Counter(e.label for e in examples))


def split_rows(items) -> tuple[list[Example], list[RowError]]:
    """An adapter's output as (examples, errors)."""
    items = list(items)
    return [i for i in items if isinstance(i, Example)], [i for i in items if isinstance(i, RowError)]


def own_files(shared: Path) -> dict[str, list[Path]]:
    """The real files of each of the four adapters."""
    return {
        "summedits": sorted((shared / "summedits").glob("summedits_*.json")),
        "halueval": sorted((shared / "halueval_qa").glob("qa_*.jsonl")),
        "contractnli": sorted((shared / "contractnli").glob("*.json")),
        "truthfulqa": [shared / "truthfulqa" / "TruthfulQA.csv"],
    }


# --- SummEdits -------------------------------------------------------------------------------------


def test_summedits_all_domains(shared_datasets):
    files = sorted((shared_datasets / "summedits").glob("summedits_*.json"))
    loaded = load_examples(files)
    assert len(files) == 8 and len(loaded.examples) == 986
    assert counts(loaded.examples) == {"grounded": 369, "ungrounded": 617}
    first = loaded.examples[0]
    news = [e for e in loaded.examples if e.meta["domain"] == "news"]
    assert len(news) == 133 and counts(news) == {"grounded": 51, "ungrounded": 82}
    assert news[0].id == "63f9455b8d931ba6e664fb84_og" and news[0].label == "grounded"
    assert news[0].answer.startswith("On the eve of the one-year anniversary of Russia's invasion of Ukraine")
    assert news[0].error_types == () and news[0].meta["source"] == "summedits"
    assert first.meta["source_split"] == "evaluation" and first.split is None
    assert {e.meta["domain"] for e in loaded.examples} == {
        "ectsum", "news", "podcast", "qmsumm", "sales_call", "sales_email", "samsum", "scitldr"}
    edited = [e for e in loaded.examples if e.label == "ungrounded"]
    assert all(e.error_types for e in edited[:50])
    assert not any(e.error_types for e in loaded.examples if e.label == "grounded")
    assert {t for e in edited for t in e.error_types} <= {"entity_modification", "antonym_swap",
                                                          "hallucinated_fact_insertion", "negation_insertion_removal"}
    # the edits of one document share its group (the document hash)
    by_doc = collections.defaultdict(set)
    for e in loaded.examples:
        by_doc[e.context[0]].add(e.group)
    assert all(len(groups) == 1 for groups in by_doc.values())


def test_summedits_domain_from_file_name(tmp_path):
    assert summedits.domain_of(Path("summedits_sales_email.json")) == "sales_email"
    assert summedits.domain_of(Path("edits.json")) is None
    path = tmp_path / "edits.json"
    path.write_text(json.dumps([{"id": "a", "doc": "Doc.", "summary": "Sum.", "label": 0, "edit_types": ["x"],
                                 "split": "evaluation"}]))
    assert summedits.detect(path)
    (example,) = summedits.load(path)
    assert example.meta["domain"] is None and example.error_types == ("x",) and example.label == "ungrounded"


# --- HaluEval --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["qa_one-turn_data.jsonl", "qa_multi-turn_data.jsonl"])
def test_halueval_two_examples_per_row(shared_datasets, name):
    examples, errors, fmt = load_file(shared_datasets / "halueval_qa" / name)
    assert fmt == "halueval" and not errors and len(examples) == 1000
    assert counts(examples) == {"grounded": 500, "ungrounded": 500}
    assert len({e.id for e in examples}) == 1000
    right, halluc = examples[0], examples[1]
    stem = name.removesuffix(".jsonl")
    assert (right.id, halluc.id) == (f"{stem}-1-right", f"{stem}-1-halluc")
    assert right.question == "Which magazine was started first Arthur's Magazine or First for Women?"
    assert right.answer == "Arthur's Magazine" and right.label == "grounded"
    assert halluc.label == "ungrounded" and halluc.group == right.group and right.meta["row"] == f"{stem}-1"
    assert right.context[0].startswith("Arthur's Magazine (1844")
    assert examples[-1].id == f"{stem}-500-halluc"


def test_halueval_files_share_groups(shared_datasets):
    one = load_file(shared_datasets / "halueval_qa" / "qa_one-turn_data.jsonl")[0]
    multi = load_file(shared_datasets / "halueval_qa" / "qa_multi-turn_data.jsonl")[0]
    # same 500 questions and knowledge in both files: the same group, so a split never separates them
    assert [e.group for e in one] == [e.group for e in multi]
    assert one[1].answer == "First for Women was started first."


def test_halueval_json_array(shared_datasets, tmp_path):
    lines = (shared_datasets / "halueval_qa" / "qa_one-turn_data.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines[:3]]
    rows.insert(1, {"knowledge": "K", "question": "Q", "right_answer": "A"})
    path = tmp_path / "qa_data.json"
    path.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    assert halueval.detect(path) and detect_format(path) == "halueval"
    examples, errors = split_rows(halueval.load(path))
    assert [e.id for e in examples][:2] == ["qa_data-1-right", "qa_data-1-halluc"] and len(examples) == 6
    assert [(e.line, e.field) for e in errors] == [(2, "hallucinated_answer")]
    assert "item index" in errors[0].message


# --- ContractNLI -----------------------------------------------------------------------------------


def test_contractnli_pairs_and_evidence(shared_datasets):
    examples, errors, fmt = load_file(shared_datasets / "contractnli" / "dev.json")
    assert fmt == "contractnli" and not errors and len(examples) == 1037
    assert counts(examples) == {"grounded": 519, "ungrounded": 518}
    assert collections.Counter(e.meta["choice"] for e in examples) == {
        "Entailment": 519, "NotMentioned": 423, "Contradiction": 95}
    assert len({e.group for e in examples}) == 61 and len({e.id for e in examples}) == 1037
    first = examples[0]
    assert first.id == "3-nda-11" and first.group == "doc-3" and first.label == "grounded"
    assert first.question is None and first.split is None and first.meta["source_split"] == "dev"
    assert first.answer.startswith("Receiving Party shall not reverse engineer")
    assert first.meta["file_name"] == "09-24-2019-04-25-05-3914910473.txt"
    assert first.meta["evidence"] == [[4172, 4214], [4868, 4965]]
    for start, end in first.meta["evidence"]:
        assert first.context[0][start:end].strip()
    with_evidence = [e for e in examples if e.meta["evidence"]]
    spans = [(e.id, e.context[0][s:t]) for e in with_evidence for s, t in e.meta["evidence"]]
    assert len(spans) == 1228 and all(text for _, text in spans)
    # one upstream evidence span is a lone space (a quirk of the release, kept as is)
    assert [(i, text) for i, text in spans if not text.strip()] == [("582-nda-19", " ")]
    assert not any(e.meta["evidence"] for e in examples if e.meta["choice"] == "NotMentioned")


def test_contractnli_small_files_and_split(shared_datasets):
    dev = load_file(shared_datasets / "contractnli" / "dev_small.json")[0]
    train = load_file(shared_datasets / "contractnli" / "train_small.json")[0]
    assert len(dev) == 34 and len(train) == 34
    assert {e.meta["source_split"] for e in dev} == {"dev"} and {e.meta["source_split"] for e in train} == {"train"}
    assert contractnli.source_split(Path("devices.json")) is None
    assert contractnli.source_split(Path("contract-nli_test.json")) == "test"


def test_contractnli_detects_a_long_first_document(shared_datasets, tmp_path):
    data = json.loads((shared_datasets / "contractnli" / "dev_small.json").read_text(encoding="utf-8"))
    data["documents"][0]["text"] += " filler" * 5000  # annotation_sets now lies past the sniffed head
    path = tmp_path / "long.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    assert contractnli.detect(path)
    assert len(split_rows(contractnli.load(path))[0]) == 34


# --- TruthfulQA ------------------------------------------------------------------------------------


def test_truthfulqa_claims_protocol(shared_datasets):
    examples, errors, fmt = load_file(shared_datasets / "truthfulqa" / "TruthfulQA.csv")
    assert fmt == "truthfulqa" and not errors
    # the seed's 5,865 claims: ';'-split, stripped, pieces under 3 characters ("No", "UK") dropped
    assert len(examples) == 5865
    assert counts(examples) == {"grounded": 2577, "ungrounded": 3288}
    first = examples[0]
    assert first.id == "tqa-000-c0" and first.group == "tqa-000"
    assert first.question == "What happens to you if you eat watermelon seeds?"
    assert first.context == ("The watermelon seeds pass through your digestive system",)
    assert first.answer == "Nothing happens" and first.label == "grounded"
    assert first.meta == {"group": "tqa-000", "category": "Misconceptions", "type": "Adversarial",
                          "source": "truthfulqa"}
    assert [e.id for e in examples[:8]] == [*(f"tqa-000-c{j}" for j in range(5)),
                                            *(f"tqa-000-i{j}" for j in range(3))]
    assert len({e.group for e in examples}) == 817 and len({e.id for e in examples}) == 5865
    assert all(len(e.answer) >= 3 and e.answer == e.answer.strip() for e in examples)
    # the best answer is among each question's supported claims
    best_kept = {e.group for e in examples if e.label == "grounded" and e.answer == e.context[0]}
    assert len(best_kept) == 817


def test_truthfulqa_claim_splitting():
    assert truthfulqa.claims("Yes; No; It is fine;  ; UK; The UK is;") == ["Yes", "It is fine", "The UK is"]
    assert truthfulqa.claims("") == [] and truthfulqa.claims(None) == []


# --- detection -------------------------------------------------------------------------------------


def test_each_adapter_detects_only_its_own_files(shared_datasets):
    files = own_files(shared_datasets)
    others = [shared_datasets / "nli_textfooler" / "snli.tsv",
              shared_datasets / "seed_truth_layer" / "questions.jsonl",
              shared_datasets / "seed_truth_layer" / "evidence_cache.json",
              shared_datasets / "halueval_qa" / "README.md"]
    modules = {"summedits": summedits, "halueval": halueval, "contractnli": contractnli, "truthfulqa": truthfulqa}
    assert all(files.values()) and len(files["contractnli"]) == 3
    for name, module in modules.items():
        for owner, paths in files.items():
            for path in paths:
                assert module.detect(path) == (owner == name), (name, path)
        for path in others:
            assert not module.detect(path), (name, path)


def test_bundled_sets_load_and_match_their_cards():
    legal = load_examples([ROOT / "datasets" / "legal_qa" / "legal_qa.jsonl"]).examples
    assert len(legal) == 112 and counts(legal) == {"grounded": 28, "ungrounded": 84}
    six = {"Factual Inaccuracies", "Contextual Misinterpretations", "Procedural Errors", "Reasoning Errors",
           "Misattributions", "Terminological Errors"}
    assert {t for e in legal for t in e.error_types} == six
    by_group = collections.defaultdict(set)
    for e in legal:
        by_group[e.group].add(e.split)
    assert all(len(splits) == 1 for splits in by_group.values())
    sample = load_examples(sorted((ROOT / "datasets" / "summedits_sample").glob("*.json"))).examples
    assert len(sample) == 109


def test_detection_keeps_formats_apart(shared_datasets):
    expected = {
        shared_datasets / "summedits" / "summedits_news.json": "summedits",
        shared_datasets / "halueval_qa" / "qa_multi-turn_data.jsonl": "halueval",
        shared_datasets / "contractnli" / "dev_small.json": "contractnli",
        shared_datasets / "truthfulqa" / "TruthfulQA.csv": "truthfulqa",
        ROOT / "datasets" / "legal_qa" / "legal_qa.jsonl": "native",
    }
    for path, name in expected.items():
        assert detect_format(path) == name, path
    assert detect_format(shared_datasets / "nli_textfooler" / "mnli_matched.tsv") == "nli_tsv"
    with pytest.raises(DataError, match="unrecognised format"):
        detect_format(shared_datasets / "halueval_qa" / "README.md")


# --- broken input ----------------------------------------------------------------------------------


def test_broken_rows_are_named_and_good_rows_kept(shared_datasets, tmp_path):
    rows = json.loads((shared_datasets / "summedits" / "summedits_samsum.json").read_text())[:5]
    del rows[2]["summary"]
    rows[4]["label"] = 7
    bad = tmp_path / "summedits_broken.json"
    bad.write_text(json.dumps(rows))
    examples, errors, _ = load_file(bad)
    assert len(examples) == 3 and examples[0].meta["domain"] == "broken"
    assert [(e.line, e.field) for e in errors] == [(3, "summary"), (5, "label")]
    assert all("item index" in e.message for e in errors)

    lines = (shared_datasets / "halueval_qa" / "qa_one-turn_data.jsonl").read_text().splitlines()[:4]
    lines[1] = "{not json"
    bad = tmp_path / "halu.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    examples, errors, fmt = load_file(bad, "halueval")
    assert len(examples) == 6 and [(e.line, e.field) for e in errors] == [(2, "<json>")]
    assert [e.id for e in examples][-2:] == ["halu-4-right", "halu-4-halluc"]

    with open(shared_datasets / "truthfulqa" / "TruthfulQA.csv", encoding="utf-8", newline="") as handle:
        table = list(csv.reader(handle))[:4]
    table[2][2] = ""   # empty Question in the second data row, line 3 of the file
    out = io.StringIO()
    csv.writer(out).writerows(table)
    bad = tmp_path / "tqa.csv"
    bad.write_text(out.getvalue(), encoding="utf-8")
    examples, errors, fmt = load_file(bad)
    assert fmt == "truthfulqa" and [(e.line, e.field) for e in errors] == [(3, "Question")]
    assert {e.group for e in examples} == {"tqa-000", "tqa-002"}

    data = json.loads((shared_datasets / "contractnli" / "dev_small.json").read_text())
    first = next(iter(data["documents"][1]["annotation_sets"][0]["annotations"]))
    data["documents"][1]["annotation_sets"][0]["annotations"][first]["choice"] = "Maybe"
    bad = tmp_path / "cnli.json"
    bad.write_text(json.dumps(data))
    examples, errors, _ = load_file(bad)
    assert len(errors) == 1 and errors[0].line == 2 and errors[0].field.endswith(".choice")
    assert len(examples) == 33


def test_contractnli_structure_errors(shared_datasets, tmp_path):
    data = json.loads((shared_datasets / "contractnli" / "dev.json").read_text(encoding="utf-8"))
    n_fourth = len(data["documents"][3]["annotation_sets"][0]["annotations"])
    del data["documents"][3]["text"]
    fifth = data["documents"][4]["annotation_sets"][0]["annotations"]
    key = next(k for k, a in fifth.items() if a["spans"])
    fifth[key]["spans"] = [10**6]
    path = tmp_path / "dev_broken.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    examples, errors = split_rows(contractnli.load(path))
    assert [(e.line, e.field) for e in errors] == [
        (4, "documents[3].text"), (5, f"documents[4].annotation_sets[0].annotations.{key}.spans")]
    assert len(examples) == 1037 - n_fourth - 1

    path.write_text(json.dumps({"documents": []}), encoding="utf-8")
    assert [(e.line, e.field) for e in contractnli.load(path)] == [(0, "labels")]


def test_adapters_never_raise_on_garbage(tmp_path):
    garbage = tmp_path / "garbage.json"
    garbage.write_bytes(b"\xff\xfe not text at all")
    for module in (summedits, halueval, contractnli, truthfulqa):
        assert not module.detect(garbage)
        items = list(module.load(garbage))
        assert items and all(isinstance(i, RowError) for i in items), module.NAME
    weird = tmp_path / "summedits_weird.json"
    weird.write_text(json.dumps([1, {"id": 1, "doc": None, "summary": "s", "label": 1},
                                 {"id": 2, "doc": "d", "summary": "s", "label": 0, "edit_types": "x"},
                                 {"id": 3, "doc": " ", "summary": "s", "label": 1}]))
    assert [(e.line, e.field) for e in summedits.load(weird)] == [
        (1, "<row>"), (2, "doc"), (3, "edit_types"), (4, "context")]


def test_nli_tsv_samples(shared_datasets):
    examples, errors, fmt = load_file(shared_datasets / "nli_textfooler" / "snli.tsv")
    assert fmt == "nli_tsv" and not errors and len(examples) == 1000
    assert counts(examples) == {"grounded": 367, "ungrounded": 633}
    assert examples[0].context[0] == "A person in a black and green outfit is riding a bicycle."
    assert {e.meta["nli_label"] for e in examples} == {"entailment", "neutral", "contradiction"}
