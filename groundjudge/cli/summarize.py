"""``groundjudge summarize``: recompute a run's summary.json from its records."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
from groundjudge.cli.common import stdout_console
from groundjudge.report.compare import comparison_table  # noqa: E402
from groundjudge.runs.records import find_records, read_records  # noqa: E402
from groundjudge.runs.summary import summarize, summarize_file  # noqa: E402


def cmd_summarize(args: argparse.Namespace) -> int:
    """Recompute summary.json from a run directory's records."""
    out = Path(args.dir)
    if args.labels:
        from groundjudge.labels.gold import load_gold, relabel_records

        records = read_records(find_records(out))
        records = relabel_records(records, load_gold(args.labels, {r.example.id for r in records.results}))
        summary = summarize(records, dawid_skene=args.dawid_skene)
    else:
        summary = summarize_file(find_records(out), dawid_skene=args.dawid_skene)
    target = out / ("summary.labels.json" if args.labels else "summary.json")
    target.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    stdout_console().print(comparison_table(summary))
    if args.dawid_skene:
        print_dawid_skene(summary)
    return 0


def print_dawid_skene(summary: dict) -> None:
    """Print the summary's Dawid-Skene hint, or why there is none."""
    from groundjudge.report.agreement import dawid_skene_terminal

    table = dawid_skene_terminal(summary)
    stdout_console().print(table if table is not None else
                           "Dawid-Skene: not fitted (it needs 3 judges or more that decided answers both ways)")


def add_parser(verbs) -> None:
    """Add the ``summarize`` verb and its options to the command's subparsers."""
    summ = verbs.add_parser("summarize", help="recompute summary.json from records.jsonl")
    summ.add_argument("dir")
    summ.add_argument("--labels", metavar="FILE|RUN", help="score against human labels (a labels.jsonl, or a run "
                                                          "folder holding one), matched by example id; written to "
                                                          "summary.labels.json")
    summ.add_argument("--dawid-skene", action="store_true",
                      help="add a model-based hint of each judge's accuracy from the verdicts alone (Dawid-Skene; "
                           "3 judges or more; assumes independent errors, see docs/labelling.md)")
    summ.set_defaults(func=cmd_summarize)
