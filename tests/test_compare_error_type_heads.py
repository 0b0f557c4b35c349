"""`scripts/compare_error_type_heads.py`: the paired bootstrap of two recipes of the error-type head."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TYPES = ["Factual Inaccuracies", "Procedural Errors", "Misattributions"]


@pytest.fixture
def compare(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location("compare_error_type_heads",
                                                  ROOT / "scripts" / "compare_error_type_heads.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def items(predicted: list[str]) -> list[list]:
    gold = TYPES * 4
    return [[f"q{i}", g, p] for i, (g, p) in enumerate(zip(gold, predicted))]


def test_a_recipe_right_everywhere_beats_one_right_nowhere_and_equal_recipes_tie(compare):
    right = items(TYPES * 4)
    wrong = items(TYPES[1:] + TYPES[:1] + TYPES[1:] + TYPES[:1] + TYPES[1:] + TYPES[:1] + TYPES[1:] + TYPES[:1])
    better = compare.paired([wrong], [right], n_boot=200, seed=0)
    assert better["a"] == 0.0 and better["b"] == 1.0 and better["ci95"] == [1.0, 1.0]
    assert better["share_of_draws_b_not_above"] == 0.0
    same = compare.paired([right, wrong], [wrong, right], n_boot=200, seed=0)
    assert same["b_minus_a"] == 0.0 and same["ci95"] == [0.0, 0.0]


def test_builds_scored_on_other_items_are_refused(compare):
    other = [[f"x{i}", g, p] for i, (_, g, p) in enumerate(items(TYPES * 4))]
    with pytest.raises(ValueError, match="different items"):
        compare.paired([items(TYPES * 4)], [other], n_boot=10, seed=0)


def test_files_without_items_are_one_line(compare, tmp_path, capsys):
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"oracle": {"macro_f1": 0.2}}), encoding="utf-8")
    assert compare.main(["--a", str(old), "--b", str(old)]) == 2
    assert "no set with items" in capsys.readouterr().err
