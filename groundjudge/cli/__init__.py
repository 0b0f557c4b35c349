"""The ``groundjudge`` command: one module per verb (run, replay, report, judges, prompts, summarize, train, export)."""

from __future__ import annotations

import argparse
import logging
import os
import sys

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from groundjudge.cli import (attack, export, judges, label, perturb, prompts, replay, report,  # noqa: E402
                             run, serve, summarize, train, train_error_types, tune)
from groundjudge.cli.common import UsageError  # noqa: E402
from groundjudge.experiment import ExperimentError  # noqa: E402
from groundjudge.formats.load import DataError  # noqa: E402
from groundjudge.judges import SpecError  # noqa: E402
from groundjudge.labels.store import LabelsError  # noqa: E402
from groundjudge.llm.batch import BatchUnavailable  # noqa: E402
from groundjudge.llm.templates import TemplateError  # noqa: E402
from groundjudge.local_nli.model import ModelUnavailable  # noqa: E402
from groundjudge.runs.lock import RunLockError  # noqa: E402
from groundjudge.runs.records import RecordsError  # noqa: E402


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every verb."""
    parser = argparse.ArgumentParser(prog="groundjudge", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    verbs = parser.add_subparsers(dest="verb", required=True)
    for verb in (run, replay, judges, prompts, report, summarize, train, train_error_types, export, attack, perturb, serve,
                 label, tune):
        verb.add_parser(verbs)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script."""
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    try:
        return args.func(args)
    except (DataError, ExperimentError, SpecError, UsageError, RecordsError, ModelUnavailable, TemplateError,
            RunLockError, BatchUnavailable, LabelsError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
