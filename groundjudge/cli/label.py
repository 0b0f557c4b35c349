"""``groundjudge label RUN``: the labelling queue of a run (which answers to label, in what order) and
``groundjudge estimate RUN``: what the labels so far prove about each judge and each pair of judges."""

from __future__ import annotations

import argparse
import getpass
import json
import os
import signal
import sys
import threading
from pathlib import Path
from urllib.parse import quote

from rich.text import Text

from groundjudge.cli import label_benchmark
from groundjudge.cli.common import UsageError, console, stdout_console
from groundjudge.cli.label_tables import print_estimates
from groundjudge.labels.adaptive import DEFAULT_BATCH, adaptive_queue, current_batch
from groundjudge.labels.allocation import TARGET_METRICS
from groundjudge.labels.interchange import FORMATS, describe, export_run, import_labels
from groundjudge.labels.queue import (
    DEFAULT_AGREEMENT_SHARE,
    QUEUE_FILE,
    build_metric_queue,
    queue_for_run,
    read_queue,
    write_queue,
)
from groundjudge.labels.store import (
    LABELS_FILE,
    LabelsError,
    latest_labels,
    read_labels,
)
from groundjudge.labels.strata import judge_order, strata_of
from groundjudge.runs.lean_records import read_lean_records
from groundjudge.runs.lock import RunLock, RunLockError
from groundjudge.runs.records import find_records

ESTIMATES_FILE = "estimates.json"
"""Where ``estimate`` writes its figures inside the run folder."""

LOCAL = ("127.0.0.1", "localhost", "::1")
"""Hosts the page accepts in a request's Host header without being told."""


def _default_labeller() -> str:
    try:
        return getpass.getuser() or "anonymous"
    except (KeyError, OSError):
        return "anonymous"


def _run_records(run: str):
    """The run's records as the queue and the estimates read them: lean copies (verdicts and ids, no documents:
    :mod:`groundjudge.runs.lean_records`), so a run of many answers is read in little memory."""
    folder = Path(run)
    path = find_records(folder)
    if not path.exists():
        raise UsageError(f"{folder} is not a run folder (no records.jsonl)")
    return read_lean_records(path)


def cmd_label(args: argparse.Namespace) -> int:
    """Write the run's labelling queue, or with the page, reuse the queue there is and serve the page."""
    if args.corrections:
        return _corrections(args)
    if args.export or args.import_file or args.to or args.format:
        return _interchange(args)
    records = _run_records(args.run)
    if args.no_serve:
        return _write_queue(args, records)
    token = _token(args.token_env)
    lock = RunLock(args.run, ["groundjudge", *getattr(args, "argv", [])], warn=lambda m: console.print(Text(m)))
    try:
        lock.acquire()
    except RunLockError as err:
        raise UsageError(f"{err}\n(one labelling server per run folder: several people label through one server, "
                         "each with ?labeller=NAME in the page's address)") from None
    try:
        queue = read_queue(args.run)
        if queue:
            stdout_console().print(f"queue: reusing {Path(args.run) / QUEUE_FILE} ({len(queue)} answers; "
                                   f"groundjudge label {args.run} --no-serve draws a new one)", soft_wrap=True)
        else:
            _write_queue(args, records)
        _serve(args, token)
    finally:
        lock.release()
    return 0


def _corrections(args: argparse.Namespace) -> int:
    """``--corrections FILE [--judge SPEC]``: the answers the judge got wrong, with the labels, as a demonstrations
    pool."""
    from groundjudge.judges.demonstrations import write_pool
    from groundjudge.labels.corrections import corrections_pool

    pool = corrections_pool(args.run, args.judge)
    write_pool(args.corrections, pool)
    stdout_console().print(f"{len(pool)} correction(s) written to {args.corrections} (show them with "
                           f"demos={args.corrections},demo_strategy=corrections)", soft_wrap=True, markup=False)
    return 0


