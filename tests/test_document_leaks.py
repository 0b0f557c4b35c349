"""scripts/document_leaks.py: a held-out document among the paired ones is found by text and by group; shared
sentences are counted apart (tiny fixtures, no model)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from conftest import ROOT

from groundjudge.local_nli.doc_pairs import DocPair, UnitPairs
from groundjudge.local_nli.doc_sources import unit_key
from groundjudge.types import Example


def load_script() -> ModuleType:
    """The script as a module (scripts/ is not a package; it imports signal_steps from beside it)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        spec = importlib.util.spec_from_file_location("document_leaks", ROOT / "scripts" / "document_leaks.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "scripts"))


L = load_script()

SEEN = "The board meets every month in Oslo. Minutes are kept by the secretary of the board."
OTHER = "The museum opens at nine every morning. Children under twelve enter for free on Sundays."


def unit(text: str, group: str) -> UnitPairs:
    example = Example(id="x", context=(text,), answer="")
    pair = DocPair(premise=text, hypothesis=text.split(". ")[0] + ".", label="supported", kind="sentence",
                   rule=None, checks=(), support=(0,))
    return UnitPairs(key=unit_key(example), group=group, split="train", file="f.json", pairs=[pair])


def held(text: str, group: str) -> Example:
    return Example(id="h", context=(text,), answer="a claim", label="grounded", meta={"group": group})


def test_a_paired_held_out_document_is_found_by_text_and_group():
    found = L.leaks([unit(SEEN, "g1")], [held(SEEN, "g1"), held(OTHER, "g2")])
    assert found["documents_in_training"] == 1 and found["groups_in_training"] == 1
    assert found["held_out_documents"] == 2


def test_a_clean_split_has_no_leak_and_counts_shared_sentences_apart():
    boilerplate = "The board meets every month in Oslo. Visitors sign the register at the front desk today."
    found = L.leaks([unit(SEEN, "g1")], [held(boilerplate, "g2"), held(OTHER, "g3")])
    assert found["documents_in_training"] == 0 and found["groups_in_training"] == 0
    assert found["sentences_also_in_training_pairs"] == 1
    assert found["held_out_sentences"] == 4


def test_the_same_text_under_another_group_is_still_a_leak():
    found = L.leaks([unit(SEEN, "g1")], [held(SEEN, "renamed")])
    assert found["documents_in_training"] == 1 and found["groups_in_training"] == 0
