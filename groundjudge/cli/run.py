"""``groundjudge run``: judge data (files, or an experiment file) with one or more judges and compare them."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from groundjudge.cli.common import UsageError, add_llm_options, console, stdout_console
from groundjudge.experiment import load_experiment
from groundjudge.formats import ADAPTERS
from groundjudge.judges.config import JudgeConfig
from groundjudge.runs.engine_options import add_engine_options

DEFAULTS = {"seed": 0, "dev_fraction": 0.3, "out": "runs/latest", "concurrency": 8}
"""Built-in values of the flags an experiment file may also set (a flag given wins over the file)."""


def options_from_args(args: argparse.Namespace):
    """The run's options (a ``RunOptions``): the flags given, over the experiment file's values (if the data is
    one), over the defaults."""
    from groundjudge.runs.execute import RunOptions   # imported when run: it brings the judges in

    flags = vars(args)
    given = {key: value for key, value in flags.items() if value is not None}
    experiment = None
    if len(args.data) == 1 and args.data[0].endswith(".toml"):
        experiment = load_experiment(args.data[0])
    elif any(path.endswith(".toml") for path in args.data):
        raise UsageError("an experiment file (.toml) is given alone: groundjudge run EXPERIMENT.toml [flags]")
    judges = list(experiment.judges) if experiment else []
    judges += [JudgeConfig.from_spec(text) for text in args.judge or []]
    if not judges:
        raise UsageError("no judge: pass --judge SPEC (see `groundjudge judges`) or an experiment file")
    names = [j.name for j in judges]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"judge {twice[0]!r} is given twice (names must be unique)")
    from_file: dict = {}
    if experiment:
        from_file = {**experiment.data.model_dump(), **experiment.run.model_dump(exclude_none=True)}
        from_file["data"] = from_file.pop("files")
    values = {**DEFAULTS, **{k: v for k, v in from_file.items() if v is not None}, **given}
    values["skip_invalid"] = bool(flags.get("skip_invalid")) or bool(from_file.get("skip_invalid"))
    values["data"] = from_file["data"] if experiment else args.data
    values["judges"] = judges
    values["experiment"] = experiment.path if experiment else None
    return RunOptions.model_validate({k: v for k, v in values.items() if k in RunOptions.model_fields})


def cmd_run(args: argparse.Namespace) -> int:
    """Judge the data with every judge, write records.jsonl and summary.json, print the tables."""
    from groundjudge.runs.execute import execute

    options = options_from_args(args)
    provider = None
    if getattr(args, "otel", False) and not options.dry_run:
        from groundjudge.integrations.otel_export import otlp_logger_provider, results_before

        provider, before = otlp_logger_provider(), results_before(options.out)   # a missing extra fails first
    phoenix_before = None
    if getattr(args, "phoenix", None) and not options.dry_run:
        from groundjudge.cli.export_phoenix import check_phoenix

        phoenix_before = check_phoenix(args.phoenix, options.out)   # a missing extra fails first
    try:
        code = execute(options)
    finally:
        if provider is not None:
            from groundjudge.integrations.otel_export import export_run

            sent = export_run(options.out, provider, before)
            console.print(f"otel: {sent} gen_ai.evaluation.result event(s) exported over OTLP")
    if phoenix_before is not None and (Path(options.out) / "records.jsonl").exists():
        from groundjudge.cli.export_phoenix import send_to_phoenix

        send_to_phoenix(options.out, args.phoenix, skip=phoenix_before)
    if code == 0 and not options.dry_run:
        if getattr(args, "dawid_skene", False):
            _add_dawid_skene(Path(options.out))
        print_tables(Path(options.out))
    return code


def _add_dawid_skene(out: Path) -> None:
    """Add the Dawid-Skene hint to a finished run's summary.json (when it has 3 judges or more)."""
    from groundjudge.runs.dawid_skene import dawid_skene_for_records
    from groundjudge.runs.records import find_records, read_records

    path = out / "summary.json"
    summary = json.loads(path.read_text(encoding="utf-8"))
    hint = dawid_skene_for_records(read_records(find_records(out)))
    summary.pop("dawid_skene", None)
    if hint is not None:
        summary["dawid_skene"] = hint.model_dump()
    else:
        stdout_console().print("Dawid-Skene: not fitted (it needs 3 judges or more that decided answers both ways)")
    path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


