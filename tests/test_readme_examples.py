"""The README's Python examples run as written (on the bundled data, with local judges)."""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def python_blocks() -> list[str]:
    """Every ```python block of the README."""
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.DOTALL)


def test_the_readme_python_examples_run(tmp_path, capsys):
    blocks = python_blocks()
    assert blocks, "the README has no Python example"
    for name in ("datasets",):
        (tmp_path / name).symlink_to(ROOT / name)
    cwd = os.getcwd()
    os.chdir(tmp_path)          # the examples use paths relative to the project and write into runs/
    try:
        for code in blocks:
            namespace: dict = {}
            exec(compile(code, "README.md", "exec"), namespace)   # noqa: S102 - our own documentation
    finally:
        os.chdir(cwd)
    printed = capsys.readouterr().out.split()
    assert printed[0] in ("grounded", "ungrounded")
    assert (tmp_path / "runs" / "python" / "records.jsonl").exists()
    assert (tmp_path / "runs" / "python" / "report" / "report.html").exists()
    assert namespace["frame"].shape[0] == 2 * namespace["run"].summary.dataset["n"]
