"""The ``groundjudge`` command: one function per verb."""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import subprocess
import sys
import uuid
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from rich.console import Console  # noqa: E402

from groundjudge.calibrate import calibrate, needs_calibration, with_threshold  # noqa: E402
from groundjudge.data import DataError, assign_missing_splits, dataset_hash, load_examples  # noqa: E402
from groundjudge.formats import ADAPTERS  # noqa: E402
from groundjudge.judges import SpecError, build_judge, describe_judges, judge_class, parse_spec  # noqa: E402
from groundjudge.local_nli.model import ModelUnavailable  # noqa: E402
from groundjudge.records import RecordsError, RecordWriter, find_records, read_records, repair_torn_tail  # noqa: E402
from groundjudge.report import comparison_table, pairwise_table  # noqa: E402
from groundjudge.run import JudgeTask, run_judges  # noqa: E402
from groundjudge.summary import summarize  # noqa: E402
from groundjudge.templates import TemplateError  # noqa: E402
from groundjudge.types import Calibration, DatasetInfo, Example, RunHeader  # noqa: E402

console = Console(stderr=True)


def _stdout() -> Console:
    """A console for results: full width even when piped (tables are read in CI logs too)."""
    return Console() if sys.stdout.isatty() else Console(width=220)
VERSIONED = ("groundjudge", "pydantic", "litellm", "torch", "transformers", "sentence-transformers", "numpy")


class UsageError(Exception):
    """A command line that cannot be carried out as given."""


def _versions() -> dict[str, str]:
    versions = {"python": sys.version.split()[0]}
    for name in VERSIONED:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True,
                             text=True, timeout=5, check=False)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _choose_examples(args: argparse.Namespace, examples: list[Example], calibrating: bool
                     ) -> tuple[list[Example], list[Example], str, str | None]:
    """(eval examples, dev examples, eval split name, calibration source)."""
    if args.calibrate_on:
        dev = load_examples(args.calibrate_on, None, args.skip_invalid).examples   # each file's format detected
        evaluated = [ex for ex in examples if args.split is None or ex.split == args.split]
        return evaluated, dev, args.split or "all", ",".join(args.calibrate_on)
    if (calibrating or args.split) and all(ex.split is None for ex in examples) and args.dev_fraction > 0:
        examples = assign_missing_splits(examples, args.dev_fraction)
        source = f"split:dev (group-hash {args.dev_fraction:.0%} of the data)"
    else:
        source = "split:dev"
    dev = [ex for ex in examples if ex.split == "dev"] if calibrating else []
    if args.split:
        evaluated = [ex for ex in examples if ex.split == args.split]
    elif dev:
        evaluated = [ex for ex in examples if ex.split != "dev"]
    else:
        evaluated = list(examples)
    name = args.split or ("all but dev" if dev else "all")
    return evaluated, dev, name, (source if dev else None)


