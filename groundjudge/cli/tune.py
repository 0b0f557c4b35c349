"""``groundjudge tune EXPERIMENT.toml``: search a judge's levers within a budget (see ``groundjudge.tune``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from groundjudge.cli.common import add_llm_options, console, stdout_console
from groundjudge.runs.chunk_option import DEFAULT_LOCAL_CHUNK, LOCAL_CHUNK_FLAG


def cmd_tune(args: argparse.Namespace) -> int:
    """Tune (or, with --dry-run, print the plan's calls and $), write tune.json, tune.md and winner.toml."""
    from groundjudge.tune.prepare import TuneOptions

    values = {k: v for k, v in vars(args).items() if k in TuneOptions.model_fields and v is not None}
    options = TuneOptions.model_validate({**values, "tune_file": args.tune_file})
    if args.dry_run:
        return _dry_run(options)
    from groundjudge.report.tune import tune_markdown
    from groundjudge.tune.run import RESULT_FILE, run_tune

    result = run_tune(options, say=lambda text: console.print(text, markup=False, soft_wrap=True))
    out = Path(options.out)
    (out / "tune.md").write_text(tune_markdown(result), encoding="utf-8")
    stdout = stdout_console()
    stdout.print(tune_markdown(result), markup=False, soft_wrap=True)
    stdout.print(f"tune: {out / RESULT_FILE}\nreport section: {out / 'tune.md'}\nwinner: {out / result.winner_config}",
                 markup=False, soft_wrap=True)
    return 0


def _dry_run(options) -> int:
    from rich.table import Table

    from groundjudge.tune.run import dry_run

    stages = dry_run(options)
    table = Table(title="tune plan (estimates; nothing was called)")
    for column in ("stage", "LLM calls", "input tokens", "output tokens", "$"):
        table.add_column(column, justify="left" if column == "stage" else "right")
    for s in stages:
        table.add_row(s.name, str(s.calls), str(s.input_tokens), str(s.output_tokens), f"{s.cost_usd:.4f}")
    stdout = stdout_console()
    stdout.print(table)
    stdout.print(f"at most {sum(s.calls for s in stages)} calls, ${sum(s.cost_usd for s in stages):.4f} "
                 "(litellm's price table; local servers cost 0; cached calls cost nothing)")
    return 0


def add_parser(verbs) -> None:
    """Add the ``tune`` verb and its options to the command's subparsers."""
    tune = verbs.add_parser("tune", help="search a judge's levers (calibration, demonstrations, instructions) "
                                         "within a budget of calls",
                            description="Tune the judge an experiment file's [tune] table names: successive halving "
                                        "on the select part, the start and the winner judged once on the test part.")
    tune.add_argument("tune_file", metavar="EXPERIMENT.toml", help="an experiment file with a [tune] table")
    tune.add_argument("--out", help="tune folder (tune_state.jsonl, tune.json, tune.md, winner.toml; default "
                                    "runs/tune)")
    tune.add_argument("--labels", metavar="FILE|RUN", help="people's labels (a labels.jsonl, or a run folder holding "
                                                           "one) as gold, matched by example id")
    tune.add_argument("--resume", action="store_true", help="continue the tune in --out (no call is repeated)")
    tune.add_argument("--concurrency", type=int, help="answers judged at once (default 8)")
    tune.add_argument(LOCAL_CHUNK_FLAG, dest="local_chunk", type=int, metavar="N",
                      help=f"answers handed at once to a local judge with a batch path (default {DEFAULT_LOCAL_CHUNK};"
                           " 1: one at a time)")
    tune.add_argument("--dry-run", action="store_true", help="print the plan's calls and $; call nothing")
    add_llm_options(tune)
    tune.set_defaults(func=cmd_tune, options_model="groundjudge.tune.prepare:TuneOptions")
