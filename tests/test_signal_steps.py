"""scripts/signal_steps.py: each step's function computes what it says (tiny fixtures, no model)."""

from __future__ import annotations

import importlib.util
import re
import sys
from types import ModuleType
from typing import ClassVar

import numpy as np
import pytest
from conftest import ROOT

from groundjudge.local_nli.train_data import split_examples
from groundjudge.types import Example


def load_script() -> ModuleType:
    """The script as a module (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location("signal_steps", ROOT / "scripts" / "signal_steps.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


S = load_script()

DOC = ("The company was founded in Oslo in 1990. Its revenue was 5 million dollars in 2020. "
       "The chief executive is Maria Berg. It employs three hundred people across Norway.")


def summary(id_: str, answer: str, label: str, group: str = "doc1") -> Example:
    return Example(id=id_, context=(DOC,), answer=answer, label=label, meta={"group": group})


GROUNDED = summary("g", "The chief executive is Maria Berg. Its revenue was 5 million dollars in 2020.", "grounded")
EDITED = summary("u", "The chief executive is Maria Berg. Its revenue was 9 million dollars in 2021.", "ungrounded")
INSERTED = summary("i", "The chief executive is Maria Berg. The firm was sold to a bank last year. "
                        "Its revenue was 5 million dollars in 2020.", "ungrounded")


def test_the_oracle_premise_is_the_document_sentence_of_the_unedited_claim():
    siblings = S.grounded_by_group([GROUNDED, EDITED])
    units = S.sibling_pair_units([GROUNDED, EDITED], siblings, S.Indexes("tfidf"), k=1)
    by_label = {u.label: u for u in units}
    assert len(units) == 2           # the changed claim and the sibling's sentence it replaced; not the unchanged one
    assert by_label["ungrounded"].claim == "Its revenue was 9 million dollars in 2021."
    assert by_label["grounded"].claim == "Its revenue was 5 million dollars in 2020."
    assert by_label["ungrounded"].oracle == by_label["grounded"].oracle == (
        "Its revenue was 5 million dollars in 2020.",)
    assert by_label["grounded"].example.id == "g" and by_label["ungrounded"].example.id == "u"


def test_an_inserted_claim_has_no_grounded_twin_and_its_own_best_sentences():
    units = S.sibling_pair_units([INSERTED], S.grounded_by_group([GROUNDED]), S.Indexes("tfidf"), k=2)
    assert [(u.label, u.claim) for u in units] == [("ungrounded", "The firm was sold to a bank last year.")]
    assert len(units[0].oracle) == 2


def test_claim_labels_come_from_the_diff_and_are_unknown_without_a_sibling():
    assert S.claim_labels(GROUNDED, None) == ["grounded", "grounded"]
    assert S.claim_labels(EDITED, GROUNDED) == ["grounded", "ungrounded"]
    assert S.claim_labels(EDITED, None) == [None, None]
    one = summary("one", "Its revenue was 9 million dollars in 2021.", "ungrounded")
    assert S.claim_labels(one, None) == ["ungrounded"]
    assert S.sibling_of(EDITED, S.grounded_by_group([GROUNDED, EDITED])).id == "g"
    assert S.sibling_of(GROUNDED, S.grounded_by_group([GROUNDED])) is None


def test_gold_sentences_are_those_overlapping_the_spans():
    start = DOC.index("The chief executive")
    example = Example(id="c", context=(DOC,), answer="Maria Berg leads it.", label="grounded",
                      meta={"group": "d", "evidence": [[start + 4, start + 10]]})
    assert S.gold_sentences(example) == ("The chief executive is Maria Berg.",)
    no_span = example.model_copy(update={"meta": {"group": "d", "evidence": []}})
    assert [u.uid for u in S.span_pair_units([example, no_span])] == ["c"]


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def overlap_scores(premises: list[str], claims: list[str]) -> np.ndarray:
    """A stand-in for the model: the share of the claim's words found in the premise."""
    return np.array([len(words(c) & words(p)) / len(words(c)) for p, c in zip(premises, claims)])


