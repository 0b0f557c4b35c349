"""Every bad input named, never a traceback: fourteen malformed inputs through the real `groundjudge run`.

Each bad case must exit 2 with a one-line `error:` naming the file (and line and field where one is at
fault), print no traceback, and leave no run folder; the two mixed files judge exactly their valid rows
with --skip-invalid; a UTF-8 BOM and CRLF line endings are accepted silently.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli, rent_rows

from groundjudge.runs.records import read_records

ROWS = rent_rows(3)
"""Six valid native rows (three grounded, three altered) that the fast local judge can score."""


def jsonl_bytes(rows: list[dict]) -> bytes:
    """Rows as UTF-8 JSON lines."""
    return b"".join(json.dumps(r).encode("utf-8") + b"\n" for r in rows)


def with_line(rows: list[dict], at: int, raw: bytes) -> bytes:
    """JSON lines with ``raw`` inserted as line ``at`` (1-based)."""
    lines = [json.dumps(r).encode("utf-8") + b"\n" for r in rows]
    lines.insert(at - 1, raw + b"\n")
    return b"".join(lines)


NOT_UTF8 = b'{"id": "bad\xff", "context": ["x"], "answer": "y", "label": "grounded"}'

BAD_CASES = {
    # name: (files to write {relative path: bytes}, the data argument(s), extra flags, what the error must name)
    "invalid_json_line": ({"d.jsonl": with_line(ROWS, 3, b'{"id": "z", "context": ')}, ["d.jsonl"], [],
                          ["d.jsonl:3:", "<json>"]),
    "missing_field": ({"d.jsonl": with_line(ROWS, 2, b'{"id": "z", "context": ["c"], "label": "grounded"}')},
                      ["d.jsonl"], [], ["d.jsonl:2:", "'answer'"]),
    "wrong_type": ({"d.jsonl": with_line(ROWS, 4, b'{"id": "z", "context": 7, "answer": "a", "label": "grounded"}')},
                   ["d.jsonl"], [], ["d.jsonl:4:", "context"]),
    "bad_label": ({"d.jsonl": with_line(ROWS, 2, b'{"id": "z", "context": "c", "answer": "a", "label": "yes"}')},
                  ["d.jsonl"], [], ["d.jsonl:2:", "'label'"]),
    "empty_file": ({"d.jsonl": b""}, ["d.jsonl"], [], ["d.jsonl"]),
    "not_utf8_detected": ({"d.jsonl": with_line(ROWS, 3, NOT_UTF8)}, ["d.jsonl"], [],
                          ["d.jsonl:3:", "<encoding>", "0xff", "offset"]),
    "not_utf8_forced": ({"d.jsonl": with_line(ROWS, 3, NOT_UTF8)}, ["d.jsonl"], ["--format", "native"],
                        ["d.jsonl:3:", "<encoding>", "0xff", "offset"]),
    "not_utf8_first_line": ({"d.jsonl": with_line(ROWS, 1, NOT_UTF8)}, ["d.jsonl"], [],
                            ["d.jsonl:1:", "<encoding>"]),
    "missing_file": ({}, ["nowhere.jsonl"], [], ["nowhere.jsonl", "no such file"]),
    "undetectable": ({"d.txt": b"just some prose\nnothing to judge\n"}, ["d.txt"], [], ["d.txt", "--format"]),
    "truncated_last_line": ({"d.jsonl": jsonl_bytes(ROWS)[:-25]}, ["d.jsonl"], [], ["d.jsonl:6:", "<json>"]),
    "empty_directory": ({"empty/.keep": b""}, ["empty"], [], ["empty", "no data files"]),
    "directory_of_other_files": ({"docs/README.md": b"# a card\n"}, ["docs"], ["--format", "native"],
                                 ["docs", "no native data files"]),
    "duplicate_id": ({"d.jsonl": jsonl_bytes(ROWS + ROWS[:1])}, ["d.jsonl"], [], ["d.jsonl:7:", "duplicate id"]),
}


def write(tmp_path: Path, files: dict[str, bytes]) -> None:
    """Write each file under tmp_path."""
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def run(tmp_path: Path, data: list[str], *flags: str):
    """`groundjudge run` on files of tmp_path with the fast local judge; (result, run folder)."""
    out = tmp_path / "run"
    result = cli("run", *[str(tmp_path / d) for d in data], "--judge", "quip:n=21", "--dev-fraction", "0",
                 "--out", str(out), "--quiet", *flags, check=False)
    return result, out


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_input_is_one_named_line_and_no_run_folder(tmp_path, case):
    files, data, flags, named = BAD_CASES[case]
    write(tmp_path, files)
    result, out = run(tmp_path, data, *flags)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    error_lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(error_lines) == 1 and result.stderr.strip() == error_lines[0], result.stderr
    for part in named:
        assert part in error_lines[0], (part, error_lines[0])
    assert not out.exists()


@pytest.mark.parametrize("bad_line", [b'{"id": "z", "context": ', NOT_UTF8], ids=["invalid_json", "not_utf8"])
def test_mixed_file_judges_exactly_its_valid_rows(tmp_path, bad_line):
    (tmp_path / "d.jsonl").write_bytes(with_line(ROWS, 4, bad_line))
    result, out = run(tmp_path, ["d.jsonl"], "--skip-invalid")
    assert result.returncode == 0, result.stderr
    assert "skipped 1 invalid row(s)" in result.stderr and "d.jsonl:4:" in result.stderr
    records = read_records(out / "records.jsonl")
    assert sorted(r.example.id for r in records.results) == sorted(r["id"] for r in ROWS)
    assert records.header.dataset.skipped_rows == 1


def test_bom_and_crlf_are_read_silently_and_a_directory_reads_its_data_files(tmp_path):
    body = jsonl_bytes(ROWS).replace(b"\n", b"\r\n")
    write(tmp_path, {"bom.jsonl": b"\xef\xbb\xbf" + body,
                     "data/b.jsonl": jsonl_bytes(rent_rows(5)[6:]), "data/a.jsonl": jsonl_bytes(ROWS),
                     "data/README.md": b"# the card of this folder\n"})
    result, out = run(tmp_path, ["bom.jsonl"])
    assert result.returncode == 0 and not result.stderr.strip().startswith("error"), result.stderr
    records = read_records(out / "records.jsonl")
    assert [r.example.answer for r in records.results] == [r["answer"] for r in ROWS]  # no \r, no BOM kept

    out_dir = tmp_path / "run_dir"
    listed = cli("run", str(tmp_path / "data"), "--judge", "quip:n=21", "--dev-fraction", "0", "--out",
                 str(out_dir), "--quiet")
    header = read_records(out_dir / "records.jsonl").header
    assert [Path(f).name for f in header.dataset.files] == ["a.jsonl", "b.jsonl"], listed.stderr
    assert header.dataset.n == len(ROWS) + 4