def default_cache_dir() -> Path:
    """Where LLM calls are cached: $GROUNDJUDGE_CACHE_DIR, else ~/.cache/groundjudge/calls."""
    env = os.environ.get("GROUNDJUDGE_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "groundjudge" / "calls"


def uses_llm(spec_text: str) -> bool:
    """Whether a judge (or a judge inside it) calls a language model."""
    import dataclasses

    cls = judge_class(parse_spec(spec_text)[0])
    return any(f.name == "service" for f in dataclasses.fields(cls))


def make_service(args: argparse.Namespace, offline: bool = False, cache=None):
    """The run's shared LLM service: prompts, cache, budget."""
    from groundjudge.llm import Budget, CallCache, LLMService
    from groundjudge.templates import prompt_library

    if cache is None:
        no_cache = getattr(args, "no_cache", False)
        cache = CallCache(None if no_cache else (args.cache_dir or default_cache_dir()), enabled=not no_cache)
    return LLMService(prompts=prompt_library(args.prompts), cache=cache,
                      budget=Budget(getattr(args, "max_cost", None)), offline=offline)


def dry_run(args: argparse.Namespace, tasks: list[JudgeTask], evaluated: list[Example], dev: list[Example],
            service) -> int:
    """Print the estimated calls, tokens and $ of the run without calling anything."""
    from rich.table import Table

    from groundjudge.dryrun import estimate_run

    table = Table(title=f"dry run: {len(evaluated)} examples + {len(dev)} dev (estimates; nothing was called)")
    for column in ("judge", "LLM calls", "input tokens", "output tokens", "$"):
        table.add_column(column, justify="left" if column == "judge" else "right")
    total = 0.0
    for task in tasks:
        estimate = estimate_run(task.judge, list(evaluated) + list(dev), service.prompts)
        total += estimate["cost_usd"]
        table.add_row(task.spec, str(estimate["llm_calls"]), str(estimate["tokens"]["input"]),
                      str(estimate["tokens"]["output"]), f"{estimate['cost_usd']:.4f}")
    _stdout().print(table)
    _stdout().print(f"estimated total: ${total:.4f} (cached calls would cost nothing)")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """Judge the data with every judge, write records.jsonl and summary.json, print the table."""
    out = Path(args.out)
    records_path = out / "records.jsonl"
    tasks, specs, user_settings = [], [], {}
    service = make_service(args) if any(uses_llm(t) for t in args.judge) else None
    for text in args.judge:
        judge, spec = build_judge(text, service=service)
        tasks.append(JudgeTask(spec=text, judge=judge))
        specs.append(spec)
        user_settings[text] = parse_spec(text)[1]
    if len(set(args.judge)) != len(args.judge):
        raise UsageError("the same --judge spec is given twice")

    loaded = load_examples(args.data, args.format, args.skip_invalid)
    if loaded.errors:
        console.print(f"[yellow]skipped {len(loaded.errors)} invalid row(s); first: {loaded.errors[0]}")
    to_calibrate = [t for t in tasks if needs_calibration(t, user_settings[t.spec])]
    evaluated, dev, split_name, cal_source = _choose_examples(args, loaded.examples, bool(to_calibrate))
    if args.sample and args.sample < len(evaluated):
        evaluated = sorted(random.Random(args.seed).sample(evaluated, args.sample), key=evaluated.index)
    if not evaluated:
        raise UsageError(f"no examples to evaluate (split {split_name!r})")
    if args.dry_run:
        return dry_run(args, tasks, evaluated, dev if to_calibrate else [], service or make_service(args))
    dataset = DatasetInfo(files=tuple(loaded.files), formats=tuple(loaded.formats), n=len(evaluated),
                          hash=dataset_hash(evaluated), n_loaded=len(loaded.examples),
                          skipped_rows=len(loaded.errors))

    done: set[tuple[str, str]] = set()
    if records_path.exists() and records_path.stat().st_size > 0:
        if not args.resume:
            raise UsageError(f"{records_path} exists: pass --resume to continue that run, or another --out")
        removed = repair_torn_tail(records_path)
        previous = read_records(records_path)
        if previous.header.dataset.hash != dataset.hash:
            raise UsageError(f"{records_path} was made from other data (hash {previous.header.dataset.hash[:12]} "
                             f"!= {dataset.hash[:12]}); use another --out")
        if [s.spec for s in previous.header.judges] != [s.spec for s in specs]:
            raise UsageError(f"{records_path} was made with judges {[s.spec for s in previous.header.judges]}; "
                             "resume with the same --judge list or use another --out")
        header = previous.header
        done = previous.done()
        frozen = {s.spec: s.calibration for s in header.judges if s.calibration}
        tasks = [with_threshold(t, frozen[t.spec]) if t.spec in frozen else t for t in tasks]
        console.print(f"resuming {header.run_id}: {len(done)} result(s) kept"
                      + (f", {removed} torn byte(s) cut" if removed else ""))
    else:
        calibrations: dict[str, Calibration] = {}
        run_id = uuid.uuid4().hex[:12]
        started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        if to_calibrate and dev:
            dev_info = DatasetInfo(files=tuple(args.calibrate_on or loaded.files), formats=tuple(loaded.formats),
                                   n=len(dev), hash=dataset_hash(dev))
            dev_header = RunHeader(run_id=run_id, judges=tuple(s for s in specs if s.spec in
                                                                {t.spec for t in to_calibrate}),
                                   dataset=dev_info, eval_split="dev", versions=_versions(),
                                   git_commit=_git_commit(), started_at=started)
            console.print(f"calibrating {len(to_calibrate)} judge(s) on {len(dev)} dev examples ({cal_source})")
            cal_path = out / "calibration.jsonl"
            if cal_path.exists():
                cal_path.unlink()
            calibrations = calibrate(to_calibrate, dev, cal_source, dev_header, cal_path,
                                     args.concurrency, not args.quiet)
        elif to_calibrate:
            console.print("[yellow]no dev data: score-based judges keep their default thresholds "
                          "(use --calibrate-on or a dev split)")
            calibrations = {t.spec: Calibration(threshold=t.judge.threshold, source="default") for t in to_calibrate}
        tasks = [with_threshold(t, calibrations[t.spec]) if t.spec in calibrations else t for t in tasks]
        specs = [s.model_copy(update={"calibration": calibrations.get(s.spec)}) for s in specs]
        templates = {name: service.prompts.template_hash(name) for name in service.prompts.names()} if service else {}
        header = RunHeader(run_id=run_id, judges=tuple(specs), dataset=dataset, eval_split=split_name,
                           template_hashes=templates, versions=_versions(), git_commit=_git_commit(),
                           started_at=started)
        out.mkdir(parents=True, exist_ok=True)
        with RecordWriter(records_path) as writer:
            writer.write(header)

    with RecordWriter(records_path) as writer:
        run_judges(tasks, evaluated, writer, done=done, concurrency=args.concurrency, show_progress=not args.quiet)
    summary = summarize(read_records(records_path))
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    stdout = _stdout()
    stdout.print(comparison_table(summary))
    if summary["pairwise"]:
        stdout.print(pairwise_table(summary))
    stdout.print(f"records: {records_path}\nsummary: {out / 'summary.json'}")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    """Re-judge every recorded example from the recorded LLM replies only; report what differs."""
    from groundjudge.llm import CallCache

    source = Path(args.dir)
    original = read_records(find_records(source))
    cache = CallCache(None)
    for path in (find_records(source, "calibration.jsonl"), find_records(source)):
        if not path.exists():
            continue
        for record in read_records(path).results:
            for call in record.result.calls:
                if call.cache_key and call.raw_output is not None:
                    cache.put(call.cache_key, {"raw_output": call.raw_output, "input_tokens": call.input_tokens,
                                               "output_tokens": call.output_tokens, "cost_usd": call.cost_usd})
    service = make_service(args, offline=True, cache=cache)
    out = Path(args.out) if args.out else source / "replay"
    records_path = out / "records.jsonl"
    if records_path.exists():
        records_path.unlink()
    header = original.header.model_copy(update={"run_id": uuid.uuid4().hex[:12], "git_commit": _git_commit(),
                                                "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds")})
    with RecordWriter(records_path) as writer:
        writer.write(header)
        for spec in header.judges:
            judge, _ = build_judge(spec.spec, service=service)
            task = JudgeTask(spec=spec.spec, judge=judge)
            if spec.calibration is not None:
                task = with_threshold(task, spec.calibration)
            examples = [r.example for r in original.results if r.judge == spec.spec]
            run_judges([task], examples, writer, show_progress=not args.quiet)
    replayed = read_records(records_path)
    before = {(r.judge, r.example.id): r.result.verdict for r in original.results}
    differ = [(r.judge, r.example.id) for r in replayed.results
              if (before[(r.judge, r.example.id)].label, before[(r.judge, r.example.id)].score)
              != (r.result.verdict.label, r.result.verdict.score)]
    new_calls = sum(not c.cached for r in replayed.results for c in r.result.calls)
    summary = summarize(replayed)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    _stdout().print(f"replayed {len(replayed.results)} verdicts from {source}: "
                    f"{len(replayed.results) - len(differ)} identical, {len(differ)} differ; "
                    f"{new_calls} new LLM calls")
    for judge_spec, example_id in differ[:20]:
        _stdout().print(f"  differs: {judge_spec} {example_id}")
    return 0 if not differ else 1


