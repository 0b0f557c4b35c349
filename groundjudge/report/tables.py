"""Tables as data, rendered twice: a rich table on the terminal and a Markdown section for a results file."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.table import Table

from groundjudge.report.markdown import table as markdown_table


@dataclass
class TextTable:
    """A titled table of strings with an optional note under it."""

    title: str
    headers: list[str]
    rows: list[list[str]]
    note: str = ""

    def to_rich(self, left_columns: int = 1, muted: Callable[[list[str]], bool] | None = None) -> Table:
        """A rich table: the first ``left_columns`` columns left-aligned, rows for which ``muted`` holds dimmed."""
        table = Table(title=self.title, caption=self.note or None, caption_justify="left")
        for i, heading in enumerate(self.headers):
            table.add_column(heading, justify="left" if i < left_columns else "right")
        for row in self.rows:
            table.add_row(*row, style="dim" if muted and muted(row) else None)
        return table

    def to_markdown(self) -> str:
        """A Markdown section: ``## title``, the table, then the note."""
        lines = [f"## {self.title}", "", markdown_table(self.headers, self.rows), ""]
        return "\n".join(lines + ([self.note, ""] if self.note else []))


def markdown_document(heading: str, preamble: Sequence[str], tables: Sequence[TextTable]) -> str:
    """``# heading``, preamble lines, then every table as a section."""
    return "\n".join([f"# {heading}", "", *preamble, *(t.to_markdown() for t in tables)])
