"""A mixed training set (`groundjudge train DATA --synthetic N --from-documents FILES --teacher SPEC --weight
SOURCE=W`): every source's pairs carry their source and weight, the weights scale the loss, the split keeps each
group on one side across sources, the card says per source its pairs and weight, and a teacher's calls are read
from the call cache when the prompts match (counted, never assumed)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import cli, rent_rows, write_jsonl
from test_distill import teacher
from test_train import machine_paths, tiny_base  # noqa: F401  (the fixture)
from test_train_documents import write_documents

from groundjudge.cli import main
from groundjudge.local_nli.train_sources import WeightError, parse_weights
from groundjudge.local_nli.train_targets import class_weights
from groundjudge.text import normalize


def test_weights_parse_and_bad_ones_name_the_flag_and_the_allowed_values():
    assert parse_weights(["gold=1", "synthetic=0.5", "Teacher=2", "gold=0"]) == {
        "gold": 0.0, "synthetic": 0.5, "teacher": 2.0}
    for bad in ("golden=1", "gold", "gold=-0.5", "gold=x", "gold=nan"):
        with pytest.raises(WeightError) as err:
            parse_weights([bad])
        text = str(err.value)
        assert text.startswith(f"--weight {bad}") and "gold, synthetic, documents, teacher, nli" in text
        assert "\n" not in text


@pytest.mark.parametrize("flags, words", [
    (["--weight", "golden=1"], "gold, synthetic, documents, teacher, nli"),
    (["--weight", "synthetic=-1"], "0 or more"),
    (["--weight", "teacher=1"], "no teacher pairs"),
])
def test_a_bad_weight_is_one_line_and_nothing_is_written(tmp_path, capsys, flags, words):
    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(3))
    out = tmp_path / "m"
    assert main(["train", str(data), "--synthetic", "4", *flags, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--weight" in err and words in err
    assert not out.exists()


def test_a_pair_of_weight_zero_adds_nothing_to_the_loss_or_its_gradient():
    torch = pytest.importorskip("torch")
    from groundjudge.local_nli.train_loop import weighted_loss

    torch.manual_seed(0)
    layer = torch.nn.Linear(4, 2)
    x, targets = torch.randn(3, 4), torch.tensor([[0.0, 1.0], [1.0, 0.0], [0.3, 0.7]])
    classes = torch.tensor([1.0, 2.0])

    def loss_and_grad(rows, weights):
        layer.zero_grad()
        loss = weighted_loss(layer(x[rows]), targets[rows], classes, torch.tensor(weights))
        loss.backward()
        return float(loss.detach()), layer.weight.grad.clone()

    with_zero, grad_with_zero = loss_and_grad([0, 1, 2], [1.0, 1.0, 0.0])
    without, grad_without = loss_and_grad([0, 1], [1.0, 1.0])
    assert with_zero == pytest.approx(without) and torch.allclose(grad_with_zero, grad_without)
    weighted, grad_weighted = loss_and_grad([0, 1, 2], [1.0, 1.0, 3.0])
    assert weighted != pytest.approx(without) and not torch.allclose(grad_weighted, grad_without)
    with torch.no_grad():
        plain = -(targets * torch.log_softmax(layer(x), dim=-1) * classes).sum(dim=-1).mean()
    assert loss_and_grad([0, 1, 2], [1.0, 1.0, 1.0])[0] == pytest.approx(float(plain))   # all 1: the old loss


def test_class_weights_count_each_pair_by_its_weight():
    targets = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    assert class_weights(targets, np.array([1.0, 1.0, 0.0])) == pytest.approx([1.0, 1.0])
    assert class_weights(targets) == pytest.approx([1.5, 0.75])


def _train_pairs(out) -> list[dict]:
    return [json.loads(line) for line in (out / "pairs" / "train.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_a_mixed_run_weights_its_sources_and_a_second_run_reads_the_teacher_from_the_cache(
        tmp_path, tiny_base, llm_server, monkeypatch):
    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(8))
    docs = write_documents(tmp_path / "docs", 4)

    def run(out, *weights):
        cli("train", str(data), "--from-documents", str(data), *docs, "--synthetic", "6", "--teacher",
            teacher(llm_server, "score=logprobs,threshold=0.5"), "--teacher-mode", "soft", *weights,
            "--base", str(tiny_base), "--out", str(out), "--epochs", "1", "--batch-size", "8",
            "--evidence", "tfidf", "--dev-fraction", "0.3", "--max-pairs", "80", "--quiet")
        return json.loads((out / "groundjudge_card.json").read_text())

    first = tmp_path / "first"
    card = run(first, "--weight", "gold=1", "--weight", "synthetic=0.5", "--weight", "teacher=2")
    sent = len(llm_server.requests)
    mix = card["mix"]["sources"]
    assert card["recipe"] == "mix" and set(mix) == {"gold", "synthetic", "documents", "teacher"}
    assert {name: s["weight"] for name, s in mix.items()} == {"gold": 1.0, "synthetic": 0.5, "documents": 1.0,
                                                              "teacher": 2.0}
    pairs = _train_pairs(first)
    for name, source in mix.items():
        assert source["train_pairs"] == sum(p["origin"] == name for p in pairs) > 0, name
    assert all(p["weight"] == mix[p["origin"]]["weight"] for p in pairs)
    assert all(0.0 < p["support"] < 1.0 for p in pairs if p["origin"] == "teacher")   # soft scores as targets
    teacher_facts = mix["teacher"]
    assert teacher_facts["new_calls"] == sent > 0 and teacher_facts["cache_hits"] == 0
    assert teacher_facts["cost_usd"] > 0 and teacher_facts["budget_usd"] is None
    assert teacher_facts["answers_stopped_by_budget"] == 0
    # one split over every source: no group, and no claim, on both sides
    groups = json.loads((first / "pairs" / "groups.json").read_text())
    assert not set(groups["train"]) & set(groups["dev"])
    dev = [json.loads(line) for line in (first / "pairs" / "dev.jsonl").read_text().splitlines()]
    assert dev and all(p["group"] in groups["train"] for p in pairs if p["origin"] != "nli")
    assert all(p["group"] in groups["dev"] for p in dev)
    assert not {normalize(p["hypothesis"]) for p in dev} & {normalize(p["hypothesis"]) for p in pairs}
    readme = (first / "README.md").read_text()
    assert "## Mixed training set" in readme and "| teacher | 2 |" in readme and machine_paths(card) == []

    again = run(tmp_path / "second", "--weight", "synthetic=0", "--weight", "teacher=2")
    assert len(llm_server.requests) == sent   # the same prompts: every teacher call from the cache
    facts = again["mix"]["sources"]["teacher"]
    assert facts["new_calls"] == 0 and facts["cache_hits"] == teacher_facts["new_calls"] and facts["cost_usd"] == 0
    assert again["mix"]["sources"]["synthetic"] == again["mix"]["sources"]["synthetic"] | {"weight": 0.0,
                                                                                           "train_pairs": 0}
    assert not any(p["origin"] == "synthetic" for p in _train_pairs(tmp_path / "second"))

    # an empty call cache seeded from a recorded teacher run (as a committed one): the same prompts, no new call
    monkeypatch.setenv("GROUNDJUDGE_CACHE_DIR", str(tmp_path / "empty-cache"))
    third = run(tmp_path / "third", "--teacher-cache", str(first / "teacher"))
    facts = third["mix"]["sources"]["teacher"]
    assert len(llm_server.requests) == sent and facts["new_calls"] == 0 and facts["cache_hits"] == sent
    assert facts["seeded_from"]["replies"] == sent and machine_paths(third) == []