def cmd_report(args: argparse.Namespace) -> int:
    """Markdown, PNG plots and a self-contained HTML page from one or more run directories."""
    from groundjudge.plots import make_plots
    from groundjudge.report import compare
    from groundjudge.report_html import render_html
    from groundjudge.report_md import render_markdown

    for run_dir in args.dirs:
        if not find_records(run_dir).exists():
            raise UsageError(f"{run_dir}: no records.jsonl (not a groundjudge run directory)")
    if args.max_examples < 1:
        raise UsageError("--max-examples must be at least 1")
    try:
        comparison = compare(args.dirs, common_only=args.common)
    except ValueError as error:
        raise UsageError(str(error)) from None
    out = Path(args.out) if args.out else (Path(args.dirs[0]) / "report" if len(args.dirs) == 1 else Path("report"))
    out.mkdir(parents=True, exist_ok=True)
    plots = make_plots(comparison, out)
    markdown, page = out / "report.md", out / "report.html"
    markdown.write_text(render_markdown(comparison, plots), encoding="utf-8")
    page.write_text(render_html(comparison, plots, args.max_examples), encoding="utf-8")
    stdout = _stdout()
    stdout.print(f"report of {len(comparison.judges)} judge(s) from {len(comparison.runs)} run(s) in {out}/")
    for note in comparison.notes:
        stdout.print(f"[yellow]note:[/] {note}")
    stdout.print(f"  markdown: {markdown}")
    stdout.print(f"  page:     {page} ({page.stat().st_size / 1e6:.1f} MB, self-contained; open it in a browser)")
    for plot in plots:
        stdout.print(f"  plot:     {plot}")
    return 0


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
    _stdout().print(table)
    return 0


