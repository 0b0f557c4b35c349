"""Where a key sits in a TOML file: the line of ``[a.b]`` headers and ``key = ...`` lines, for error messages.

``tomllib`` gives values without positions, so a bad value in an experiment file
is located by reading the file's lines: table headers set the current table,
``key = value`` lines (dotted keys and quoted keys included) add their path. A
key inside an inline table or an array is reported at the line of the nearest
key that encloses it.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"""^\s*\[\[?\s*((?:"[^"]*"|'[^']*'|[^\]"'])+?)\s*\]\]?\s*(?:#.*)?$""")
"""A table header; its key parts may be quoted and hold ``]`` (``[judges."quip[n=11]"]``)."""
_KEY = re.compile(r"""^\s*((?:"[^"]*"|'[^']*'|[A-Za-z0-9_-]+)(?:\s*\.\s*(?:"[^"]*"|'[^']*'|[A-Za-z0-9_-]+))*)\s*=""")
_PART = re.compile(r"""\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*""")


def _parts(dotted: str) -> tuple[str, ...]:
    return tuple(match.strip().strip("\"'") for match in _PART.findall(dotted))


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Every table header's and key's path -> its 1-based line (the first, when a path repeats)."""
    lines: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    depth = 0   # inside a multi-line array or string no new key starts
    for number, line in enumerate(text.splitlines(), start=1):
        if depth == 0:
            header = _HEADER.match(line)
            if header:
                table = _parts(header.group(1))
                lines.setdefault(table, number)
                continue
            key = _KEY.match(line)
            if key:
                lines.setdefault(table + _parts(key.group(1)), number)
        code = line.split("#", 1)[0]
        depth = max(0, depth + code.count("[") + code.count("{") - code.count("]") - code.count("}")) \
            if not _HEADER.match(line) else 0
    return lines


def line_of(text: str, path: tuple[str, ...] | list[str]) -> int | None:
    """The line of ``path`` (e.g. ``("judges", "quip", "n")``), else of the nearest enclosing key; None if none."""
    found = key_lines(text)
    path = tuple(path)
    for size in range(len(path), 0, -1):
        if path[:size] in found:
            return found[path[:size]]
    return None
