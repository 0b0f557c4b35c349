"""Adapters for data sets that are not on this machine, on hand-written files in their public schema.

The fixtures under tests/fixtures/{faithbench,llm_aggrefact,ragtruth}/ hold invented text in the
schemas of vectara/FaithBench, lytang/LLM-AggreFact and ParticleMedia/RAGTruth (see the README.md
in each folder).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOT

from groundjudge.formats.load import DataError, detect_format, load_file
from groundjudge.formats import ADAPTERS, faithbench, llm_aggrefact, ragtruth
from groundjudge.formats._common import RowError

FIXTURES = ROOT / "tests" / "fixtures"
OWN = {
    "faithbench": [FIXTURES / "faithbench" / "FaithBench.csv", FIXTURES / "faithbench" / "batch_1.json"],
    "llm_aggrefact": [FIXTURES / "llm_aggrefact" / f"aggrefact_sample.{ext}" for ext in ("csv", "tsv", "jsonl")],
    "ragtruth": [FIXTURES / "ragtruth" / "response.jsonl"],
}
MODULES = {"faithbench": faithbench, "llm_aggrefact": llm_aggrefact, "ragtruth": ragtruth}


def split_items(items):
    examples = [i for i in items if not isinstance(i, RowError)]
    errors = [i for i in items if isinstance(i, RowError)]
    return examples, errors


def where(errors):
    return [(e.line, e.field) for e in errors]


# --- FaithBench ---------------------------------------------------------------------------------


def test_faithbench_csv_uses_the_worst_label():
    examples, errors, fmt = load_file(FIXTURES / "faithbench" / "FaithBench.csv")
    assert fmt == "faithbench" and not errors
    assert [e.label for e in examples] == ["grounded", "ungrounded", "grounded", "grounded"]
    assert [e.meta["worst_label"] for e in examples] == ["Consistent", "Unwanted", "Benign", "Questionable"]
    assert [e.id for e in examples] == ["FaithBench-0", "FaithBench-1", "FaithBench-2", "FaithBench-3"]
    second = examples[1]
    assert second.error_types == ("Unwanted",) and examples[0].error_types == ()
    assert second.meta["model"] == "acme/model-b" and second.meta["best_label"] == "Questionable"
    assert second.meta["source"] == "faithbench"
    assert second.answer.startswith("Here is a short summary:\n\nThe Harbour")
    assert second.context == (examples[0].context[0],) and second.question is None
    assert examples[0].group == examples[1].group != examples[2].group


def test_faithbench_json_release_derives_the_worst_label_from_annotations():
    examples, errors, fmt = load_file(FIXTURES / "faithbench" / "batch_1.json")
    assert fmt == "faithbench" and not errors
    assert [(e.label, e.meta["worst_label"]) for e in examples] == [
        ("grounded", "Consistent"), ("ungrounded", "Unwanted"), ("grounded", "Benign"), ("grounded", "Questionable")]
    assert examples[1].error_types == ("Unwanted.Intrinsic", "Unwanted.Extrinsic")
    assert [e.id for e in examples] == ["batch_1-0", "batch_1-1", "batch_1-2", "batch_1-3"]
    meta = examples[1].meta
    assert (meta["model"], meta["sample_id"], meta["raw_sample_id"], meta["n_annotations"]) == (
        "acme/model-b", 1, 12, 3)
    assert examples[0].group == examples[1].group != examples[2].group


def test_faithbench_bare_array_shape(tmp_path):
    samples = json.loads((FIXTURES / "faithbench" / "batch_1.json").read_text())["samples"]
    for sample in samples:
        metadata = sample.pop("metadata")
        sample["meta_model"] = metadata["summarizer"]
        sample["meta_sample_id"] = metadata["raw_sample_id"]
    path = tmp_path / "batch_2.json"
    path.write_text(json.dumps(samples, indent=1))
    assert faithbench.detect(path) and detect_format(path) == "faithbench"
    examples, errors, _ = load_file(path)
    assert not errors and [e.label for e in examples] == ["grounded", "ungrounded", "grounded", "grounded"]
    assert examples[1].meta["model"] == "acme/model-b" and examples[1].meta["raw_sample_id"] == 12


def test_faithbench_broken_rows(tmp_path):
    text = (FIXTURES / "faithbench" / "FaithBench.csv").read_text()
    text = text.replace("Questionable,Consistent", "Dubious,Consistent")  # last row, starting on line 7
    text = text.replace('"The orchard society, a popular club, meets monthly."', '""')  # row on line 6
    (tmp_path / "fb.csv").write_text(text)
    examples, errors, _ = load_file(tmp_path / "fb.csv")
    assert [e.id for e in examples] == ["fb-0", "fb-1"]
    assert where(errors) == [(6, "summary"), (7, "worst-label")]

    data = json.loads((FIXTURES / "faithbench" / "batch_1.json").read_text())
    data["samples"][1]["annotations"][0]["label"] = ["Hallucinated"]
    del data["samples"][2]["summary"]
    text = json.dumps(data, indent=2)
    (tmp_path / "batch_9.json").write_text(text)
    starts = [n for n, line in enumerate(text.splitlines(), start=1) if line == "    {"]
    examples, errors, _ = load_file(tmp_path / "batch_9.json", "faithbench")
    assert [e.id for e in examples] == ["batch_9-0", "batch_9-3"]
    assert where(errors) == [(starts[1], "annotations.label"), (starts[2], "summary")]

    truncated = text[: text.index('"sample_id": 3') + 5]
    (tmp_path / "batch_10.json").write_text(truncated)
    examples, errors, _ = load_file(tmp_path / "batch_10.json", "faithbench")
    assert len(examples) == 1 and where(errors)[-1][1] == "<json>"


def test_faithbench_json_items_carry_their_file_lines():
    text = (FIXTURES / "faithbench" / "batch_1.json").read_text()
    items = list(faithbench._samples(text))
    starts = [n for n, line in enumerate(text.splitlines(), start=1) if line == "    {"]
    assert [line for line, _ in items] == starts == [3, 21, 87, 121]
    assert [sample["sample_id"] for _, sample in items] == [0, 1, 2, 3]
    broken = faithbench._example(Path("x.csv"), 9, "x", " ", "y", "Consistent", (), {})
    assert isinstance(broken, RowError) and (broken.line, broken.field) == (9, "source")


# --- LLM-AggreFact ------------------------------------------------------------------------------


@pytest.mark.parametrize("ext", ["csv", "tsv", "jsonl"])
def test_llm_aggrefact_all_exports(ext):
    examples, errors, fmt = load_file(FIXTURES / "llm_aggrefact" / f"aggrefact_sample.{ext}")
    assert fmt == "llm_aggrefact" and not errors
    assert [e.label for e in examples] == ["grounded", "ungrounded", "grounded", "ungrounded"]
    assert [e.meta["dataset"] for e in examples] == ["AggreFact-CNN", "AggreFact-CNN", "ClaimVerify", "RAGTruth"]
    assert examples[0].group == examples[1].group != examples[2].group
    assert examples[1].answer == "The library was opened on Monday." and examples[1].split is None
    assert all(e.meta["source"] == "llm_aggrefact" for e in examples)


def test_llm_aggrefact_ids_are_stem_and_line():
    examples, _, _ = load_file(FIXTURES / "llm_aggrefact" / "aggrefact_sample.csv")
    assert [e.id for e in examples] == [f"aggrefact_sample-{n}" for n in (2, 4, 6, 7)]  # multi-line docs
    assert examples[0].context == ("The mayor opened the new library on Friday.\nIt holds 40,000 books and a cafe.",)
    examples, _, _ = load_file(FIXTURES / "llm_aggrefact" / "aggrefact_sample.jsonl")
    assert [e.id for e in examples] == [f"aggrefact_sample-{n}" for n in (1, 2, 3, 4)]


def test_llm_aggrefact_id_column_string_labels_and_split_from_file_name(tmp_path):
    rows = [json.loads(x) for x in (FIXTURES / "llm_aggrefact" / "aggrefact_sample.jsonl").read_text().splitlines()]
    for n, row in enumerate(rows):
        row["id"] = f"agg-{n}"
        row["label"] = str(row["label"])
    path = tmp_path / "test-00000-of-00001.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    examples, errors, fmt = load_file(path)
    assert fmt == "llm_aggrefact" and not errors
    assert [e.id for e in examples] == ["agg-0", "agg-1", "agg-2", "agg-3"]
    assert [e.label for e in examples] == ["grounded", "ungrounded", "grounded", "ungrounded"]
    assert {e.split for e in examples} == {"test"}
    assert llm_aggrefact.split_of_file(Path("llm_aggrefact_dev.csv")) == "dev"
    assert llm_aggrefact.split_of_file(Path("aggrefact_sample.csv")) is None


def test_llm_aggrefact_broken_rows(tmp_path):
    lines = (FIXTURES / "llm_aggrefact" / "aggrefact_sample.jsonl").read_text().splitlines()
    bad_label = json.loads(lines[1])
    bad_label["label"] = "yes"
    no_claim = json.loads(lines[2])
    del no_claim["claim"]
    two = json.loads(lines[3])
    two["label"] = 2
    broken = [lines[0], json.dumps(bad_label), json.dumps(no_claim), "{broken", json.dumps(two),
              json.dumps({**json.loads(lines[0]), "label": True}), lines[3]]
    (tmp_path / "agg.jsonl").write_text("\n".join(broken) + "\n")
    examples, errors, _ = load_file(tmp_path / "agg.jsonl", "llm_aggrefact")
    assert [e.id for e in examples] == ["agg-1", "agg-7"]
    assert where(errors) == [(2, "label"), (3, "claim"), (4, "<json>"), (5, "label"), (6, "label")]

    text = (FIXTURES / "llm_aggrefact" / "aggrefact_sample.csv").read_text()
    text = text.replace(",Tidal plants make electricity from tides.,", ",,")
    text = text.replace(",0,0df0", ",no,0df0").replace(",1,82d8", ",maybe,82d8")
    (tmp_path / "agg.csv").write_text(text)
    examples, errors, _ = load_file(tmp_path / "agg.csv")
    assert [e.id for e in examples] == ["agg-7"]
    assert where(errors) == [(2, "label"), (4, "label"), (6, "claim")]


# --- RAGTruth -----------------------------------------------------------------------------------


def test_ragtruth_joins_sources_and_spans():
    examples, errors, fmt = load_file(FIXTURES / "ragtruth" / "response.jsonl")
    assert fmt == "ragtruth" and not errors
    by_id = {e.id: e for e in examples}
    assert list(by_id) == ["1", "2", "3", "4", "5"]
    qa = by_id["1"]
    assert qa.label == "grounded" and qa.question == "how long does a kettle take to boil"
    assert qa.context == ("passage 1:A full electric kettle boils in about four minutes.",
                          "passage 2:Half-full kettles boil faster.\nThey use less power too.",
                          "passage 3:Stovetop kettles are slower.")
    assert qa.split == "train" and qa.error_types == ()
    assert qa.meta == {"group": "901", "task_type": "QA", "model": "llama-2-7b-chat", "temperature": 0.7,
                       "quality": "good", "source_dataset": "MARCO", "source_split": "train", "spans": [],
                       "n_implicit_true": 0, "source": "ragtruth"}
    conflict = by_id["2"]
    assert conflict.label == "ungrounded" and conflict.error_types == ("Evident Conflict",)
    assert conflict.meta["spans"] == [[38, 49, "Evident Conflict"]] and conflict.split == "test"
    assert conflict.answer[38:49] == "two minutes" and conflict.group == qa.group == "901"
    summary = by_id["3"]
    assert summary.question is None and summary.error_types == ("Subtle Baseless Info",)
    assert summary.context == ("The council approved a new cycle lane on Elm Street. Work starts in May.",)
    refusal = by_id["4"]
    assert refusal.label == "grounded" and refusal.meta["quality"] == "incorrect_refusal"
    data2txt = by_id["5"]
    assert json.loads(data2txt.context[0])["name"] == "Blue Door Cafe" and data2txt.question is None
    assert data2txt.meta["quality"] == "truncated" and data2txt.meta["n_implicit_true"] == 1
    assert data2txt.error_types == ("Evident Baseless Info", "Subtle Conflict")
    assert [s[2] for s in data2txt.meta["spans"]] == ["Evident Baseless Info", "Evident Baseless Info",
                                                     "Subtle Conflict"]


def test_ragtruth_needs_source_info_beside_it(tmp_path):
    shutil.copy(FIXTURES / "ragtruth" / "response.jsonl", tmp_path / "response.jsonl")
    examples, errors, fmt = load_file(tmp_path / "response.jsonl")
    assert fmt == "ragtruth" and not examples
    assert where(errors) == [(0, "source_info.jsonl")] and "same folder" in errors[0].message


def test_ragtruth_broken_rows(tmp_path):
    rows = (FIXTURES / "ragtruth" / "response.jsonl").read_text().splitlines()
    unknown = json.loads(rows[2])
    unknown["source_id"] = "nope"
    no_response = json.loads(rows[3])
    del no_response["response"]
    bad_labels = json.loads(rows[1])
    bad_labels["labels"] = "none"
    broken = [rows[0], "not json", json.dumps(unknown), json.dumps(no_response), json.dumps(bad_labels), rows[4]]
    (tmp_path / "response.jsonl").write_text("\n".join(broken) + "\n")
    sources = (FIXTURES / "ragtruth" / "source_info.jsonl").read_text().splitlines()
    (tmp_path / "source_info.jsonl").write_text("\n".join([*sources, "{oops", json.dumps({"source_id": "9"})]) + "\n")
    examples, errors, _ = load_file(tmp_path / "response.jsonl")
    assert [e.id for e in examples] == ["1", "5"]
    source_errors = [e for e in errors if e.file.endswith("source_info.jsonl")]
    assert where(source_errors) == [(4, "<json>"), (5, "task_type")]
    response_errors = [e for e in errors if e.file.endswith("response.jsonl")]
    assert where(response_errors) == [(2, "<json>"), (3, "source_id"), (4, "response"), (5, "labels")]


# --- detection ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(OWN))
def test_detect_own_fixtures_and_not_the_others(name):
    module = MODULES[name]
    for other, paths in OWN.items():
        for path in paths:
            assert module.detect(path) is (other == name), (name, path)


def test_detection_order_picks_the_right_adapter():
    for name, paths in OWN.items():
        for path in paths:
            assert detect_format(path) == name, path
    for path in (FIXTURES / "ragtruth" / "source_info.jsonl", FIXTURES / "faithbench" / "README.md"):
        assert not any(MODULES[n].detect(path) for n in MODULES)
    with pytest.raises(DataError, match="unrecognised format"):
        detect_format(FIXTURES / "ragtruth" / "source_info.jsonl")


def test_adapters_are_registered():
    for name, module in MODULES.items():
        assert ADAPTERS[name] is module and module.NAME == name
        assert module.__doc__ and module.detect.__doc__ and module.load.__doc__