def _interchange(args: argparse.Namespace) -> int:
    """``--export FORMAT --to FILE`` or ``--import FILE [--format FORMAT]``: labels to or from another tool."""
    if bool(args.export) == bool(args.import_file) or bool(args.export) != bool(args.to) or \
            (args.format and not args.import_file):
        raise UsageError("use --export FORMAT --to FILE, or --import FILE [--format FORMAT]")
    if args.export:
        written = export_run(args.run, args.export, args.to, args.taxonomy)
        stdout_console().print(f"{args.export}: {written[0]} (and {written[1]})", soft_wrap=True)
        return 0
    report = import_labels(args.run, args.import_file, args.format, args.taxonomy,
                           ["groundjudge", *getattr(args, "argv", [])])
    stdout_console().print(Text(describe(report, args.run)), soft_wrap=True)
    return 0


def _run_labels(run: str, records) -> dict[str, str]:
    """Answer id -> its label so far, from ``RUN/labels.jsonl`` (empty when there is none)."""
    path = Path(run) / LABELS_FILE
    if not path.exists():
        return {}
    try:
        history = read_labels(path, {r.example.id for r in records.results})
    except LabelsError as err:
        raise UsageError(str(err)) from None
    return {i: r.label for i, r in latest_labels(history).items()}


def _queue(args: argparse.Namespace, records) -> tuple[list, str]:
    """The queue the flags ask for and how to name it; UsageError (nothing written) on bad ``--for`` / ``--pair``.
    Without ``--strategy``: the adaptive queue for the pair differences in balanced accuracy (the table's
    headline), or ``--for`` / ``--pair``'s; ``--batch 0``: the same allocation, fixed before the first label."""
    metric = getattr(args, "for_metric", None)
    pair = getattr(args, "pair", None)
    batch = getattr(args, "batch", DEFAULT_BATCH)
    judges = judge_order(records)
    if args.strategy is not None and (metric or pair):
        raise UsageError(f"--{'for' if metric else 'pair'}: builds its own queue; leave out --strategy "
                         f"{args.strategy} (or drop --for / --pair)")
    if batch < 0:
        raise UsageError(f"--batch: {batch} (labels per batch of the adaptive queue: 1 or more; 0: a fixed queue)")
    if args.strategy is not None or (metric is None and pair is None and len(judges) < 2):
        strategy = args.strategy or "stratified"
        why = "" if args.strategy else " (one judge: no pair difference to aim at)"
        return queue_for_run(records, strategy, args.size, args.seed, args.agreement_share), strategy + why
    metric = metric or "balanced_accuracy"
    strata = strata_of(records)
    try:
        if batch == 0:
            queue = build_metric_queue(strata, judges, metric, pair, args.size, args.seed)
        else:
            labels = _run_labels(args.run, records)
            queue = adaptive_queue(strata, judges, metric, labels, read_queue(args.run),
                                   {"pair": pair, "size": args.size, "seed": args.seed, "batch": batch})
    except ValueError as err:
        raise UsageError(str(err)) from None
    pairs = "; ".join(f"{a} - {b}" for a, b in queue[0].built_for.pairs)
    if batch == 0:
        return queue, f"for {metric}, {pairs}, fixed"
    labelled = [item for item in queue if item.id in labels]
    now = current_batch(queue, labels)
    return queue, (f"for {metric}, {pairs}, adaptive: batches of {batch}, planned from {queue[-1].seen} labels"
                   + (f", {len(labelled)} labelled, batch {now + 1} next" if labelled and now is not None else ""))


def _write_queue(args: argparse.Namespace, records) -> int:
    queue, how = _queue(args, records)
    path = write_queue(queue, args.run)
    strata: dict[str, int] = {}
    for item in queue:
        strata[item.stratum] = strata.get(item.stratum, 0) + 1
    judges = ", ".join(spec.spec for spec in records.header.judges)
    stdout_console().print(f"queue: {path} ({len(queue)} answers, {how}, seed {args.seed}); strata "
                           f"(one letter per judge: {judges}): "
                           + ", ".join(f"{name} {count}" for name, count in sorted(strata.items())), soft_wrap=True)
    return 0