def test_card_input_scores_oracle_and_selected_premises():
    units = S.sibling_pair_units([GROUNDED, EDITED], S.grounded_by_group([GROUNDED]), S.Indexes("tfidf"), k=1)
    card = S.CardInput(overlap_scores, S.Indexes("tfidf"), k=1)
    oracle = dict(zip([u.label for u in units], card.oracle(units)))
    assert oracle["grounded"] == 1.0 and oracle["ungrounded"] < 1.0
    selected = card.selected([(GROUNDED, "The chief executive is Maria Berg.")])
    assert selected[0] == 1.0
    assert card.picks(GROUNDED, "The chief executive is Maria Berg.") == ("The chief executive is Maria Berg.",)


def test_cosine_takes_the_best_sentence():
    vocab = sorted(words(DOC) | words(EDITED.answer))

    def embed(texts):
        vectors = np.array([[1.0 if w in words(t) else 0.0 for w in vocab] for t in texts])
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    cosine = S.Cosine(embed)
    assert cosine.selected([(GROUNDED, "The chief executive is Maria Berg.")])[0] == pytest.approx(1.0)
    unit = S.PairUnit("x", "doc1", "The chief executive is Maria Berg.", "grounded",
                      ("The company was founded in Oslo in 1990.",), GROUNDED)
    assert cosine.oracle([unit])[0] < 0.5


def test_thresholds_are_fitted_on_the_other_fold_only():
    # fold 0 separates at 0.5, fold 1 at 0.2: each fold must be decided with the other's threshold
    scores = np.array([0.6, 0.4, 0.3, 0.1])
    labels = ["grounded", "ungrounded", "grounded", "ungrounded"]
    folds = np.array([0, 0, 1, 1])
    predicted, thresholds = S.crossfit_labels(scores, labels, folds)
    assert 0.1 < thresholds[0] < 0.3 and 0.4 < thresholds[1] < 0.6
    assert predicted == ["grounded", "grounded", "ungrounded", "ungrounded"]


class Recorder:
    """A fake aggregator that remembers the rows it was fitted on (the first feature is a row id)."""

    fitted: ClassVar[list[set[int]]] = []

    def fit(self, x, y):
        Recorder.fitted.append({int(v) for v in x[:, 0]})
        return self

    def predict_proba(self, x):
        return np.column_stack([1 - x[:, 1], x[:, 1]])


def test_the_aggregator_never_sees_the_rows_it_scores():
    Recorder.fitted = []
    n = 20
    features = np.column_stack([np.arange(n), np.linspace(0, 1, n)])
    labels = ["grounded" if i % 2 else "ungrounded" for i in range(n)]
    folds = np.array([i % 4 < 2 for i in range(n)], dtype=int)
    scores = S.crossfit_scores(features, labels, folds, Recorder)
    assert len(Recorder.fitted) == 2
    for fold, seen in zip((0, 1), Recorder.fitted):
        assert seen == {i for i in range(n) if folds[i] != fold}
    assert not np.isnan(scores).any()


def set_data(name: str, n: int, offset: int) -> S.SetData:
    answers = [Example(id=f"{name}{i}", context=(DOC,), answer=f"Claim {i}.", label="grounded" if i % 2 else
                       "ungrounded", meta={"group": f"{name}-doc{i}"}) for i in range(n)]
    items = [(ex, ex.answer) for ex in answers]
    return S.SetData(name, answers, [], items, list(range(n)), [ex.label for ex in answers])


def test_the_transfer_aggregator_is_fitted_on_the_other_sets_only(monkeypatch):
    Recorder.fitted = []
    monkeypatch.setattr(S, "make_aggregator", lambda seed: Recorder())
    sets = [set_data("one", 12, 0), set_data("two", 10, 100)]
    # claim score = a row id per set (min = mean = max), so the recorder can tell which set it was fitted on
    scores = {"one": {"m": {"claims": np.arange(12, dtype=float)}},
              "two": {"m": {"claims": 100 + np.arange(10, dtype=float)}}}
    rows = S.transfer_rows(sets, scores, seed=0, n_boot=50)
    assert [r["set"] for r in rows] == ["one", "two"] and [r["fitted_on"] for r in rows] == [["two"], ["one"]]
    assert Recorder.fitted == [set(range(100, 110)), set(range(12))]


