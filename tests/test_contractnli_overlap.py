"""scripts/contractnli_overlap.py on a two-contract ContractNLI file written here: the overlap, negation and
per-hypothesis figures, and AUCs pooled, without the most contradicted hypothesis and within hypotheses."""

from __future__ import annotations

import importlib.util

import pytest
from conftest import ROOT


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("contractnli_overlap", ROOT / "scripts" / "contractnli_overlap.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def contract(text: str, spans: list[tuple[int, int]], annotations: dict) -> dict:
    return {"text": text, "spans": spans, "annotation_sets": [{"annotations": annotations}]}


DATA = {
    "labels": {"h1": {"hypothesis": "Information includes only technical data.", "short_description": "only"},
               "h2": {"hypothesis": "The recipient must not copy documents.", "short_description": "copy"}},
    "documents": [
        contract("Information includes technical data and business plans. The recipient may copy documents.",
                 [(0, 55), (56, 89)], {"h1": {"choice": "Contradiction", "spans": [0]},
                                       "h2": {"choice": "Contradiction", "spans": [1]}}),
        contract("Information includes technical data only. Copies are not allowed.",
                 [(0, 41), (42, 65)], {"h1": {"choice": "Entailment", "spans": [0]},
                                       "h2": {"choice": "Entailment", "spans": [1]}}),
        contract("Anyone may copy the documents.", [(0, 30)], {"h1": {"choice": "NotMentioned", "spans": []},
                                                             "h2": {"choice": "Contradiction", "spans": [0]}}),
    ],
}


def test_the_figures_of_a_small_file(script):
    figures = script.measure(DATA)
    assert figures["pairs"] == {"Entailment": 2, "Contradiction": 3}
    assert figures["contradictions_by_hypothesis"] == {"h2": 2, "h1": 1}
    assert set(figures["both_labels"]) == {"h1", "h2"} and figures["both_labels"]["h2"]["Contradiction"]["n"] == 2
    # h1 entailed: information, includes, technical, data all in its evidence
    assert figures["both_labels"]["h1"]["Entailment"]["overlap_mean"] == 1.0
    assert figures["evidence_with_negation"] == {"Entailment": 0.5, "Contradiction": 0.0}


def test_aucs_pooled_without_the_top_hypothesis_and_within(script):
    pairs = script.pairs_of(DATA)
    assert [(k, label) for k, label, *_ in pairs] == [("h1", "Contradiction"), ("h2", "Contradiction"),
                                                     ("h1", "Entailment"), ("h2", "Entailment"),
                                                     ("h2", "Contradiction")]
    # within each hypothesis the entailed pair scores highest, but h2's scores all sit above h1's
    out = script.aucs(pairs, [0.1, 0.6, 0.3, 0.9, 0.7])
    assert out["within_strata"] == 1.0 and out["strata_with_both_classes"] == 2
    assert out["most_negative_stratum"] == "h2" and out["without_most_negative"] == 1.0   # h1 alone
    assert out["pooled"] == pytest.approx(0.667, abs=1e-3)   # 4 of the 6 (entailed, contradicted) pairs in order
    alone = script.aucs(pairs[:2] + pairs[4:], [0.1, 0.2, 0.3])   # one label only: nothing to rank
    assert alone["pooled"] is None and alone["within_strata"] is None