def _token(variable: str | None) -> str | None:
    if not variable:
        return None
    token = os.environ.get(variable)
    if not token:
        raise UsageError(f"--token-env {variable}: that environment variable is not set or empty")
    return token


def _hosts(bind: str) -> list[str]:
    """Host headers the page accepts besides the local names: any when bound to every address."""
    if bind in ("0.0.0.0", "::"):
        return ["*"]
    return [] if bind in LOCAL else [bind]


def _serve(args: argparse.Namespace, token: str | None) -> None:
    """Serve the labelling page on --host / --port until Ctrl-C or SIGTERM (every label is on disk at once)."""
    try:
        import uvicorn

        from groundjudge.serve.label_app import label_app
    except ImportError as err:
        raise UsageError(f"the labelling page needs the serve extra (pip install 'groundjudge[serve]'): {err}") \
            from None
    try:
        app = label_app(args.run, args.labeller, show_judges=args.show_judges, overlap=args.overlap,
                        taxonomy=args.taxonomy, token=token, hosts=_hosts(args.host))
    except ValueError as err:
        raise UsageError(str(err)) from None
    where = f"http://{'127.0.0.1' if args.host in ('0.0.0.0', '::') else args.host}:{args.port}/"
    query = f"?labeller={quote(args.labeller)}" + ("&token=<the token>" if token else "")
    stdout_console().print(f"labelling page: {where}{query}  (labels: {Path(args.run) / LABELS_FILE}; Ctrl-C stops)",
                           soft_wrap=True)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)


def cmd_estimate(args: argparse.Namespace) -> int:
    """Estimate each judge's figures and every pair's difference from the run's human labels."""
    from groundjudge.labels.estimates import estimate_run

    records = _run_records(args.run)
    labels_path = Path(args.labels) if args.labels else Path(args.run) / LABELS_FILE
    if not labels_path.exists():
        raise UsageError(f"no labels: {labels_path} does not exist (groundjudge label {args.run} makes the queue)")
    ids = {r.example.id for r in records.results}
    history = read_labels(labels_path, ids)
    try:
        result = estimate_run(records, latest_labels(history), seed=args.seed, history=history,
                              queue=read_queue(args.run), reference=args.reference)
    except ValueError as err:
        raise UsageError(str(err)) from None
    out = Path(args.run) / ESTIMATES_FILE
    out.write_text(json.dumps(result.model_dump(), indent=2) + "\n", encoding="utf-8")
    stdout = stdout_console()
    print_estimates(stdout, result)
    stdout.print(f"estimates: {out}")
    return 0


