"""scripts/seed000_relabel.py on a tiny fake copy of the seed's artefacts, every number checked by hand.

The tiny NLI model always says contradiction (~0.995), so our label is: contradicted where
the answer has evidence, supported where the span backup finds a short answer in it, and
unverifiable without evidence (or, with a tau above 0.995, wherever the span backup is silent).
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import ROOT, write_jsonl
from test_local_nli import tiny_model

QUESTIONS = {
    1: ("Which city is the capital of Norland?", "Ostbury"),
    2: ("In what year was the Norland charter signed?", "1642"),
    3: ("Who founded the Norland Academy?", "Mira Holt"),
    4: ("Which river crosses Ostbury?", "Vell"),
}
SNIPPETS = {
    "Ostbury": "Ostbury is the capital and largest city of Norland.",
    "Norland charter": "The Norland charter was signed in 1642 by the council.",
    "Norland Academy": "The Norland Academy is a school founded by Mira Holt.",
    "Vell": "The Vell is a small river that crosses Ostbury.",
    "Harbour": "The harbour of Ostbury trades in salt and wool.",
}
NAMES = {"phi3": "fake/phi", "llama": "fake/llama", "gpt": "fake/gpt"}

# model -> question id -> (answer, their label, max_entail, max_contradict, retrieved titles)
RESULTS = {
    "phi3": {1: ("Ostbury", "supported", 0.7, 0.0, ["Ostbury"]),                       # key answer k=1, span
             2: ("1643", "contradicted", 0.0, 0.99, ["Norland charter"]),              # key answer k=1, NLI
             3: ("Mira Holt, a teacher of the old school", "unverifiable", 0.1, 0.2, ["Norland Academy"]),  # long
             4: ("the Vell", "supported", 0.7, 0.0, ["Vell river"])},                  # no key: missing
    "llama": {1: ("Ostbury", "supported", 0.7, 0.0, ["Ostbury", "Harbour"]),           # key answer k=3
              2: ("In 1642", "supported", 0.7, 0.0, ["Norland charter"]),              # key on the gold answer
              3: ("Mira Holt", "supported", 0.95, 0.01, ["Norland Academy", "Harbour"]),  # titles only
              4: ("Vell", "unverifiable", 0.0, 0.0, [])},                              # retrieved nothing
    "gpt": {1: ("Ostbury", "supported", 0.7, 0.0, ["Ostbury", "Norland charter"]),     # keys, other titles
            2: ("1642", "contradicted", 0.2, 0.9, ["Norland charter"]),
            3: ("Mira Holt", "supported", 0.7, 0.0, ["Norland Academy"]),
            4: ("Ostbury", "contradicted", 0.0, 0.98, ["Vell"])},                      # wrong, yet in evidence
}
CACHE_ENTRIES = [   # (question id, answer text of the key, k, titles)
    (1, "Ostbury", 1, ["Ostbury"]), (1, "Ostbury", 3, ["Ostbury", "Harbour"]),
    (2, "1643", 1, ["Norland charter"]), (2, "1642", 3, ["Norland charter"]),
    (3, "Mira Holt, a teacher of the old school", 1, ["Norland Academy"]),
    (3, "Mira Holt", 3, ["Norland Academy"]), (3, "Mira Holt.", 3, ["Norland Academy", "Harbour"]),
    (4, "Ostbury", 3, ["Vell"]),
]


def load_script() -> ModuleType:
    """The script as a module (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location("seed000_relabel", ROOT / "scripts" / "seed000_relabel.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def key(qid: int, answer: str, k: int) -> str:
    """The cache key as the seed forms it."""
    return hashlib.sha1(f"{QUESTIONS[qid][0]}::{answer}::k={k}".encode()).hexdigest()


def fake_seed(folder: Path) -> Path:
    """A seed_truth_layer folder of the real shape: questions, three result files, cache, pairwise CSV."""
    folder.mkdir()
    write_jsonl(folder / "questions.jsonl", [{"id": q, "domain": "civics", "question": text, "gold_answer": gold}
                                             for q, (text, gold) in QUESTIONS.items()])
    for model, rows in RESULTS.items():
        write_jsonl(folder / f"results_{model}.jsonl", [
            {"id": q, "domain": "civics", "question": QUESTIONS[q][0], "gold_answer": QUESTIONS[q][1],
             "model": NAMES[model], "answer": answer, "label": label, "confidence": 0.5, "max_entail": entail,
             "max_contradict": contradict, "supported_gold_in_evidence": int(q != 4), "retrieved_titles": titles}
            for q, (answer, label, entail, contradict, titles) in rows.items()])
    cache = {key(q, a, k): [{"source": "wikipedia", "title": t, "text": SNIPPETS[t]} for t in titles]
             for q, a, k, titles in CACHE_ENTRIES}
    (folder / "evidence_cache.json").write_text(json.dumps(cache), encoding="utf-8")
    with (folder / "pairwise_mcnemar.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["model_A", "model_B", "metric", "n_shared", "A_wrong_B_right", "A_right_B_wrong", "p_value"])
        writer.writerow([NAMES["phi3"], NAMES["llama"], "soft", 4, 2, 1, 1.0])
        writer.writerow([NAMES["llama"], NAMES["gpt"], "exact", 4, 1, 1, 1.0])
    return folder


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return load_script()


@pytest.fixture(scope="module")
def contradicting_model(tmp_path_factory) -> str:
    """Tiny BERT whose classifier bias makes contradiction (index 0) win every pair."""
    return tiny_model(tmp_path_factory.mktemp("nli") / "m", bias=(6.0, 0.0, 0.0))


def pairs_by(result: dict, metric: str) -> dict[tuple[str, str], tuple[int, int, float]]:
    return {(r["model_a"], r["model_b"]): (r["a_wrong_b_right"], r["a_right_b_wrong"], r["p"])
            for r in result["pairwise"] if r["metric"] == metric}


def test_evidence_lookup_by_key_form(tmp_path, script):
    folder = fake_seed(tmp_path / "seed")
    answers = script.load_answers(folder, script.MODELS)
    cache = json.loads((folder / "evidence_cache.json").read_text())
    index = script.titles_index(cache)
    forms = {(a.model, a.qid): script.find_evidence(a, cache, index) for rows in answers.values() for a in rows}
    assert {k: v.form for k, v in forms.items()} == {
        ("phi3", 1): "answer::k=1", ("phi3", 2): "answer::k=1", ("phi3", 3): "answer::k=1", ("phi3", 4): "no_key",
        ("llama", 1): "answer::k=3", ("llama", 2): "gold_answer::k=3", ("llama", 3): "titles",
        ("llama", 4): "no_titles", ("gpt", 1): "stale_key", ("gpt", 2): "answer::k=3", ("gpt", 3): "answer::k=3",
        ("gpt", 4): "answer::k=3"}
    assert forms[("llama", 3)].snippets == (SNIPPETS["Norland Academy"], SNIPPETS["Harbour"])
    assert forms[("llama", 4)].found and forms[("llama", 4)].snippets == ()
    assert not forms[("gpt", 1)].found and not forms[("phi3", 4)].found
    assert script.implied_tau(a for rows in answers.values() for a in rows) == {"low": 0.2, "high": 0.9}
    assert script.hypothesis(" Who wrote it? ", "Ann ") == "Who wrote it? Ann"


def test_relabel_metrics_and_mcnemar_by_hand(tmp_path, script, contradicting_model):
    folder = fake_seed(tmp_path / "seed")
    settings = script.Settings(model=contradicting_model, tau=0.6, n_boot=200)
    result = script.run(folder, settings)
    phi3, llama, gpt = (result["models"][m] for m in ("phi3", "llama", "gpt"))
    assert result["questions_mismatch"] == {"phi3": 0, "llama": 0, "gpt": 0}
    assert result["engine"]["pairs_scored"] == 3 + 5 + 3   # phi3 q1-3, llama q1-3 (2 snippets on q1, q3), gpt q2-4

    assert [phi3["evidence"][k] for k in ("found", "missing_ids")] == [3, [4]]
    assert [gpt["evidence"][k] for k in ("found", "missing_ids")] == [3, [1]]
    assert llama["evidence"]["by_status"] == {"key": 2, "titles": 1, "empty": 1}

    assert phi3["theirs"]["labels"] == {"supported": 2, "contradicted": 1, "unverifiable": 1}
    assert phi3["ours"]["labels"] == {"supported": 1, "contradicted": 2, "unverifiable": 1}
    assert llama["theirs"]["labels"] == llama["ours"]["labels"] == {"supported": 3, "contradicted": 0,
                                                                    "unverifiable": 1}
    assert gpt["theirs"]["labels"] == {"supported": 2, "contradicted": 2, "unverifiable": 0}
    assert gpt["ours"]["labels"] == {"supported": 3, "contradicted": 0, "unverifiable": 1}
    assert [phi3["ours"]["span_backup"], llama["ours"]["span_backup"], gpt["ours"]["span_backup"]] == [1, 3, 3]

    expected = {"phi3": (0.5, 0.25, 0.75, 0.5, 0.25), "llama": (0.75, 0.75, 1.0, 0.75, 0.75),
                "gpt": (0.75, 0.75, 0.75, 0.5, 0.75)}   # exact, verbatim, loose, soft theirs, soft ours
    for model, (exact, verbatim, loose, soft_theirs, soft_ours) in expected.items():
        s = result["models"][model]
        assert (s["exact_accuracy"], s["exact_verbatim_accuracy"], s["loose_accuracy"]) == (exact, verbatim, loose)
        assert (s["theirs"]["soft_accuracy"], s["ours"]["soft_accuracy"]) == (soft_theirs, soft_ours)
        lo, hi = s["ours"]["soft_ci95"]
        assert 0.0 <= lo <= soft_ours <= hi <= 1.0 and lo < hi

    assert pairs_by(result, "soft_theirs") == {("phi3", "llama"): (2, 1, 1.0), ("phi3", "gpt"): (1, 1, 1.0),
                                               ("llama", "gpt"): (0, 1, 1.0)}
    assert pairs_by(result, "soft_ours") == {("phi3", "llama"): (2, 0, 0.5), ("phi3", "gpt"): (3, 1, 0.625),
                                             ("llama", "gpt"): (1, 1, 1.0)}
    assert pairs_by(result, "exact") == {("phi3", "llama"): (1, 0, 1.0), ("phi3", "gpt"): (2, 1, 1.0),
                                         ("llama", "gpt"): (1, 1, 1.0)}
    published = {(r["model_a"], r["model_b"], r["metric"]): r["published"] for r in result["pairwise"]}
    assert published[("phi3", "llama", "soft_theirs")]["a_wrong_b_right"] == 2
    assert published[("llama", "gpt", "exact_verbatim")]["n_shared"] == 4
    assert published[("phi3", "llama", "exact")] is None and published[("phi3", "gpt", "soft_theirs")] is None

    assert phi3["agreement"]["n"] == 3 and phi3["agreement"]["agree"] == 2
    assert phi3["agreement"]["confusion"]["unverifiable"] == {"supported": 0, "contradicted": 1, "unverifiable": 0}
    assert phi3["agreement"]["kappa"] == pytest.approx(0.5)     # po 2/3, pe 1/3
    assert llama["agreement"]["kappa"] == pytest.approx(1.0)
    assert gpt["agreement"]["kappa"] == pytest.approx(0.0)      # po 1/3, pe 1/3
    assert [(d["model"], d["id"], d["theirs"], d["ours"]) for m in ("phi3", "gpt")
            for d in result["models"][m]["disagreements"]] == [
        ("phi3", 3, "unverifiable", "contradicted"), ("gpt", 2, "contradicted", "supported"),
        ("gpt", 4, "contradicted", "supported")]
    assert gpt["disagreements"][1]["our_max_contradict"] > 0.99 and gpt["disagreements"][1]["our_span_backup"]

    strict = script.run(folder, script.Settings(model=contradicting_model, tau=0.999, n_boot=50))
    assert strict["models"]["phi3"]["ours"]["labels"] == {"supported": 1, "contradicted": 0, "unverifiable": 3}


def test_main_writes_numbers_and_ids_never_text(tmp_path, script, contradicting_model, capsys):
    folder = fake_seed(tmp_path / "seed")
    out, md = tmp_path / "out" / "seed000.json", tmp_path / "out" / "seed000.md"
    assert script.main(["--model", contradicting_model, "--data", str(folder), "--n-boot", "50",
                        "--out", str(out), "--md", str(md)]) == 0
    written = out.read_text() + md.read_text()
    assert json.loads(out.read_text())["models"]["gpt"]["ours"]["soft_accuracy"] == 0.75
    texts = {t for q in QUESTIONS.values() for t in q} | set(SNIPPETS) | set(SNIPPETS.values())
    texts |= {row[0] for rows in RESULTS.values() for row in rows.values()}
    leaked = sorted(t for t in texts if len(t) >= 5 and t in written)
    assert not leaked
    assert str(tmp_path) not in written  # the data folder and the model are recorded without this machine's paths
    assert "Pairwise exact McNemar" in capsys.readouterr().out
