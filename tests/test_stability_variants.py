"""Verdict stability (majority of repeats, flip rate, Fleiss' kappa) and the paired difference of two variants."""

from __future__ import annotations

import pytest

from groundjudge.metrics import paired_bootstrap_diff
from groundjudge.runs.stability import fleiss_kappa, majority, stability_summary
from groundjudge.runs.variants import variant_difference
from groundjudge.types import Example, JudgeResult, JudgeSpec, LLMCall, PromptTemplate, ResultRecord, Verdict

WIKIPEDIA = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
             [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]


def test_fleiss_kappa_matches_the_worked_example():
    # 10 subjects, 14 raters, 5 categories: kappa = 0.210 (Fleiss 1971, as worked on Wikipedia)
    labels = [[str(c) for c, count in enumerate(row) for _ in range(count)] for row in WIKIPEDIA]
    assert fleiss_kappa(labels, categories=[str(c) for c in range(5)]) == pytest.approx(0.2099, abs=1e-4)
    assert fleiss_kappa([["grounded", "grounded"], ["ungrounded", "ungrounded"]]) == pytest.approx(1.0)
    assert fleiss_kappa([["grounded"] * 3] * 4) is None          # one category only: undefined
    assert fleiss_kappa([["grounded", "ungrounded"]]) is None     # one item


def _verdict(label, score=None, reason=None):
    return Verdict(example_id="x", label=label, score=score, abstain_reason=reason, path="llm:m")


def _result(label, score=None):
    call = LLMCall(model="m", template="direct", template_hash="h", prompt_hash="p", messages=())
    return JudgeResult(verdict=_verdict(label, score, "parse_failure" if label == "abstain" else None),
                       calls=(call,))


def test_majority_of_repeats():
    merged = majority([_result("ungrounded", 0.2), _result("grounded", 0.9), _result("grounded", 0.7)])
    assert merged.verdict.label == "grounded" and merged.verdict.score == pytest.approx(0.6)
    assert len(merged.calls) == 3 and [v.label for v in merged.repeats] == ["ungrounded", "grounded", "grounded"]
    # a tie goes to the label reached first; an abstention only wins when every repeat abstained
    assert majority([_result("ungrounded"), _result("grounded")]).verdict.label == "ungrounded"
    assert majority([_result("abstain"), _result("abstain"), _result("grounded")]).verdict.label == "grounded"
    assert majority([_result("abstain"), _result("abstain")]).verdict.label == "abstain"


def test_stability_summary_counts_flips():
    example = Example(id="e", context=("c",), answer="a", label="grounded")
    def record(labels):
        result = JudgeResult(verdict=_verdict(labels[0]), repeats=tuple(_verdict(lab) for lab in labels))
        return ResultRecord(judge="j", example=example, result=result)
    records = [record(["grounded", "grounded"]), record(["grounded", "ungrounded"]),
               record(["ungrounded", "ungrounded"]), record(["grounded", "grounded"])]
    summary = stability_summary(records)
    assert summary["repeats"] == 2 and summary["n"] == 4
    assert summary["flip_rate"] == pytest.approx(0.25) and summary["n_flipped"] == 1
    assert -1.0 <= summary["fleiss_kappa"] < 1.0
    assert stability_summary([ResultRecord(judge="j", example=example, result=JudgeResult(verdict=_verdict("grounded")))]) is None


def test_paired_bootstrap_difference():
    gold = ["grounded", "ungrounded"] * 30
    same = paired_bootstrap_diff(gold, gold, gold, n_boot=200)
    assert same["balanced_accuracy"]["delta"] == 0.0 and same["balanced_accuracy"]["ci95"] == [0.0, 0.0]
    weak = ["grounded"] * 60
    better = paired_bootstrap_diff(gold, weak, gold, n_boot=500)["balanced_accuracy"]
    assert better["a"] == pytest.approx(0.5) and better["b"] == pytest.approx(1.0)
    assert better["delta"] == pytest.approx(0.5) and better["ci95"][0] > 0.3
    # the difference's CI is narrower than one judge's own CI would suggest when the judges agree mostly
    almost = list(gold)
    almost[0] = "ungrounded"
    close = paired_bootstrap_diff(gold, gold, almost, n_boot=500)["balanced_accuracy"]
    assert close["ci95"][1] == pytest.approx(0.0) and close["ci95"][0] < 0


def test_variants_are_judges_that_differ_only_in_prompts_or_model():
    template = PromptTemplate(hash="a", files={"direct.user.j2": "x"})
    other = PromptTemplate(hash="b", files={"direct.user.j2": "y"})
    a = JudgeSpec(spec="a", name="direct", settings={"model": "m", "prompts": None, "temperature": 0.0},
                  templates={"direct": template})
    b = a.model_copy(update={"spec": "b", "settings": {**a.settings, "prompts": "strict"},
                             "templates": {"direct": other}})
    assert variant_difference(a, b) == ["prompts"]
    c = a.model_copy(update={"spec": "c", "settings": {**a.settings, "model": "n"}})
    assert variant_difference(a, c) == ["model"]
    d = a.model_copy(update={"spec": "d", "settings": {**a.settings, "temperature": 0.7}})
    assert variant_difference(a, d) is None                        # sampling differs: not a prompt variant
    assert variant_difference(a, a.model_copy(update={"spec": "e", "name": "claims"})) is None
    # the same settings but other template texts (a run-wide --prompts folder edited between runs)
    assert variant_difference(a, a.model_copy(update={"spec": "f", "templates": {"direct": other}})) == ["templates"]
