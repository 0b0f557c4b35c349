"""groundjudge: is an answer grounded in its source documents? Judge it, and compare the judges.

The public API, re-exported here: the typed records, data loading, the judge
registry, the runner and the metrics.
"""

from groundjudge.formats.load import DataError, load_examples
from groundjudge.judges import build_judge, describe_judges
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
    "Claim", "ClaimVerdict", "DataError", "Evidence", "Example", "JudgeResult", "LLMCall", "ResultRecord",
    "RunHeader", "Verdict", "bootstrap_ci", "build_judge", "classification_metrics", "describe_judges",
    "fit_threshold", "load_examples", "mcnemar_p", "read_records", "summarize",
]
