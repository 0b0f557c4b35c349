"""``groundjudge train-error-types``: train the local error-type head that ``error_types:backend=local`` uses."""

from __future__ import annotations

import argparse

from groundjudge.cli.common import UsageError, console


def cmd_train_error_types(args: argparse.Namespace) -> int:
    """Train the head on typed variants and write its model folder with the card."""
    from pydantic import ValidationError

    from groundjudge.judges.error_types import load_taxonomy
    from groundjudge.local_nli.error_type_train import (
        ErrorTypeTrainConfig,
        TrainDataError,
        train_error_types,
    )
    from groundjudge.local_nli.model import DEFAULT_EMBEDDER

    try:
        types = tuple(t.name for t in load_taxonomy(args.taxonomy))
    except ValueError as err:
        raise UsageError(f"--taxonomy: {err}") from None
    try:
        cfg = ErrorTypeTrainConfig(data=tuple(args.data), out=args.out, base=args.base or DEFAULT_EMBEDDER,
                                   source=args.source, split=args.split, val_split=args.val_split,
                                   epochs=args.epochs, batch_size=args.batch_size, lr=args.lr,
                                   max_length=args.max_length, evidence_k=args.evidence_k,
                                   max_per_type=args.max_per_type, seed=args.seed,
                                   time_limit_min=args.time_limit, types=types)
    except ValidationError as err:
        first = err.errors()[0]
        raise UsageError(f"--{str(first['loc'][0]).replace('_', '-')}: {first['msg']}") from None
    try:
        card = train_error_types(cfg, report=lambda line: console.print(line, markup=False))
    except TrainDataError as err:
        raise UsageError(str(err)) from None
    console.print(f"wrote {args.out} ({card['data']['pairs_used']} pairs, {card['training']['train_seconds']} s)",
                  markup=False)
    return 0


def add_parser(verbs) -> None:
    """Add the ``train-error-types`` verb and its options to the command's subparsers."""
    p = verbs.add_parser(
        "train-error-types", help="train the local error-type head (error_types:backend=local)",
        description="Fine-tune a sequence classifier with one label per error type of the taxonomy on typed "
                    "ungrounded variants (as `groundjudge perturb` writes them): input the ungrounded sentence, "
                    "its word diff against the closest context sentences and those sentences; loss weighted "
                    "against the skew of the types. Writes a model folder with model_card.json.")
    p.add_argument("data", nargs="+", help="data files of typed ungrounded variants (any format run reads)")
    p.add_argument("--out", required=True, metavar="DIR", help="model folder to write")
    p.add_argument("--base", metavar="MODEL", help="base encoder (default: the packaged all-MiniLM-L6-v2)")
    p.add_argument("--taxonomy", metavar="FILE", help="taxonomy JSON (default: the six legal error types)")
    p.add_argument("--source", metavar="NAME", help="train only on rows whose meta.source is NAME (e.g. contractnli)")
    p.add_argument("--split", metavar="SPLIT", help="train only on rows of this split (e.g. dev)")
    p.add_argument("--val-split", metavar="SPLIT", help="report typing on rows of this split (not trained on)")
    p.add_argument("--epochs", type=float, default=3.0)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--max-length", type=int, default=160, help="tokens per input (default 160)")
    p.add_argument("--evidence-k", type=int, default=2, help="context sentences shown per claim (default 2)")
    p.add_argument("--max-per-type", type=int, default=0, metavar="N", help="cap per type (0: no cap)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--time-limit", type=float, default=20.0, metavar="MIN", help="stop training after MIN minutes")
    p.set_defaults(func=cmd_train_error_types)
