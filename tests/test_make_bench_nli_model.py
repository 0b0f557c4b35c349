"""scripts/make_bench_nli_model.py: ``--sets`` reads only the files named, and the leak count sees shared rows
(tiny TSV fixtures, no model)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from conftest import ROOT


def load_script() -> ModuleType:
    """The script as a module (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location("make_bench_nli_model", ROOT / "scripts" / "make_bench_nli_model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


M = load_script()


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    rows = {"snli": ["entailment\tA dog runs .\tAn animal moves .", "neutral\tA man sits .\tHe is tired ."],
            "mnli_matched": ["contradiction\tThe shop is open .\tThe shop is closed .",
                             "entailment\tA man sits .\tSomeone sits .", "bad line"],
            "mnli_mismatched": ["neutral\tRain fell .\tIt was cold .", "unknown\tX .\tY ."]}
    for name, lines in rows.items():
        (tmp_path / f"{name}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def test_default_reads_every_set_in_order(folder: Path) -> None:
    rows = M.nli_rows(folder)
    assert [r[0] for r in rows] == ["A dog runs .", "A man sits .", "The shop is open .", "A man sits .",
                                    "Rain fell ."]
    assert [r[2] for r in rows] == [0, 1, 2, 0, 1]


def test_sets_reads_only_the_files_named(folder: Path) -> None:
    rows = M.nli_rows(folder, ("mnli_matched",))
    assert rows == [("The shop is open .", "The shop is closed .", 2), ("A man sits .", "Someone sits .", 0)]


def test_parse_sets_names_the_flag_on_a_bad_value() -> None:
    assert M.parse_sets(" mnli_matched , snli") == ("mnli_matched", "snli")
    with pytest.raises(ValueError, match="--sets: unknown faithbench; known: snli, mnli_matched, mnli_mismatched"):
        M.parse_sets("mnli_matched,faithbench")
    with pytest.raises(ValueError, match="--sets"):
        M.parse_sets(" , ")


def test_shared_with_counts_premises_hypotheses_and_pairs(folder: Path) -> None:
    train = M.nli_rows(folder, ("mnli_matched",))
    assert M.shared_with(train, M.nli_rows(folder, ("snli",))) == {"premise": 1, "hypothesis": 0, "pair": 0}
    assert M.shared_with(train, M.nli_rows(folder, ("mnli_mismatched",))) == {"premise": 0, "hypothesis": 0,
                                                                              "pair": 0}
    assert M.shared_with(train, train) == {"premise": 2, "hypothesis": 2, "pair": 2}
