"""The code blocks of the documentation (README.md and docs/**/*.md) and the marker comments before them.

The convention (also in docs/design.md, "Code blocks in the docs are tested"): ```bash / ```sh blocks are run,
```python blocks executed, ```toml blocks parsed; an HTML comment on the line just before a block,
``<!-- snippet: syntax-only (REASON) -->``, checks its syntax only, and ``<!-- snippet: file PATH -->`` writes it
into the page's workspace as PATH. MyST directives (```{toctree}) and other languages are not code to run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RUN_LANGS = {"bash": "bash", "sh": "bash", "shell": "bash", "python": "python", "py": "python", "toml": "toml"}
MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(syntax-only|file)\b\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)(.*)$")


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it is, its language, its text, and its marker (mode, argument)."""

    page: str
    line: int
    lang: str
    code: str
    mode: str = "run"
    arg: str = ""

    @property
    def where(self) -> str:
        """``page:line`` of the block's opening fence."""
        return f"{self.page}:{self.line}"


def doc_pages() -> list[Path]:
    """README.md, then every Markdown page of the docs (built output and extension code left out), in order."""
    pages = sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts and "_ext" not in p.parts)
    return [ROOT / "README.md", *pages]


def blocks(path: Path) -> list[Block]:
    """The runnable blocks of one page (languages in RUN_LANGS), with their markers."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    previous = ""
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            if lines[i].strip():
                previous = lines[i]
            i += 1
            continue
        indent, fence, lang = match.group(1), match.group(2), match.group(3).lower()
        start = i
        body = []
        i += 1
        while i < len(lines) and not (lines[i].strip().startswith(fence) and lines[i].strip().strip(fence[0]) == ""):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        i += 1
        marker = MARKER.match(previous)
        previous = ""
        if lang not in RUN_LANGS:
            continue
        mode, arg = (marker.group(1), marker.group(2)) if marker else ("run", "")
        found.append(Block(path.relative_to(ROOT).as_posix(), start + 1, RUN_LANGS[lang], "\n".join(body) + "\n",
                           mode, arg))
    return found