def cmd_summarize(args: argparse.Namespace) -> int:
    """Recompute summary.json from a run directory's records."""
    out = Path(args.dir)
    summary = summarize(read_records(find_records(out)))
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    _stdout().print(comparison_table(summary))
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    """Fine-tune a cross-encoder grounding judge on labelled data; write a model dir with its card."""
    from groundjudge.local_nli.model import DEFAULT_EMBEDDER
    from groundjudge.local_nli.train import TrainConfig, TrainError, train

    cfg = TrainConfig(data=tuple(args.data), out=args.out, base=args.base or DEFAULT_EMBEDDER, fmt=args.format,
                      recipe=args.recipe, epochs=args.epochs, max_length=args.max_length, batch_size=args.batch_size,
                      lr=args.lr, nli_mix=tuple(args.nli_mix or ()), synthetic=args.synthetic,
                      dev_fraction=args.dev_fraction, max_train=args.max_train, max_dev=args.max_dev, seed=args.seed,
                      evidence_k=args.evidence_k, evidence=args.evidence, run_dev_fraction=args.run_dev_fraction,
                      eval_steps=args.eval_steps, save_steps=args.save_steps,
                      patience=args.patience, skip_invalid=args.skip_invalid, resume=args.resume,
                      stop_after=args.stop_after, time_limit_min=args.time_limit, quiet=args.quiet)
    try:
        card = train(cfg, report=console.print)
    except TrainError as err:
        raise UsageError(str(err)) from err
    if card is None:
        return 0
    dev = card["dev_metrics"]["pair_level"]
    if dev:
        auc = "n/a" if dev["auc"] is None else f"{dev['auc']:.3f}"
        _stdout().print(f"dev (pair level, {dev['n']} pairs): balanced accuracy {dev['balanced_accuracy']:.3f}, "
                        f"macro-F1 {dev['macro_f1']:.3f}, AUC {auc}; at tau={dev['tau']:.3f}: balanced accuracy "
                        f"{dev['at_tau']['balanced_accuracy']:.3f}")
    _stdout().print(f"model: {args.out} (best step {card['best_step']} of {card['steps']}, "
                    f"{card['training_time_s']} s training)")
    return 0