def test_a_perfect_score_summarises_to_one_and_the_table_shows_it():
    labels = ["grounded", "ungrounded"] * 10
    scores = np.array([1.0, 0.0] * 10) + np.linspace(0, 0.01, 20)
    row = S.summarize(labels, scores, S.folds_of([f"g{i}" for i in range(20)], 0), seed=0, n_boot=50)
    assert row["roc_auc"] == 1.0 and row["balanced_accuracy"] == 1.0 and row["n"] == 20
    text = S.table([{"set": "s", "step": "a", "scorer": "m", **row}], ["m"])
    assert "| s | a: pair, oracle evidence | 20 (10 / 10) | 1.000 [1.00, 1.00] / 1.000 [1.00, 1.00] |" in text


def test_the_held_out_part_is_what_training_with_run_dev_fraction_leaves_out():
    examples = [Example(id=f"e{i}", context=(f"Document {i // 2}.",), answer="x", label="grounded" if i % 2 else
                        "ungrounded", meta={"group": f"d{i // 2}"}) for i in range(80)]
    held = S.held_out(examples, 0.6)
    train, dev, _ = split_examples(examples, 0.2, 0, run_dev_fraction=0.6)
    assert held and train
    assert {e.meta["group"] for e in held}.isdisjoint({e.meta["group"] for e in train + dev})
    assert {e.id for e in held} | {e.id for e in train + dev} == {e.id for e in examples}
    assert S.sample(held, 5, seed=1) == S.sample(held, 5, seed=1) and len(S.sample(held, 5, seed=1)) == 5


def test_the_card_tau_gives_a_label_free_balanced_accuracy_beside_the_cross_fitted_one():
    labels = ["grounded", "ungrounded"] * 10
    scores = np.array([0.6, 0.4] * 10)          # perfectly ranked, but every score is below a tau of 0.7
    folds = S.folds_of([f"g{i}" for i in range(20)], 0)
    row = S.summarize(labels, scores, folds, seed=0, n_boot=50, tau=0.7)
    assert row["roc_auc"] == 1.0 and row["balanced_accuracy"] == 1.0
    assert row["tau"] == 0.7 and row["balanced_accuracy_at_tau"] == 0.5      # says ungrounded to all
    assert S.summarize(labels, scores, folds, seed=0, n_boot=50, tau=0.5)["balanced_accuracy_at_tau"] == 1.0
    assert "balanced_accuracy_at_tau" not in S.summarize(labels, scores, folds, seed=0, n_boot=50)
    text = S.table([{"set": "s", "step": "a", "scorer": "m", **row}], ["m"])
    assert "/ at tau 0.500 [0.50, 0.50] |" in text


def test_set_rows_give_the_fixed_tau_to_the_named_scorer_and_not_to_the_aggregator():
    data = set_data("one", 12, 0)
    scores = {"m": {"claims": np.arange(12, dtype=float) / 12}, "c": {"claims": np.arange(12, dtype=float) / 12}}
    rows = S.set_rows(data, scores, seed=0, n_boot=20, taus={"m": 0.5})
    with_tau = {(r["scorer"], r["step"]) for r in rows if "balanced_accuracy_at_tau" in r}
    assert with_tau == {("m", "c"), ("m", "d_min"), ("m", "d_mean")}


def test_a_model_without_a_card_needs_the_held_out_fraction(tmp_path):
    card_file = tmp_path / "groundjudge_card.json"
    with pytest.raises(ValueError, match="give --run-dev-fraction F"):
        S.load_card(card_file, None)
    with pytest.raises(ValueError, match="--run-dev-fraction F"):
        S.load_card(card_file, 1.5)
    assert S.load_card(card_file, 0.6) == {"split": {"run_dev_fraction": 0.6}, "evidence": "embedding", "data": []}
    card_file.write_text('{"split": {"run_dev_fraction": 0.6}, "data": [{"file": "x.json"}]}', encoding="utf-8")
    assert S.load_card(card_file, None)["data"] == [{"file": "x.json"}]
    with pytest.raises(ValueError, match="only for a model with no groundjudge_card.json"):
        S.load_card(card_file, 0.6)


