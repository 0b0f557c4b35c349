"""groundjudge: is an answer grounded in its source documents? Judge it, and compare the judges.

The public API, re-exported here: ``judge`` (one answer) and ``evaluate`` (a data set, several judges: a
``Run``), the typed records, data loading, judge configs and experiment files, and the metrics.

Each name is imported on first use, so ``import groundjudge`` (and the pytest plugin that imports it in every
test session) loads neither litellm nor torch until a judge needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "JudgeVerdict": "groundjudge.api", "Run": "groundjudge.api", "evaluate": "groundjudge.api",
    "judge": "groundjudge.api",
    "Experiment": "groundjudge.experiment", "load_experiment": "groundjudge.experiment",
    "DataError": "groundjudge.formats.load", "load_examples": "groundjudge.formats.load",
    "build_judge": "groundjudge.judges", "describe_judges": "groundjudge.judges",
    "JudgeConfig": "groundjudge.judges.config",
    "bootstrap_ci": "groundjudge.metrics", "classification_metrics": "groundjudge.metrics",
    "fit_threshold": "groundjudge.metrics", "mcnemar_p": "groundjudge.metrics",
    "read_records": "groundjudge.runs.records", "summarize": "groundjudge.runs.summary",
    **{name: "groundjudge.types" for name in ("Claim", "ClaimVerdict", "Evidence", "Example", "JudgeResult",
                                              "LLMCall", "ResultRecord", "RunHeader", "Verdict")},
}
"""Each public name and the module that defines it."""

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'groundjudge' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names with the module's own."""
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:   # the names as type checkers and IDEs see them
    from groundjudge.api import JudgeVerdict, Run, evaluate, judge
    from groundjudge.experiment import Experiment, load_experiment
    from groundjudge.formats.load import DataError, load_examples
    from groundjudge.judges import build_judge, describe_judges
    from groundjudge.judges.config import JudgeConfig
    from groundjudge.metrics import bootstrap_ci, classification_metrics, fit_threshold, mcnemar_p
    from groundjudge.runs.records import read_records
    from groundjudge.runs.summary import summarize
    from groundjudge.types import (Claim, ClaimVerdict, Evidence, Example, JudgeResult, LLMCall, ResultRecord,
                                   RunHeader, Verdict)