def add_parser(verbs) -> None:
    """Add the ``label`` and ``estimate`` verbs to the command's subparsers."""
    label = verbs.add_parser("label", help="the labelling queue of a run: which answers to label, in what order")
    label.add_argument("run", help="a run folder (records.jsonl)")
    label.add_argument("--strategy", choices=("stratified", "uniform"), default=None,
                       help="instead of the default queue (adaptive, for balanced accuracy; stratified on a run with "
                            "one judge): stratified: by the judges' verdict pattern, disagreements first with a share "
                            "of agreements woven in; uniform: a plain random order")
    label.add_argument("--for", dest="for_metric", nargs="?", const="balanced_accuracy", metavar="METRIC",
                       help=f"the metric whose difference between two judges the queue narrows ("
                            f"{' or '.join(TARGET_METRICS)}; default and --for alone: balanced_accuracy, the table's "
                            "headline): labels allocated across the verdict strata by Neyman allocation, re-planned "
                            "after each batch (docs/labelling.md)")
    label.add_argument("--pair", nargs=2, metavar=("A", "B"),
                       help="the two judges (specs as the run gives them) whose difference A - B the queue narrows "
                            "(default: every pair of the run's judges)")
    label.add_argument("--batch", type=int, default=DEFAULT_BATCH, metavar="N",
                       help=f"labels per batch of the adaptive queue: once a batch is labelled the rest is re-planned "
                            f"from the labels (default {DEFAULT_BATCH}; 0: a fixed queue, planned before the first "
                            "label)")
    label.add_argument("--size", type=int, metavar="N", help="answers in the queue (default: all)")
    label.add_argument("--seed", type=int, default=0, help="seed of the order (default 0)")
    label.add_argument("--agreement-share", type=float, default=DEFAULT_AGREEMENT_SHARE, metavar="F",
                       help=f"share of a stratified queue from the strata where judges agree (default "
                            f"{DEFAULT_AGREEMENT_SHARE})")
    label.add_argument("--no-serve", action="store_true", help="write RUN/label_queue.jsonl and exit: an adaptive "
                       "queue is re-planned from the labels in RUN/labels.jsonl, keeping the batches labelled or "
                       "started; any other is drawn anew (without it: reuse the queue there is, else write one, and "
                       "serve the labelling page, which re-plans after each batch)")
    page = label.add_argument_group("the labelling page (see docs/labelling.md)")
    page.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    page.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    page.add_argument("--labeller", default=_default_labeller(), metavar="NAME",
                      help="whose labels these are, unless the page's address says ?labeller=NAME (default: the "
                           "login name)")
    page.add_argument("--show-judges", action="store_true",
                      help="show the judges' verdicts before an item is labelled (default: only after)")
    page.add_argument("--overlap", type=int, default=0, metavar="K",
                      help="the first K queue items go to every labeller; each later one to whoever labels it "
                           "first (default 0)")
    page.add_argument("--taxonomy", metavar="FILE", help="error types offered: a JSON list of {name, definition} "
                                                         "(default: the six legal error types)")
    page.add_argument("--token-env", metavar="VAR", help="require the token in this environment variable: "
                                                         "'Authorization: Bearer <token>' or ?token= in the address")
    trade = label.add_argument_group("Label Studio and Argilla (see docs/labelling.md)")
    trade.add_argument("--export", choices=FORMATS, help="write the answers, each judge's verdict as a prediction / "
                                                         "suggestion, to --to FILE (and the config beside it); exit")
    trade.add_argument("--to", metavar="FILE", help="where --export writes")
    trade.add_argument("--import", dest="import_file", metavar="FILE",
                       help="read a Label Studio JSON export or an Argilla records export into RUN/labels.jsonl "
                            "(all of it, or nothing when any item is bad); exit")
    trade.add_argument("--format", choices=FORMATS, help="the format of --import FILE (default: detected)")
    label.set_defaults(func=cmd_label)
    fixes = label.add_argument_group("corrections as demonstrations (see docs/tuning.md)")
    fixes.add_argument("--corrections", metavar="FILE", help="write the answers a judge got wrong (per the labels: "
                                                             "the person's label and note) as a demonstrations pool "
                                                             "and exit")
    fixes.add_argument("--judge", metavar="SPEC", help="which judge of the run (needed when it has several)")
    estimate = verbs.add_parser("estimate", help="each judge's figures and every pair's difference from the human "
                                                 "labels so far, with 95%% intervals valid under the queue's design")
    estimate.add_argument("run", help="a run folder with labels.jsonl")
    estimate.add_argument("--labels", metavar="FILE", help="a labels file (default RUN/labels.jsonl)")
    estimate.add_argument("--seed", type=int, default=0, help="seed of the posterior draws (default 0)")
    estimate.add_argument("--reference", metavar="JUDGE",
                          help="the judge (spec as the run gives it) whose verdicts predict the others' correctness "
                               "for the PPI++ figures (uniform queues only; default: the judge that judged every "
                               "answer and agrees most with the others)")
    estimate.set_defaults(func=cmd_estimate)
    label_benchmark.add_parser(verbs)