def print_tables(out: Path) -> None:
    """Print a finished run's comparison table (and the pairwise table) from its summary.json."""
    from groundjudge.report.compare import comparison_table, pairwise_table

    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    stdout = stdout_console()
    stdout.print(comparison_table(summary))
    if summary["pairwise"]:
        stdout.print(pairwise_table(summary))
    if summary.get("dawid_skene"):
        from groundjudge.report.agreement import dawid_skene_terminal

        stdout.print(dawid_skene_terminal(summary))
    stdout.print(f"records: {out / 'records.jsonl'}\nsummary: {out / 'summary.json'}")


def add_parser(verbs) -> None:
    """Add the ``run`` verb and its options to the command's subparsers."""
    run = verbs.add_parser("run", help="judge data with one or more judges and compare them")
    run.add_argument("data", nargs="+", help="data files (format auto-detected), or one experiment file (.toml)")
    run.add_argument("--format", choices=sorted(ADAPTERS), help="force the format of every file")
    run.add_argument("--judge", action="append", metavar="SPEC",
                     help="name or name:key=value,... (repeatable; added to an experiment's judges); "
                          "see `groundjudge judges`")
    run.add_argument("--split", choices=("train", "dev", "test"),
                     help="evaluate only this split (data without splits: the --dev-fraction group split)")
    run.add_argument("--calibrate-on", nargs="+", metavar="DEV", help="dev file(s) to fit thresholds on")
    run.add_argument("--calibrate-sample", type=int, metavar="N",
                     help="fit thresholds on a seeded sample of N dev examples (each one costs an LLM judge calls)")
    run.add_argument("--dev-fraction", type=float,
                     help="when the data has no splits, this share of groups is dev (0 disables; default 0.3)")
    run.add_argument("--labels", metavar="FILE|RUN",
                     help="human labels (a labels.jsonl, or a run folder holding one) as gold, matched by example id")
    run.add_argument("--sample", type=int, help="evaluate a seeded random sample of this many examples")
    run.add_argument("--seed", type=int, help="seed of --sample (default 0)")
    run.add_argument("--out", help="run directory (records.jsonl, summary.json; default runs/latest)")
    run.add_argument("--resume", action="store_true", help="continue the run in --out")
    run.add_argument("--concurrency", type=int, help="examples judged at once per judge (default 8)")
    run.add_argument("--skip-invalid", action="store_true", help="skip and count invalid rows")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    add_llm_options(run)
    run.add_argument("--max-cost", type=float, metavar="USD",
                     help="stop new LLM calls once this much is spent (the rest fall back or abstain: budget)")
    run.add_argument("--batch", action="store_true", default=None,
                     help="send every LLM judge's calls through the provider batch APIs (OpenAI, Anthropic): half "
                          "price, in rounds (a chain advances one stage per batch); --resume polls open batches")
    run.add_argument("--batch-poll-s", type=float, metavar="S", help="seconds between polls of open batches "
                                                                     "(default 30)")
    run.add_argument("--batch-max-wait-s", type=float, metavar="S",
                     help="stop the run after waiting this long for open batches (default 25 h; --resume goes on)")
    run.add_argument("--dawid-skene", action="store_true",
                     help="add a model-based hint of each judge's accuracy from the verdicts alone (Dawid-Skene; "
                          "3 judges or more; assumes independent errors, see docs/labelling.md)")
    add_engine_options(run)
    run.add_argument("--otel", action="store_true",
                     help="export every verdict as an OpenTelemetry gen_ai.evaluation.result event over OTLP "
                          "(OTEL_EXPORTER_OTLP_* variables; needs the otel extra; docs/integrations/otel.md)")
    run.add_argument("--phoenix", metavar="URL",
                     help="send the verdicts to the Arize Phoenix at URL when the run ends: span annotations on the "
                          "spans the examples name (meta.span_id), else a dataset + experiment (phoenix extra; "
                          "docs/integrations/phoenix.md)")
    run.add_argument("--dry-run", action="store_true",
                     help="list the judges (an experiment's expanded) and estimate LLM calls, tokens and $; "
                          "call nothing")
    run.set_defaults(func=cmd_run, options_model="groundjudge.runs.execute:RunOptions")
