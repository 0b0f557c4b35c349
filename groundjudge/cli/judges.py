"""``groundjudge judges``: the registered judges and their settings."""

from __future__ import annotations

import argparse
import json
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
from groundjudge.cli.common import stdout_console
from groundjudge.judges import describe_judges  # noqa: E402


def cmd_judges(args: argparse.Namespace) -> int:
    """List the registered judges and their settings."""
    rows = describe_judges()
    if args.json:
        print(json.dumps(rows, indent=2, default=str))
        return 0
    from rich.table import Table

    table = Table(title="judges: --judge NAME or NAME:key=value,key=value", show_lines=True)
    for column in ("judge", "what it does", "settings (defaults)"):
        table.add_column(column)
    for row in rows:
        settings = "\n".join(f"{k}={v}" for k, v in row["settings"].items())
        table.add_row(row["name"], row["description"], settings)
    stdout_console().print(table)
    from groundjudge.local_nli.backend_report import auto_summary

    for line in auto_summary():   # what dtype=auto (the local judges' default) gives on this machine
        stdout_console().print(line, markup=False, highlight=False, soft_wrap=True)
    return 0


def add_parser(verbs) -> None:
    """Add the ``judges`` verb and its options to the command's subparsers."""
    judges = verbs.add_parser("judges", help="list the judges and their settings")
    judges.add_argument("--json", action="store_true")
    judges.set_defaults(func=cmd_judges)
