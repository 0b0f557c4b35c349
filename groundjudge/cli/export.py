"""``groundjudge export``: a run's verdicts and claims as flat CSV or Parquet tables, or into Phoenix (``--to phoenix``)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
from groundjudge.cli.common import UsageError, stdout_console
from groundjudge.cli.export_phoenix import TOOLS, export_to_phoenix
from groundjudge.runs.records import find_records, read_records
from groundjudge.runs.tables import (
    CLAIM_COLUMNS,
    VERDICT_COLUMNS,
    claim_rows,
    verdict_rows,
    write_table,
)


def cmd_export(args: argparse.Namespace) -> int:
    """Write verdicts.<ext> and claims.<ext> from one run directory's records."""
    run_dir = Path(args.run_dir)
    if not run_dir.is_dir():
        raise UsageError(f"{run_dir}: no such run directory")
    path = find_records(run_dir)
    if not path.exists():
        raise UsageError(f"{run_dir}: no records.jsonl (not a groundjudge run directory)")
    if args.to in TOOLS:
        return export_to_phoenix(args)
    records = read_records(path)
    out = Path(args.to) if args.to else run_dir
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out}: not a directory (--to)")
    out.mkdir(parents=True, exist_ok=True)
    tables = (("verdicts", verdict_rows(records), VERDICT_COLUMNS), ("claims", claim_rows(records), CLAIM_COLUMNS))
    stdout = stdout_console()
    for name, rows, columns in tables:
        try:
            written = write_table(rows, out / f"{name}.{args.format}", args.format, columns=columns)
        except ImportError as err:
            raise UsageError(str(err)) from None
        stdout.print(f"{name + ':':<10}{written} ({len(rows)} rows)", markup=False, highlight=False)
    return 0


def add_parser(verbs) -> None:
    """Add the ``export`` verb and its options to the command's subparsers."""
    export = verbs.add_parser("export", help="a run's verdicts and claims as CSV or Parquet tables",
                              description="Flatten a run directory's records into two tables: verdicts (one row "
                                          "per judge and answer) and claims (one row per claim verdict).")
    export.add_argument("run_dir", metavar="RUN_DIR", help="run directory (records.jsonl or records.jsonl.gz)")
    export.add_argument("--format", choices=("csv", "parquet"), default="csv",
                        help="table format (default csv; parquet needs pyarrow)")
    export.add_argument("--to", metavar="DIR|phoenix",
                        help="output folder (default RUN_DIR), or 'phoenix': send the verdicts to the Phoenix at "
                             "--endpoint (span annotations, else a dataset + experiment; docs/integrations/phoenix.md)")
    export.add_argument("--endpoint", metavar="URL", help="--to phoenix: the Phoenix server (PHOENIX_API_KEY if set)")
    export.add_argument("--dataset", metavar="NAME",
                        help="--to phoenix: the dataset for answers without a span id (default 'groundjudge RUN_ID')")
    export.set_defaults(func=cmd_export)
