"""Verdicts into Arize Phoenix from the command line: ``export RUN --to phoenix --endpoint URL``, ``run --phoenix URL``
(``serve --phoenix URL`` annotates live: :class:`groundjudge.integrations.phoenix.LiveAnnotator`)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path

from groundjudge.cli.common import UsageError, stdout_console

TOOLS = ("phoenix",)
"""The ``--to`` values that name a tool instead of a folder (a folder of that name: ``--to ./phoenix``)."""


def check_phoenix(endpoint: str, out: str) -> set[tuple[str, str]]:
    """Before ``run --phoenix``: fail now on a missing extra; the (judge, example id) pairs ``out`` already holds."""
    from groundjudge.integrations.extras import MissingExtraError, require
    from groundjudge.integrations.otel_export import results_before

    try:
        require("phoenix.client", "phoenix")
    except MissingExtraError as error:
        raise UsageError(f"--phoenix {endpoint}: {error}") from None
    return results_before(out)


def send_to_phoenix(run_dir: str | Path, endpoint: str, dataset: str | None = None,
                    skip: Iterable[tuple[str, str]] = ()) -> int:
    """Send a run folder's verdicts (less ``skip``) to the Phoenix at ``endpoint``; print what was written."""
    import httpx

    from groundjudge.integrations.extras import MissingExtraError
    from groundjudge.integrations.phoenix import export_run

    try:
        sent = export_run(run_dir, endpoint, dataset_name=dataset, skip=skip)
    except MissingExtraError as error:
        raise UsageError(f"phoenix: {error}") from None
    except (OSError, httpx.HTTPError) as error:
        raise UsageError(f"phoenix: {endpoint}: {type(error).__name__}: {error}") from None
    stdout = stdout_console()
    stdout.print(f"phoenix: {sent.span_annotations} span annotation(s)", markup=False, highlight=False)
    if sent.dataset_id:
        stdout.print(f"phoenix: dataset {sent.dataset_name!r} ({sent.dataset_id}), experiment {sent.experiment_id} "
                     f"with {sent.evaluations} evaluation(s)", markup=False, highlight=False)
    return 0


def export_to_phoenix(args: argparse.Namespace) -> int:
    """``export RUN --to phoenix --endpoint URL [--dataset NAME]``."""
    if not args.endpoint:
        raise UsageError("--to phoenix needs --endpoint URL (the Phoenix server, e.g. http://127.0.0.1:6006)")
    return send_to_phoenix(args.run_dir, args.endpoint, args.dataset)
