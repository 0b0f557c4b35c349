"""groundjudge: is an answer grounded in its source documents? Judge it, and compare the judges.

The public API, re-exported here: ``judge`` (one answer) and ``evaluate`` (a data set, several judges: a
``Run``), the typed records, data loading, judge configs and experiment files, and the metrics.
"""

from groundjudge.api import JudgeVerdict, Run, evaluate, judge
from groundjudge.experiment import Experiment, load_experiment
from groundjudge.formats.load import DataError, load_examples
from groundjudge.judges import build_judge, describe_judges
from groundjudge.judges.config import JudgeConfig
from groundjudge.metrics import (
    bootstrap_ci,
    classification_metrics,
    fit_threshold,
    mcnemar_p,
)
from groundjudge.runs.records import read_records
from groundjudge.runs.summary import summarize
from groundjudge.types import (
    Claim,
    ClaimVerdict,
    Evidence,
    Example,
    JudgeResult,
    LLMCall,
    ResultRecord,
    RunHeader,
    Verdict,
)

__version__ = "0.1.0"

__all__ = [
    "Claim", "ClaimVerdict", "DataError", "Evidence", "Example", "Experiment", "JudgeConfig", "JudgeResult",
    "JudgeVerdict", "LLMCall", "ResultRecord", "Run", "RunHeader", "Verdict", "bootstrap_ci", "build_judge",
    "classification_metrics", "describe_judges", "evaluate", "fit_threshold", "judge", "load_examples",
    "load_experiment", "mcnemar_p", "read_records", "summarize",
]