def test_repeated_claims_get_their_auc_within_claims_and_without_the_most_ungrounded_one():
    # two hypotheses: within each the grounded pair scores higher, but "b" (three ungrounded rows) sits above "a"
    labels = [S.GROUNDED, S.UNGROUNDED, S.GROUNDED, S.UNGROUNDED, S.UNGROUNDED, S.UNGROUNDED]
    scores = np.array([0.3, 0.1, 0.9, 0.6, 0.7, np.nan])
    out = S.by_stratum(labels, scores, ["a", "a", "b", "b", "b", "b"])
    assert out["within_strata"] == 1.0 and out["strata_with_both_classes"] == 2
    assert out["most_negative_stratum"] == "b" and out["most_negative_stratum_rows"] == 2   # the unscored row out
    assert out["without_most_negative"] == 1.0
    assert out["pooled"] == pytest.approx(4 / 6)   # 0.3 is below 0.6 and 0.7
    assert out["pooled_stratum_quantiles"] == 1.0   # as quantiles of their own claim's scores, no label read


def test_a_checklist_set_gets_its_claim_and_answer_steps_within_claims_too():
    """Where answers repeat across documents (ContractNLI's hypotheses), steps c, d_min and d_mean carry the AUC
    within each repeated answer: a threshold per checklist question could reach it, one threshold cannot."""
    answers = [Example(id=f"q{i}", context=(DOC,), answer=("Claim A." if i < 6 else "Claim B."),
                       label="grounded" if i % 2 else "ungrounded", meta={"group": f"doc{i}"}) for i in range(12)]
    data = S.SetData("checklist", answers, [], [(ex, ex.answer) for ex in answers], list(range(12)),
                     [ex.label for ex in answers])
    # within each question the grounded answers score higher, but question B sits above question A as a whole
    claims = np.array([0.1 * (i % 2) + (0.5 if i >= 6 else 0.0) for i in range(12)])
    rows = S.set_rows(data, {"m": {"claims": claims}}, seed=0, n_boot=20)
    within = {r["step"]: r["by_claim"]["within_strata"] for r in rows if "by_claim" in r}
    assert within == {"c": 1.0, "d_min": 1.0, "d_mean": 1.0}
    assert all("by_claim" not in r for r in S.set_rows(set_data("one", 12, 0), {"m": {"claims": claims}},
                                                         seed=0, n_boot=20))


def test_a_threshold_per_claim_is_fitted_on_the_other_fold_of_the_same_claim():
    """Two questions whose scores sit at different heights: one cross-fitted threshold cannot serve both, one per
    question (fitted on the other documents' rows of that question) can; a question whose other fold has one class
    falls back to the shared threshold."""
    strata = ["A"] * 8 + ["B"] * 8
    labels = [S.GROUNDED if i % 2 else S.UNGROUNDED for i in range(16)]
    scores = np.array([0.1 + 0.1 * (i % 2) + (0.6 if i >= 8 else 0.0) for i in range(16)])
    folds = np.array([(i // 2) % 2 for i in range(16)])     # both labels of both questions in each fold
    out = S.by_stratum(labels, scores, strata, folds)
    assert out["balanced_accuracy_per_claim_threshold"] == 1.0
    assert out["balanced_accuracy_one_threshold"] < 1.0
    lonely = S.per_claim_crossfit(scores, labels, folds, ["A"] * 15 + ["C"])
    assert lonely[15] == S.crossfit_labels(scores, labels, folds)[0][15]


def test_a_few_repeated_sentences_are_no_checklist():
    assert S.recurring(["A", "B"] * 5) and not S.recurring(["A", "A", "B", "C", "D", "E"])
