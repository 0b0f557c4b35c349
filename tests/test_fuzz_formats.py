"""Property-based tests of every format reader: random bytes, truncated valid files, wrong JSON types, huge fields.

The invariant: reading either succeeds (bad rows counted as skipped) or raises DataError whose message names the
file (and the line, where there is one) — never another exception. 4 properties x 150 generated cases = 600
cases per run (``GENERATED_CASES``), derandomized so CI sees the same cases every time.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from conftest import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundjudge.formats import ADAPTERS
from groundjudge.formats.load import DataError, load_examples, load_file

CASES_PER_PROPERTY = 150
GENERATED_CASES = 4 * CASES_PER_PROPERTY
"""Cases generated per run: four properties of CASES_PER_PROPERTY each."""

FUZZ = settings(max_examples=CASES_PER_PROPERTY, derandomize=True, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

FIXTURES = ROOT / "tests" / "fixtures"
SAMPLES: dict[str, bytes] = {
    "native.jsonl": b"".join((ROOT / "datasets" / "legal_qa" / "legal_qa.jsonl").read_bytes().splitlines(True)[:3]),
    "halueval.jsonl": json.dumps({"knowledge": "Paris is in France.", "question": "Where is Paris?",
                                  "right_answer": "France", "hallucinated_answer": "Spain"}).encode() + b"\n",
    "summedits_news.json": json.dumps([{"doc": "The firm earned $3.", "summary": "It earned $3.", "label": 1},
                                       {"doc": "The firm earned $3.", "summary": "It lost $3.", "label": 0}]).encode(),
    "TruthfulQA.csv": (b"Type,Category,Question,Best Answer,Correct Answers,Incorrect Answers,Source\n"
                       b"A,B,Is water wet?,Yes,Yes; It is,No; Never,src\n"),
    "mnli.tsv": b"entailment\tA man sleeps .\tA person sleeps .\ncontradiction\tA man sleeps .\tA man runs .\n",
    "dev.json": json.dumps({"documents": [{"id": 1, "text": "The NDA lasts two years.", "spans": [[0, 24]],
                                           "annotation_sets": [{"annotations": {"nda-1": {
                                               "choice": "Entailment", "spans": [0]}}}]}],
                            "labels": {"nda-1": {"hypothesis": "It lasts two years."}}}).encode(),
    "FaithBench.csv": (FIXTURES / "faithbench" / "FaithBench.csv").read_bytes(),
    "aggrefact_sample.csv": (FIXTURES / "llm_aggrefact" / "aggrefact_sample.csv").read_bytes(),
    "aggrefact_sample.tsv": (FIXTURES / "llm_aggrefact" / "aggrefact_sample.tsv").read_bytes(),
    "response.jsonl": (FIXTURES / "ragtruth" / "response.jsonl").read_bytes(),
}
"""A small valid file of every format (by the file name its adapter expects)."""

SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".txt")


def check_read(path: Path, fmt: str | None) -> None:
    """Read one file (format forced or detected): success, or a DataError that names the file and its lines."""
    try:
        if fmt is None:
            load_examples([path], None, skip_invalid=True)
        else:
            load_file(path, fmt)
    except DataError as err:
        first = str(err).splitlines()[0]
        assert path.name in str(err) and first, str(err)
        for row in err.errors:
            assert Path(row.file).name == path.name or path.name in row.file, row
            assert row.line >= 0 and row.field and row.message, row


def check_all_readers(folder: Path, name: str, content: bytes) -> None:
    """Write ``content`` as ``name`` and read it with detection and with every format forced."""
    path = folder / name
    path.write_bytes(content)
    check_read(path, None)
    for fmt in ADAPTERS:
        check_read(path, fmt)


@FUZZ
@given(content=st.binary(max_size=2048), suffix=st.sampled_from(SUFFIXES))
def test_random_bytes_are_named_errors_or_clean_reads(content, suffix):
    with tempfile.TemporaryDirectory() as folder:
        check_all_readers(Path(folder), f"random{suffix}", content)


@FUZZ
@given(sample=st.sampled_from(sorted(SAMPLES)), cut=st.floats(min_value=0.0, max_value=1.0),
       noise=st.binary(max_size=8))
def test_truncated_valid_files_are_named_errors_or_clean_reads(sample, cut, noise):
    content = SAMPLES[sample]
    with tempfile.TemporaryDirectory() as folder:
        if sample == "response.jsonl":
            shutil.copy(FIXTURES / "ragtruth" / "source_info.jsonl", Path(folder) / "source_info.jsonl")
        check_all_readers(Path(folder), sample, content[:int(len(content) * cut)] + noise)


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                           | st.text(max_size=20), lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)


@FUZZ
@given(values=st.dictionaries(st.sampled_from(["id", "context", "answer", "label", "question", "split", "meta",
                                               "error_types", "knowledge", "right_answer", "hallucinated_answer",
                                               "doc", "summary", "claim"]), JSON_VALUES, max_size=8),
       as_array=st.booleans())
def test_wrong_json_types_are_named_errors_or_clean_reads(values, as_array):
    content = json.dumps([values] if as_array else values).encode() + b"\n"
    with tempfile.TemporaryDirectory() as folder:
        check_all_readers(Path(folder), "typed.json" if as_array else "typed.jsonl", content)


@settings(max_examples=CASES_PER_PROPERTY, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(size=st.integers(min_value=100_000, max_value=2_000_000), field=st.sampled_from(["context", "answer", "id"]),
       valid=st.booleans())
def test_huge_fields_are_read_or_named(size, field, valid):
    row = {"id": "h1", "context": ["ctx"], "answer": "ans", "label": "grounded"}
    row[field] = "x" * size if valid else ["x" * size, 1]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "huge.jsonl"
        path.write_bytes(json.dumps(row).encode() + b"\n")
        check_read(path, None)
        check_read(path, "native")
