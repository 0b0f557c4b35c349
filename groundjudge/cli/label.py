"""``groundjudge label RUN``: the labelling queue of a run (which answers to label, in what order) and
``groundjudge estimate RUN``: what the labels so far prove about each judge and each pair of judges."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.table import Table
from rich.text import Text

from groundjudge.cli.common import UsageError, console, stdout_console
from groundjudge.labels.queue import DEFAULT_AGREEMENT_SHARE, queue_for_run, write_queue
from groundjudge.labels.store import LABELS_FILE, latest_labels, read_labels
from groundjudge.runs.records import find_records, read_records

ESTIMATES_FILE = "estimates.json"
"""Where ``estimate`` writes its figures inside the run folder."""


def _run_records(run: str):
    folder = Path(run)
    path = find_records(folder)
    if not path.exists():
        raise UsageError(f"{folder} is not a run folder (no records.jsonl)")
    return read_records(path)


def cmd_label(args: argparse.Namespace) -> int:
    """Write the run's labelling queue (and, once the page exists, serve it)."""
    records = _run_records(args.run)
    queue = queue_for_run(records, args.strategy, args.size, args.seed, args.agreement_share)
    path = write_queue(queue, args.run)
    strata: dict[str, int] = {}
    for item in queue:
        strata[item.stratum] = strata.get(item.stratum, 0) + 1
    judges = ", ".join(spec.spec for spec in records.header.judges)
    stdout_console().print(f"queue: {path} ({len(queue)} answers, {args.strategy}, seed {args.seed}); strata "
                           f"(one letter per judge: {judges}): "
                           + ", ".join(f"{name} {count}" for name, count in sorted(strata.items())), soft_wrap=True)
    if not args.no_serve:
        console.print("[yellow]the labelling page is not built yet: label the queue's answers in "
                      f"{Path(args.run) / LABELS_FILE} (one JSON line per label), then run groundjudge estimate")
    return 0


def cmd_estimate(args: argparse.Namespace) -> int:
    """Estimate each judge's figures and every pair's difference from the run's human labels."""
    from groundjudge.labels.estimates import estimate_run

    records = _run_records(args.run)
    labels_path = Path(args.labels) if args.labels else Path(args.run) / LABELS_FILE
    if not labels_path.exists():
        raise UsageError(f"no labels: {labels_path} does not exist (groundjudge label {args.run} makes the queue)")
    ids = {r.example.id for r in records.results}
    history = read_labels(labels_path, ids)
    result = estimate_run(records, latest_labels(history), seed=args.seed, history=history)
    out = Path(args.run) / ESTIMATES_FILE
    out.write_text(json.dumps(result.model_dump(), indent=2) + "\n", encoding="utf-8")
    stdout = stdout_console()
    stdout.print(_judges_table(result))
    stdout.print(_pairs_table(result))
    if result.people is not None:
        stdout.print(_people_table(result.people))
    stdout.print(f"estimates: {out}")
    return 0


def _ci(interval) -> str:
    return f"{interval.estimate:.3f} [{interval.ci95[0]:.2f}, {interval.ci95[1]:.2f}]"


def _judges_table(result) -> Table:
    table = Table(title=f"from {result.n_labelled} human labels of {result.n_answers} answers "
                        f"({result.n_unsure} unsure left out); 95% intervals valid under the queue's design")
    for column in ("judge", "balanced accuracy", "accuracy", "macro-F1"):
        table.add_column(column, justify="left" if column == "judge" else "right")
    for judge, figures in result.judges.items():
        table.add_row(Text(judge), _ci(figures["balanced_accuracy"]), _ci(figures["accuracy"]), _ci(figures["macro_f1"]))
    return table


def _pairs_table(result) -> Table:
    table = Table(title="a - b: separated when the interval excludes 0")
    for column in ("a", "b", "metric", "a - b [95% CI]", "labels where they differ", "separated", "more labels"):
        table.add_column(column, justify="left" if column in ("a", "b", "metric") else "right")
    for pair in result.pairs:
        more = "-" if pair.more_labels_needed is None else f"~{pair.more_labels_needed}"
        table.add_row(Text(pair.a), Text(pair.b), pair.metric,
                      f"{pair.estimate:+.3f} [{pair.ci95[0]:+.2f}, {pair.ci95[1]:+.2f}]",
                      str(pair.labels_where_they_differ), "yes" if pair.separated else "no",
                      "0" if pair.separated else more)
    return table


def _people_table(people) -> Table:
    alpha = "-" if people.alpha is None else f"{people.alpha:.3f}"
    table = Table(title=f"between people: {people.n_overlap} answers labelled twice or more; Krippendorff's alpha "
                        f"{alpha}; {len(people.disagreements)} answers where people disagree")
    for column in ("a", "b", "both labelled", "agree", "Cohen's kappa"):
        table.add_column(column, justify="left" if column in ("a", "b") else "right")
    for pair in people.pairs:
        table.add_row(Text(pair.a), Text(pair.b), str(pair.n), "-" if pair.agreement is None else f"{pair.agreement:.1%}",
                      "-" if pair.kappa is None else f"{pair.kappa:.3f}")
    return table


def add_parser(verbs) -> None:
    """Add the ``label`` and ``estimate`` verbs to the command's subparsers."""
    label = verbs.add_parser("label", help="the labelling queue of a run: which answers to label, in what order")
    label.add_argument("run", help="a run folder (records.jsonl)")
    label.add_argument("--strategy", choices=("stratified", "uniform"), default="stratified",
                       help="stratified (default): by the judges' verdict pattern, disagreements first with a share "
                            "of agreements woven in; uniform: a plain random order")
    label.add_argument("--size", type=int, metavar="N", help="answers in the queue (default: all)")
    label.add_argument("--seed", type=int, default=0, help="seed of the order (default 0)")
    label.add_argument("--agreement-share", type=float, default=DEFAULT_AGREEMENT_SHARE, metavar="F",
                       help=f"share of a stratified queue from the strata where judges agree (default "
                            f"{DEFAULT_AGREEMENT_SHARE})")
    label.add_argument("--no-serve", action="store_true", help="write RUN/label_queue.jsonl and exit")
    label.set_defaults(func=cmd_label)
    estimate = verbs.add_parser("estimate", help="each judge's figures and every pair's difference from the human "
                                                 "labels so far, with 95%% intervals valid under the queue's design")
    estimate.add_argument("run", help="a run folder with labels.jsonl")
    estimate.add_argument("--labels", metavar="FILE", help="a labels file (default RUN/labels.jsonl)")
    estimate.add_argument("--seed", type=int, default=0, help="seed of the posterior draws (default 0)")
    estimate.set_defaults(func=cmd_estimate)
