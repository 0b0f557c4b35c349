"""Every bad input named, never a traceback: twenty malformed inputs through `groundjudge run`.

Each bad case must exit 2 with exactly one line on stderr, `error: ...`, naming the file (and line and field where
one is at fault), and leave no run folder. The table runs in-process through ``groundjudge.cli.main`` (an uncaught
exception fails the test as a traceback would); the cases that once ended in a traceback run again as a real
subprocess. The mixed files judge exactly their valid rows with --skip-invalid; a UTF-8 BOM and CRLF line endings
are read silently; a directory is read as its sorted data files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli, rent_rows

from groundjudge.cli import main
from groundjudge.runs.records import read_records

ROWS = rent_rows(3)
"""Six valid native rows (three grounded, three altered) that the fast local judge can score."""
FORMATS = ("ragtruth, contractnli, summedits, halueval, truthfulqa, faithbench, llm_aggrefact, nli_tsv, native")
FIX = "(fix the row, or pass --skip-invalid to skip and count it)"


def jsonl_bytes(rows: list[dict]) -> bytes:
    """Rows as UTF-8 JSON lines."""
    return b"".join(json.dumps(r).encode("utf-8") + b"\n" for r in rows)


def with_line(rows: list[dict], at: int, raw: bytes) -> bytes:
    """JSON lines with ``raw`` inserted as line ``at`` (1-based)."""
    lines = [json.dumps(r).encode("utf-8") + b"\n" for r in rows]
    lines.insert(at - 1, raw + b"\n")
    return b"".join(lines)


def two_bad_rows() -> bytes:
    """Native rows whose line 2 is not JSON and whose line 4 has an unknown label."""
    lines = [json.dumps(r).encode("utf-8") for r in ROWS]
    lines[1] = b"{oops"
    lines[3] = lines[3].replace(b'"ungrounded"', b'"maybe"')
    return b"\n".join(lines) + b"\n"


NOT_UTF8 = b'{"id": "bad\xff", "context": ["x"], "answer": "y", "label": "grounded"}'
AGGREFACT_CSV = b"doc,claim,label\nThe sky is blue.,The sky is blue.,1\nThe sky is blue.,The sky is gr\xe9en.,0\n"
SUMMEDITS_JSON = (b'[{"id": "s1", "doc": "The firm earned $3.",\n "summary": "It earned $3.", "label": 1},\n'
                  b' {"id": "s2", "doc": "caf\xe9", "summary": "It lost.", "label": 0}]')
ENCODING = "field '<encoding>': not UTF-8 (byte 0x{:02x} at byte offset {} of the file, column {} of the line)"

BAD_CASES = {
    # name: (files to write {path under tmp_path: bytes}, the data argument(s), extra flags, the exact error line
    #        with tmp_path left out)
    "invalid_json_line": ({"d.jsonl": with_line(ROWS, 3, b'{"id": "z", "context": ')}, ["d.jsonl"], [],
                          f"d.jsonl:3: field '<json>': Expecting value: line 1 column 24 (char 23) {FIX}"),
    "missing_field": ({"d.jsonl": with_line(ROWS, 2, b'{"id": "z", "context": ["c"], "label": "grounded"}')},
                      ["d.jsonl"], [], f"d.jsonl:2: field 'answer': field required {FIX}"),
    "wrong_type": ({"d.jsonl": with_line(ROWS, 4, b'{"id": "z", "context": 7, "answer": "a", "label": "grounded"}')},
                   ["d.jsonl"], [], f"d.jsonl:4: field 'context': Input should be a valid tuple {FIX}"),
    "bad_label": ({"d.jsonl": with_line(ROWS, 2, b'{"id": "z", "context": "c", "answer": "a", "label": "yes"}')},
                  ["d.jsonl"], [], f"d.jsonl:2: field 'label': Input should be 'grounded' or 'ungrounded' {FIX}"),
    "two_bad_rows": ({"d.jsonl": two_bad_rows()}, ["d.jsonl"], [],
                     ("2 invalid rows: d.jsonl:2: field '<json>': Expecting property name enclosed in double quotes: "
                      "line 1 column 2 (char 1); d.jsonl:4: field 'label': Input should be 'grounded' or 'ungrounded' "
                      "(fix the rows, or pass --skip-invalid to skip and count them)")),
    "empty_file": ({"d.jsonl": b""}, ["d.jsonl"], [], "d.jsonl: empty file: no rows to read"),
    "not_utf8_detected": ({"d.jsonl": with_line(ROWS, 3, NOT_UTF8)}, ["d.jsonl"], [],
                          f"d.jsonl:3: {ENCODING.format(0xff, 525, 12)} {FIX}"),
    "not_utf8_forced": ({"d.jsonl": with_line(ROWS, 3, NOT_UTF8)}, ["d.jsonl"], ["--format", "native"],
                        f"d.jsonl:3: {ENCODING.format(0xff, 525, 12)} {FIX}"),
    "not_utf8_first_line": ({"d.jsonl": with_line(ROWS, 1, NOT_UTF8)}, ["d.jsonl"], [],
                            f"d.jsonl:1: {ENCODING.format(0xff, 11, 12)} {FIX}"),
    "not_utf8_csv": ({"test.csv": AGGREFACT_CSV}, ["test.csv"], [],
                     f"test.csv:3: {ENCODING.format(0xe9, 82, 31)} {FIX}"),
    "not_utf8_json_array": ({"summedits_x.json": SUMMEDITS_JSON}, ["summedits_x.json"], [],
                            f"summedits_x.json:3: {ENCODING.format(0xe9, 111, 26)} {FIX}"),
    "directory_forced_native": ({"data/a.jsonl": jsonl_bytes(ROWS),
                                 "data/b.jsonl": with_line(rent_rows(5)[6:], 2, NOT_UTF8)},
                                ["data"], ["--format", "native"],
                                f"data/b.jsonl:2: {ENCODING.format(0xff, 254, 12)} {FIX}"),
    "missing_file": ({}, ["nowhere.jsonl"], [], "nowhere.jsonl: no such file or directory"),
    "undetectable": ({"d.txt": b"just some prose\nnothing to judge\n"}, ["d.txt"], [],
                     f"d.txt: unrecognised format; pass --format (one of: {FORMATS})"),
    "truncated_last_line": ({"d.jsonl": jsonl_bytes(ROWS)[:-25]}, ["d.jsonl"], [],
                            (f"d.jsonl:6: field '<json>': Unterminated string starting at: line 1 column 193 "
                             f"(char 192) {FIX}")),
    "empty_directory": ({"empty/.keep": b""}, ["empty"], [],
                        "empty: no data files of a known format in this directory (it is empty)"),
    "directory_of_other_files": ({"docs/README.md": b"# a card\n"}, ["docs"], ["--format", "native"],
                                 "docs: no native data files in this directory (it holds only README.md)"),
    "duplicate_id": ({"d.jsonl": jsonl_bytes(ROWS + ROWS[:1])}, ["d.jsonl"], [],
                     f"d.jsonl:7: field 'id': duplicate id 'g0' (first on line 1) {FIX}"),
    "duplicate_id_across_files": ({"a.jsonl": jsonl_bytes(ROWS), "b.jsonl": jsonl_bytes(ROWS[1:2])},
                                  ["a.jsonl", "b.jsonl"], [],
                                  ("b.jsonl: field 'id': duplicate id 'u0' in example 1 of the file (first in "
                                   "a.jsonl)")),
    "no_valid_rows_with_skip": ({"d.jsonl": b"{oops\n[1]\n"}, ["d.jsonl"], ["--format", "native", "--skip-invalid"],
                                ("d.jsonl: no valid rows to judge (2 skipped; the first: d.jsonl:1: field '<json>': "
                                 "Expecting property name enclosed in double quotes: line 1 column 2 (char 1))")),
}

IN_A_SUBPROCESS = ("not_utf8_forced", "directory_forced_native", "missing_file")
"""The cases that once ended in a traceback, run again as a user runs them."""


def write(tmp_path: Path, files: dict[str, bytes]) -> None:
    """Write each file under tmp_path."""
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def run_args(tmp_path: Path, data: list[str], flags: list[str], out: str = "run") -> list[str]:
    """The arguments of `groundjudge run` on files of tmp_path with the fast local judge, into tmp_path/out."""
    return ["run", *[str(tmp_path / d) for d in data], "--judge", "quip:n=21", "--dev-fraction", "0",
            "--out", str(tmp_path / out), "--quiet", *flags]


def assert_one_error_line(stderr: str, tmp_path: Path, expected: str) -> None:
    """stderr is exactly the expected `error:` line (paths under tmp_path written relative to it)."""
    assert "Traceback" not in stderr, stderr
    assert stderr.endswith("\n") and stderr.count("\n") == 1, stderr
    assert stderr.rstrip("\n").replace(f"{tmp_path}/", "") == f"error: {expected}"


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_input_is_one_named_line_and_no_run_folder(tmp_path, capsys, case):
    files, data, flags, expected = BAD_CASES[case]
    write(tmp_path, files)
    assert main(run_args(tmp_path, data, flags)) == 2
    captured = capsys.readouterr()
    assert_one_error_line(captured.err, tmp_path, expected)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("case", IN_A_SUBPROCESS)
def test_bad_input_in_a_real_process(tmp_path, case):
    files, data, flags, expected = BAD_CASES[case]
    write(tmp_path, files)
    result = cli(*run_args(tmp_path, data, flags), check=False)
    assert result.returncode == 2, result.stderr
    assert_one_error_line(result.stderr, tmp_path, expected)
    assert not (tmp_path / "run").exists()


MIXED = {
    # name: (file content, the line skipped)
    "invalid_json": (with_line(ROWS, 4, b'{"id": "z", "context": '), 4),
    "not_utf8": (with_line(ROWS, 4, NOT_UTF8), 4),
    "not_utf8_first_line": (with_line(ROWS, 1, NOT_UTF8), 1),   # the format is still detected
    "markup_in_the_error": (jsonl_bytes([*ROWS, {**ROWS[0], "id": "[/x]"}, {**ROWS[1], "id": "[/x]"}]), 8),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(MIXED))
def test_mixed_file_judges_exactly_its_valid_rows(tmp_path, case):
    content, skipped_line = MIXED[case]
    (tmp_path / "d.jsonl").write_bytes(content)
    result = cli(*run_args(tmp_path, ["d.jsonl"], ["--skip-invalid"]))
    assert "Traceback" not in result.stderr
    assert f"skipped 1 invalid row(s); first: {tmp_path / 'd.jsonl'}:{skipped_line}:" in result.stderr
    records = read_records(tmp_path / "run" / "records.jsonl")
    valid = [r["id"] for r in ROWS] + (["[/x]"] if case == "markup_in_the_error" else [])
    assert sorted(r.example.id for r in records.results) == sorted(valid)
    assert records.header.dataset.skipped_rows == 1


def test_bom_and_crlf_are_read_silently(tmp_path):
    body = jsonl_bytes(ROWS).replace(b"\n", b"\r\n")
    write(tmp_path, {"bom.jsonl": b"\xef\xbb\xbf" + body})
    result = cli(*run_args(tmp_path, ["bom.jsonl"], []))
    assert "error" not in result.stderr and "skipped" not in result.stderr, result.stderr
    records = read_records(tmp_path / "run" / "records.jsonl")
    assert [r.example.answer for r in records.results] == [r["answer"] for r in ROWS]  # no \r, no BOM kept
    assert [r.example.id for r in records.results] == [r["id"] for r in ROWS]
    assert records.header.dataset.skipped_rows == 0


@pytest.mark.slow
def test_a_directory_is_read_as_its_sorted_data_files(tmp_path):
    tqa = (b"Type,Category,Question,Best Answer,Correct Answers,Incorrect Answers,Source\n"
           b"A,B,Is water wet?,Yes it is,Yes it is; It is wet,No it is not; Never wet,src\n")
    write(tmp_path, {"data/b.jsonl": jsonl_bytes(rent_rows(5)[6:]), "data/a.jsonl": jsonl_bytes(ROWS),
                     "data/README.md": b"# the card of this folder\n", "data/sub/TruthfulQA.csv": tqa})
    result = cli(*run_args(tmp_path, ["data"], []))
    header = read_records(tmp_path / "run" / "records.jsonl").header
    assert [Path(f).name for f in header.dataset.files] == ["a.jsonl", "b.jsonl", "TruthfulQA.csv"], result.stderr
    assert list(header.dataset.formats) == ["native", "native", "truthfulqa"]
    assert header.dataset.n == len(ROWS) + 4 + 4

    result = cli(*run_args(tmp_path, ["data"], ["--format", "native"], out="native"))
    header = read_records(tmp_path / "native" / "records.jsonl").header
    assert [Path(f).name for f in header.dataset.files] == ["a.jsonl", "b.jsonl"], result.stderr
    assert header.dataset.n == len(ROWS) + 4