def _llm_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--prompts", metavar="DIR", help="folder of prompt templates overriding the built-in ones")
    parser.add_argument("--cache-dir", metavar="DIR", help="LLM call cache (default $GROUNDJUDGE_CACHE_DIR or "
                                                           "~/.cache/groundjudge/calls)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the LLM call cache")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every verb."""
    parser = argparse.ArgumentParser(prog="groundjudge", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    verbs = parser.add_subparsers(dest="verb", required=True)

    run = verbs.add_parser("run", help="judge data with one or more judges and compare them")
    run.add_argument("data", nargs="+", help="data files (format auto-detected)")
    run.add_argument("--format", choices=sorted(ADAPTERS), help="force the format of every file")
    run.add_argument("--judge", action="append", required=True, metavar="SPEC",
                     help="name or name:key=value,... (repeatable); see `groundjudge judges`")
    run.add_argument("--split", choices=("train", "dev", "test"),
                     help="evaluate only this split (data without splits: the --dev-fraction group split)")
    run.add_argument("--calibrate-on", nargs="+", metavar="DEV", help="dev file(s) to fit thresholds on")
    run.add_argument("--dev-fraction", type=float, default=0.3,
                     help="when the data has no splits, this share of groups is dev (0 disables)")
    run.add_argument("--sample", type=int, help="evaluate a seeded random sample of this many examples")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--out", default="runs/latest", help="run directory (records.jsonl, summary.json)")
    run.add_argument("--resume", action="store_true", help="continue the run in --out")
    run.add_argument("--concurrency", type=int, default=8, help="examples judged at once per judge")
    run.add_argument("--skip-invalid", action="store_true", help="skip and count invalid rows")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    _llm_options(run)
    run.add_argument("--max-cost", type=float, metavar="USD",
                     help="stop new LLM calls once this much is spent (the rest fall back or abstain: budget)")
    run.add_argument("--dry-run", action="store_true", help="estimate LLM calls, tokens and $; call nothing")
    run.set_defaults(func=cmd_run)

    replay = verbs.add_parser("replay", help="re-judge a run from its recorded LLM calls, with no network")
    replay.add_argument("dir", help="a run directory (records.jsonl)")
    replay.add_argument("--out", help="where to write the replayed run (default DIR/replay)")
    replay.add_argument("--prompts", metavar="DIR", help="the prompt folder the run used, if any")
    replay.add_argument("--quiet", action="store_true")
    replay.set_defaults(func=cmd_replay)

    judges = verbs.add_parser("judges", help="list the judges and their settings")
    judges.add_argument("--json", action="store_true")
    judges.set_defaults(func=cmd_judges)

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
    report.set_defaults(func=cmd_report)

    summ = verbs.add_parser("summarize", help="recompute summary.json from records.jsonl")
    summ.add_argument("dir")
    summ.set_defaults(func=cmd_summarize)

    tr = verbs.add_parser("train", help="fine-tune a cross-encoder grounding judge on labelled data")
    tr.add_argument("data", nargs="+", help="labelled data files (format auto-detected)")
    tr.add_argument("--format", choices=sorted(ADAPTERS), help="force the format of every file")
    tr.add_argument("--base", metavar="MODEL", help="base model: hub name or local dir (default: the packaged "
                                                    "all-MiniLM-L6-v2)")
    tr.add_argument("--out", required=True, metavar="DIR", help="output model directory")
    tr.add_argument("--recipe", choices=("pairs", "diff"), default="pairs",
                    help="pairs: every labelled answer; diff: ungrounded vs grounded siblings (default pairs)")
    tr.add_argument("--epochs", type=int, default=2)
    tr.add_argument("--max-length", type=int, default=256, help="max tokens of (evidence, claim)")
    tr.add_argument("--batch-size", type=int, default=16)
    tr.add_argument("--lr", type=float, default=5e-5)
    tr.add_argument("--nli-mix", nargs="+", metavar="FILE", help="NLI TSV files (label, premise, hypothesis) "
                                                                  "to mix in; makes the head 3-way")
    tr.add_argument("--synthetic", type=int, default=0, metavar="N", help="add up to N synthetic hard negatives")
    tr.add_argument("--dev-fraction", type=float, default=0.2,
                    help="share of groups held out as dev when the data has no splits")
    tr.add_argument("--max-train", type=int, default=4000, metavar="N", help="cap on training pairs (0: none)")
    tr.add_argument("--max-dev", type=int, default=1000, metavar="N", help="cap on dev pairs (0: none)")
    tr.add_argument("--evidence-k", type=int, metavar="K",
                    help="context sentences per evidence (default 2 for pairs, 1 for diff)")
    tr.add_argument("--evidence", choices=("embedding", "tfidf"), default="embedding",
                    help="how the evidence sentences are ranked (default: sentence-embedding cosine)")
    tr.add_argument("--run-dev-fraction", type=float, metavar="F",
                    help="train only on what `groundjudge run --dev-fraction F` calibrates on, so that the "
                         "run's evaluation part is never seen (default: use every labelled non-test example)")
    tr.add_argument("--eval-steps", type=int, default=0, metavar="N", help="evaluate on dev every N steps "
                                                                          "(and at each epoch end)")
    tr.add_argument("--save-steps", type=int, default=100, metavar="N", help="checkpoint every N steps")
    tr.add_argument("--patience", type=int, default=2,
                    help="stop after this many evaluations without improvement (0: never)")
    tr.add_argument("--stop-after", type=int, default=0, metavar="N",
                    help="stop after N steps in all, leaving a checkpoint to --resume from")
    tr.add_argument("--time-limit", type=float, default=0.0, metavar="MIN",
                    help="stop training after MIN minutes and keep the best model so far (0: none)")
    tr.add_argument("--seed", type=int, default=0)
    tr.add_argument("--skip-invalid", action="store_true", help="skip and count invalid rows")
    tr.add_argument("--resume", action="store_true", help="continue the run in --out from its last checkpoint")
    tr.add_argument("--quiet", action="store_true", help="no progress bar")
    tr.set_defaults(func=cmd_train)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    try:
        return args.func(args)
    except (DataError, SpecError, UsageError, RecordsError, ModelUnavailable, TemplateError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
