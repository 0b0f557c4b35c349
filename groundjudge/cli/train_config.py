"""The :class:`~groundjudge.local_nli.train_data.TrainConfig` that the ``train`` verb's flags give."""

from __future__ import annotations

import argparse


def train_config(args: argparse.Namespace, **extra):
    """The :class:`TrainConfig` the ``train`` flags give (``extra`` sets the mixed-run fields)."""
    from groundjudge.local_nli.model import DEFAULT_EMBEDDER
    from groundjudge.local_nli.train import TrainConfig

    return TrainConfig(data=tuple(args.data), out=args.out, base=args.base or DEFAULT_EMBEDDER, fmt=args.format,
                       recipe=args.recipe, epochs=args.epochs, max_length=args.max_length, batch_size=args.batch_size,
                       lr=args.lr, nli_mix=tuple(args.nli_mix or ()), synthetic=args.synthetic,
                       dev_fraction=args.dev_fraction, max_train=args.max_train, max_dev=args.max_dev, seed=args.seed,
                       evidence_k=args.evidence_k, evidence=args.evidence, run_dev_fraction=args.run_dev_fraction,
                       eval_steps=args.eval_steps, save_steps=args.save_steps,
                       patience=args.patience, skip_invalid=args.skip_invalid, resume=args.resume,
                       stop_after=args.stop_after, time_limit_min=args.time_limit, quiet=args.quiet,
                       teacher=args.teacher, teacher_mode=args.teacher_mode, teacher_budget=args.teacher_budget,
                       teacher_sample=args.teacher_sample, teacher_concurrency=args.teacher_concurrency,
                       teacher_cache=tuple(args.teacher_cache or ()), **extra)
