"""`groundjudge export`: a real run's verdicts and claims as CSV and Parquet tables that agree with its records.

The run is made in-process on the bundled legal_qa data with two local quip judges (no model, no network), then
exported both ways and read back with pandas.
"""

from __future__ import annotations

import gzip
import shutil
import sys
from pathlib import Path

import pytest

from groundjudge.cli import main
from groundjudge.runs.records import find_records, read_records
from groundjudge.runs.tables import (
    CLAIM_COLUMNS,
    VERDICT_COLUMNS,
    claim_rows,
    to_dataframe,
    verdict_rows,
    write_table,
)

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "datasets" / "legal_qa" / "legal_qa.jsonl"
JUDGES = ("quip", "quip:n=11")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A finished run of two quip judges on 20 sampled legal_qa answers."""
    out = tmp_path_factory.mktemp("export") / "run"
    argv = ["run", str(DATA), "--out", str(out), "--quiet", "--sample", "20"]
    for judge in JUDGES:
        argv += ["--judge", judge]
    assert main(argv) == 0
    return out


@pytest.fixture(scope="module")
def exported(run_dir, tmp_path_factory) -> dict[str, Path]:
    """The run exported as csv (into the run folder) and as parquet (into another folder)."""
    assert main(["export", str(run_dir)]) == 0
    elsewhere = tmp_path_factory.mktemp("parquet")
    assert main(["export", str(run_dir), "--format", "parquet", "--to", str(elsewhere)]) == 0
    return {"csv": run_dir, "parquet": elsewhere}


def read(folder: Path, name: str, fmt: str):
    """One exported table read back with pandas."""
    path = folder / f"{name}.{fmt}"
    assert path.is_file(), path
    return pd.read_csv(path) if fmt == "csv" else pd.read_parquet(path)


def comparable(frame):
    """A frame with every missing value as None and whole floats as ints (CSV and Parquet type them apart)."""
    frame = frame.astype(object).where(frame.notna(), None)
    return frame.map(lambda v: int(v) if isinstance(v, float) and v.is_integer() else v)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_verdict_table_matches_the_records(run_dir, exported, fmt):
    records = read_records(find_records(run_dir))
    table = read(exported[fmt], "verdicts", fmt)
    assert len(records.results) == 2 * 20
    assert len(table) == len(records.results)
    assert list(table.columns) == list(VERDICT_COLUMNS)
    assert set(table["judge"]) == set(JUDGES)
    assert set(table["kind"]) == {"quip"}
    assert set(table["run_id"]) == {records.header.run_id}
    assert table["correct"].astype(bool).tolist() == (table["label"] == table["gold_label"]).tolist()
    by_key = {(r.judge, r.example.id): r for r in records.results}
    for row in table.itertuples():
        record = by_key[(row.judge, row.example_id)]
        claims = record.result.verdict.claims
        assert row.label == record.result.verdict.label and row.gold_label == record.example.label
        assert row.score == pytest.approx(record.result.verdict.score)
        assert row.n_claims == len(claims)
        assert row.n_unsupported == sum(c.label != "supported" for c in claims)
        assert row.llm_calls == row.llm_calls_cached == row.input_tokens == row.cost_usd == row.n_repeats == 0
    assert table["n_unsupported"].sum() > 0


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_claim_table_has_one_row_per_claim(run_dir, exported, fmt):
    records = read_records(find_records(run_dir))
    table = read(exported[fmt], "claims", fmt)
    assert list(table.columns) == list(CLAIM_COLUMNS)
    assert len(table) == sum(len(r.result.verdict.claims) for r in records.results) > 0
    first = records.results[0]
    rows = table[(table["judge"] == first.judge) & (table["example_id"] == first.example.id)]
    assert rows["claim_index"].tolist() == list(range(len(first.result.verdict.claims)))
    assert rows["claim"].tolist() == [c.claim.text for c in first.result.verdict.claims]
    assert rows["label"].tolist() == [c.label for c in first.result.verdict.claims]


@pytest.mark.parametrize("name", ["verdicts", "claims"])
def test_csv_and_parquet_agree(exported, name):
    csv_frame = comparable(read(exported["csv"], name, "csv"))
    parquet_frame = comparable(read(exported["parquet"], name, "parquet"))
    pd.testing.assert_frame_equal(csv_frame, parquet_frame, check_dtype=False)


def test_rows_and_dataframe_without_files(run_dir):
    records = read_records(find_records(run_dir))
    frame = to_dataframe(verdict_rows(records), VERDICT_COLUMNS)
    assert list(frame.columns) == list(VERDICT_COLUMNS) and len(frame) == len(records.results)
    assert len(to_dataframe(claim_rows(records))) == sum(len(r.result.verdict.claims) for r in records.results)


def test_gzipped_records_export_too(run_dir, tmp_path, capsys):
    published = tmp_path / "published"
    published.mkdir()
    with open(run_dir / "records.jsonl", "rb") as src, gzip.open(published / "records.jsonl.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    assert main(["export", str(published)]) == 0
    printed = capsys.readouterr().out
    assert str(published / "verdicts.csv") in printed and "(40 rows)" in printed
    assert len(pd.read_csv(published / "verdicts.csv")) == 40


def test_empty_run_writes_header_only_tables(run_dir, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    header = (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines()[0]
    (empty / "records.jsonl").write_text(header + "\n", encoding="utf-8")
    assert main(["export", str(empty)]) == 0
    assert main(["export", str(empty), "--format", "parquet"]) == 0
    for fmt in ("csv", "parquet"):
        table = read(empty, "verdicts", fmt)
        assert len(table) == 0 and list(table.columns) == list(VERDICT_COLUMNS)


@pytest.mark.parametrize("missing", ["no_such_dir", "empty_dir"])
def test_missing_run_is_one_error_line(tmp_path, capsys, missing):
    target = tmp_path / missing
    if missing == "empty_dir":
        target.mkdir()
    assert main(["export", str(target)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.endswith("\n") and err.count("\n") == 1 and err.startswith(f"error: {target}: "), err
    assert not (target / "verdicts.csv").exists()


def test_missing_pyarrow_is_a_clear_error(run_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ImportError, match=r'pip install "groundjudge\[pandas\]"'):
        write_table([{"a": 1}], tmp_path / "t.parquet", "parquet")
    assert main(["export", str(run_dir), "--format", "parquet", "--to", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and 'pip install "groundjudge[pandas]"' in err, err


def test_run_ids_read_back_from_csv_as_the_same_strings(tmp_path):
    """A bare 12-hex id is all digits about once in 300 runs, and pandas then reads it as an int (a CI failure)."""
    import io

    from groundjudge.runs.records import new_run_id

    ids = [new_run_id() for _ in range(3000)]
    assert len(set(ids)) == len(ids)
    for run_id in ids:
        back = pd.read_csv(io.StringIO(f"run_id\n{run_id}\n"))["run_id"].tolist()
        assert back == [run_id]
