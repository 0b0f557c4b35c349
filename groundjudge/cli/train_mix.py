"""``groundjudge train`` with more than one source (gold data, ``--synthetic``, ``--from-documents``, ``--teacher``,
``--nli-mix``) or any ``--weight SOURCE=W``: one weighted training set, made and trained by
:mod:`groundjudge.runs.train_mix`."""

from __future__ import annotations

import argparse

from groundjudge.cli.common import UsageError, console, print_trained


def mixed_config(args: argparse.Namespace):
    """The run's :class:`TrainConfig` with its documents and weights, every flag checked before anything is read:
    a bad ``--weight`` (unknown source, not a number, negative, or a source the run lacks) is one line naming it."""
    from groundjudge.cli.train_config import train_config
    from groundjudge.local_nli.train_sources import WeightError, check_weighted, parse_weights
    from groundjudge.runs.train_mix import mixed_sources

    try:
        weights = parse_weights(args.weight or [])
    except WeightError as err:
        raise UsageError(str(err)) from None
    if args.teacher and not args.data:
        raise UsageError("--teacher judges the answers of data files: give them (documents have no answers)")
    if args.synthetic < 0:
        raise UsageError(f"--synthetic must be 0 or more, got {args.synthetic}")
    if args.synthetic and not (args.data or args.from_documents):
        raise UsageError("--synthetic edits the text of data files or documents: give them")
    cfg = train_config(args, from_documents=tuple(args.from_documents or ()), weights=tuple(sorted(weights.items())))
    try:
        check_weighted(weights, mixed_sources(cfg))
    except WeightError as err:
        raise UsageError(str(err)) from None
    return cfg


def cmd_train_mixed(args: argparse.Namespace) -> int:
    """Make the weighted mixed set and train on it; print the dev line and where the model is."""
    from groundjudge.cli.train_documents import documents_options
    from groundjudge.local_nli.train import TrainError
    from groundjudge.runs.train_mix import train_mixed

    cfg = mixed_config(args)
    opts = documents_options(args) if args.from_documents else None
    try:
        card = train_mixed(cfg, opts, report=console.print)
    except TrainError as err:
        raise UsageError(str(err)) from err
    return print_trained(card, args.out, _dev_line)


def _dev_line(dev: dict, auc: str) -> str:
    return (f"dev (pair level, {dev['n']} pairs of held-out groups, every source): balanced accuracy "
            f"{dev['balanced_accuracy']:.3f}, AUC {auc}")
