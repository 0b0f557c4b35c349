"""``groundjudge train --from-documents FILES``: train a grounding judge from documents alone (no label read); the
pairs are made, checked and written by :mod:`groundjudge.local_nli.train_documents`."""

from __future__ import annotations

import argparse

from groundjudge.cli.common import (
    UsageError,
    console,
    llm_options,
    make_service,
    print_trained,
)


def add_documents_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--from-documents`` and its options to the ``train`` verb."""
    docs = parser.add_argument_group("training from documents alone (no label is read)")
    docs.add_argument("--from-documents", nargs="+", metavar="FILE",
                      help="documents to make checked training pairs from: plain text files (.txt, .md) or data "
                           "files of any supported format (only their contexts are read)")
    docs.add_argument("--max-pairs", type=int, default=0, metavar="N",
                      help="stop making pairs once N are written (0: no cap)")
    docs.add_argument("--pairs-only", action="store_true",
                      help="write the pairs (OUT/pairs) and stop; train on them later with --resume")
    docs.add_argument("--generator", metavar="SPEC",
                      help="LLM that paraphrases each grounded claim, e.g. 'model=openai/NAME,api_base=URL'")
    docs.add_argument("--check", metavar="SPEC",
                      help="judge spec every made pair must agree with (e.g. 'claims:model=...'); default: the "
                           "rule checks only")


def documents_options(args: argparse.Namespace):
    """The :class:`~groundjudge.local_nli.train_documents.DocumentsOptions` the flags give (the LLM generator and
    check built when named); a negative ``--max-pairs`` is one line naming it."""
    from groundjudge.local_nli.train_documents import DocumentsOptions

    if args.max_pairs < 0:
        raise UsageError(f"--max-pairs must be 0 (no cap) or more, got {args.max_pairs}")
    generator = check = None
    if args.generator or args.check:
        from groundjudge.perturb import JudgeCheck, LLMGenerator

        service = make_service(llm_options(args))
        generator = LLMGenerator.from_spec(args.generator, service) if args.generator else None
        check = JudgeCheck.build(args.check, service) if args.check else None
    return DocumentsOptions(files=tuple(args.from_documents), max_pairs=args.max_pairs, pairs_only=args.pairs_only,
                            generator=generator, check=check)


def cmd_train_documents(args: argparse.Namespace) -> int:
    """Make checked pairs from the documents and train on them (or stop after the pairs with --pairs-only)."""
    from groundjudge.local_nli.model import DEFAULT_EMBEDDER
    from groundjudge.local_nli.train import TrainConfig, TrainError
    from groundjudge.local_nli.train_documents import train_from_documents

    if args.recipe != "pairs":   # data files, a teacher, synthetic edits or NLI rows make it a mixed run instead
        raise UsageError("--from-documents makes its own pairs: --recipe is for the gold pairs of data files")
    opts = documents_options(args)
    cfg = TrainConfig(data=tuple(args.from_documents), out=args.out, base=args.base or DEFAULT_EMBEDDER,
                      fmt=args.format, epochs=args.epochs, max_length=args.max_length, batch_size=args.batch_size,
                      lr=args.lr, dev_fraction=args.dev_fraction, max_train=args.max_train, max_dev=args.max_dev,
                      seed=args.seed, evidence_k=args.evidence_k, evidence=args.evidence,
                      run_dev_fraction=args.run_dev_fraction, eval_steps=args.eval_steps, save_steps=args.save_steps,
                      patience=args.patience, skip_invalid=args.skip_invalid, resume=args.resume,
                      stop_after=args.stop_after, time_limit_min=args.time_limit, quiet=args.quiet)
    try:
        card = train_from_documents(cfg, opts, report=console.print)
    except TrainError as err:
        raise UsageError(str(err)) from err
    return print_trained(card, args.out, _dev_line)


def _dev_line(dev: dict, auc: str) -> str:
    return (f"dev (pair level, {dev['n']} pairs of held-out documents): balanced accuracy "
            f"{dev['balanced_accuracy']:.3f}, AUC {auc}")
