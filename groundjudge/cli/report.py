"""``groundjudge report``: Markdown, PNG plots and a self-contained HTML page from run directories."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
from groundjudge.cli.common import UsageError, stdout_console
from groundjudge.runs.records import find_records  # noqa: E402


def cmd_report(args: argparse.Namespace) -> int:
    """Markdown, PNG plots and a self-contained HTML page from one or more run directories."""
    from groundjudge.report.compare import compare
    from groundjudge.report.html import render_html
    from groundjudge.report.markdown import render_markdown
    from groundjudge.report.plots import make_plots

    for run_dir in args.dirs:
        if not find_records(run_dir).exists():
            raise UsageError(f"{run_dir}: no records.jsonl (not a groundjudge run directory)")
    if args.max_examples < 1:
        raise UsageError("--max-examples must be at least 1")
    try:
        comparison = compare(args.dirs, common_only=args.common, labels=args.labels)
    except ValueError as error:
        raise UsageError(str(error)) from None
    out = Path(args.out) if args.out else (Path(args.dirs[0]) / "report" if len(args.dirs) == 1 else Path("report"))
    out.mkdir(parents=True, exist_ok=True)
    plots = make_plots(comparison, out)
    markdown, page = out / "report.md", out / "report.html"
    markdown.write_text(render_markdown(comparison, plots), encoding="utf-8")
    page.write_text(render_html(comparison, plots, args.max_examples), encoding="utf-8")
    stdout = stdout_console()
    stdout.print(f"report of {len(comparison.judges)} judge(s) from {len(comparison.runs)} run(s) in {out}/")
    for note in comparison.notes:
        stdout.print(f"[yellow]note:[/] {note}")
    stdout.print(f"  markdown: {markdown}")
    stdout.print(f"  page:     {page} ({page.stat().st_size / 1e6:.1f} MB, self-contained; open it in a browser)")
    for plot in plots:
        stdout.print(f"  plot:     {plot}")
    return 0


def add_parser(verbs) -> None:
    """Add the ``report`` verb and its options to the command's subparsers."""
    report = verbs.add_parser("report", help="report.md, PNG plots and a self-contained report.html from runs",
                              description="Compare the judges of one or more run directories, from their records "
                                          "alone: report.md, PNG plots and one self-contained report.html.")
    report.add_argument("dirs", nargs="+", metavar="DIR", help="run directories (several are merged)")
    report.add_argument("--out", help="output folder (default DIR/report for one run, ./report for several)")
    report.add_argument("--common", action="store_true",
                        help="restrict every run to the examples all of them judged, so every row is on the same data")
    report.add_argument("--max-examples", type=int, default=2000,
                        help="examples embedded in report.html: disagreements, wrong verdicts and abstentions "
                             "first (default 2000)")
    report.add_argument("--labels", metavar="FILE|RUN", help="score every run against human labels (a labels.jsonl, or "
                                                            "a run folder holding one), matched by example id")
    report.set_defaults(func=cmd_report)
