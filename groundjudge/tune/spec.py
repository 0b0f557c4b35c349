"""The ``[tune]`` table of an experiment file: which judge, which levers, the seed and the budget.

```toml
[tune]
judge = "direct"                 # a table of [judges]
seed = 0
max_calls = 400                  # never exceeded by one call
max_cost = 0.50                  # USD (litellm's price table; local servers cost 0)
parts = { optimise = 0.4, select = 0.3, test = 0.3 }   # shares of the groups

[tune.calibration]               # each lever optional
methods = ["threshold", "contextual", "batch"]

[tune.demos]
k = [2, 4]

[tune.instructions]
prompts = ["prompts/strict"]     # relative to the file
proposer = "openai/gpt-4o"
```

Every value is checked before anything is called; an error names the file, the line and the key.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from groundjudge.experiment import Experiment, ExperimentError, load_experiment
from groundjudge.experiment.toml_lines import line_of

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

Method = Literal["none", "threshold", "contextual", "batch"]
"""Calibration of a score judge: its own threshold, a threshold fitted on the optimise part, contextual calibration
(the P(yes) of content-free inputs divided out), batch calibration (the batch's mean log-odds subtracted)."""

LEVERS = ("calibration", "demos", "instructions", "claims")


class TuneError(ExperimentError):
    """A bad ``[tune]`` table: one line naming the file, the line and the key."""


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CalibrationLever(_Table):
    """``[tune.calibration]``: the calibrations tried on a score judge."""

    methods: list[Method] = Field(default=["threshold", "contextual", "batch"], min_length=1)
    content_free: list[str] = Field(default=["N/A", "[MASK]", "None"], min_length=1, description=(
        "The content-free inputs of contextual calibration (each is question, document and answer at once)."))


class DemosLever(_Table):
    """``[tune.demos]``: demonstrations drawn from the optimise part."""

    k: list[int] = Field(default=[2, 4], min_length=1)
    strategies: list[Literal["balanced", "nearest"]] = Field(default=["balanced"], min_length=1)
    seeds: list[int] = Field(default=[0], min_length=1)


class InstructionsLever(_Table):
    """``[tune.instructions]``: prompt folders given, and guidance written by a proposer model."""

    prompts: list[str] = Field(default=[], description="Prompt folders (relative to the file).")
    proposer: str | None = Field(default=None, description="A litellm model that writes guidance from mistakes.")
    proposer_api_base: str | None = None
    proposals: int = Field(default=2, ge=1, le=16)
    temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    mistakes: int = Field(default=8, ge=1, le=64, description="Mistakes on the optimise part shown to it.")


class ClaimsLever(_Table):
    """``[tune.claims]``: how the claims judge turns claim verdicts into an answer's score."""

    aggregate: list[Literal["min", "mean", "product"]] = []
    partial_credit: list[float] = []


class Parts(_Table):
    """Shares of the groups (documents / questions) in each part."""

    optimise: float = Field(default=0.4, ge=0.0)
    select: float = Field(default=0.3, ge=0.0)
    test: float = Field(default=0.3, ge=0.0)


class TuneSpec(_Table):
    """The ``[tune]`` table, checked."""

    judge: str = Field(description="The judge table of [judges] to tune.")
    seed: int = 0
    max_calls: int = Field(ge=1, description="LLM calls the whole tune may make (cached ones are free).")
    max_cost: float | None = Field(default=None, ge=0.0)
    parts: Parts = Parts()
    eta: int = Field(default=2, ge=2, description="Successive halving keeps 1/eta of the candidates per rung.")
    first_rung: int = Field(default=8, ge=2, description="Select examples of the first rung (x eta per rung).")
    fit_examples: int = Field(default=32, ge=2, description="Optimise examples a threshold is fitted on.")
    max_candidates: int = Field(default=32, ge=1, description="A seeded sample when the levers give more.")
    select_by: Literal["balanced_accuracy", "roc_auc"] = Field(default="balanced_accuracy", description=(
        "What successive halving ranks candidates by on the select part: the verdicts' balanced accuracy, or the "
        "score's ROC AUC (when the score is what is used: ranking, a threshold set later, a stacked judge)."))
    calibration: CalibrationLever | None = None
    demos: DemosLever | None = None
    instructions: InstructionsLever | None = None
    claims: ClaimsLever | None = None

    @model_validator(mode="after")
    def _some_part(self) -> TuneSpec:
        if self.parts.optimise + self.parts.select + self.parts.test <= 0:
            raise ValueError("parts: the shares sum to 0")
        return self


@dataclass(frozen=True)
class TuneFile:
    """A tune file read and checked: the experiment (data, judges), the ``[tune]`` table and the file's text."""

    path: Path
    text: str
    experiment: Experiment
    spec: TuneSpec

    def where(self, *key: str) -> str:
        """``file:line`` of a key of the file (the nearest enclosing one)."""
        return f"{self.path}:{line_of(self.text, key) or 1}"

    def error(self, key: tuple[str, ...], message: str) -> TuneError:
        """A TuneError at the line of ``key``."""
        return TuneError(f"{self.where(*key)}: {message}")


def _validation_error(path: Path, text: str, err: ValidationError) -> TuneError:
    first = err.errors()[0]
    key = tuple(str(p) for p in first["loc"] if not isinstance(p, int))
    line = line_of(text, ("tune", *key)) or line_of(text, ("tune",)) or 1
    if first["type"] == "extra_forbidden":
        lever = len(key) == 1
        what = (f"unknown lever or key {key[0]!r}; levers: {', '.join(LEVERS)}; keys: "
                + ", ".join(k for k in TuneSpec.model_fields if k not in LEVERS)) if lever \
            else f"unknown key {key[-1]!r} of [tune.{'.'.join(key[:-1])}]"
        return TuneError(f"{path}:{line}: [tune] {what}")
    name = ".".join(key) or "tune"
    return TuneError(f"{path}:{line}: [tune] {name}: {first['msg']}")


def load_tune(path: str | Path) -> TuneFile:
    """Read an experiment file with a ``[tune]`` table; every problem is a TuneError or ExperimentError naming
    file:line, raised before anything is judged. Prompt folders are resolved against the file's folder."""
    path = Path(path)
    experiment = load_experiment(path, extra_sections=("tune",))
    text = path.read_text(encoding="utf-8")
    table = tomllib.loads(text).get("tune")
    if not isinstance(table, dict):
        raise TuneError(f"{path}:1: no [tune] table (judge = ..., max_calls = ...)")
    try:
        spec = TuneSpec.model_validate(table)
    except ValidationError as err:
        raise _validation_error(path, text, err) from None
    if spec.instructions and spec.instructions.prompts:
        folders = []
        for given in spec.instructions.prompts:
            folder = Path(given).expanduser()
            folder = folder if folder.is_absolute() else path.parent / folder
            if not folder.is_dir():
                raise TuneError(f"{path}:{line_of(text, ('tune', 'instructions', 'prompts')) or 1}: [tune] "
                                f"instructions.prompts: no such folder {given!r}")
            folders.append(str(folder))
        spec = spec.model_copy(update={"instructions": spec.instructions.model_copy(update={"prompts": folders})})
    return TuneFile(path=path, text=text, experiment=experiment, spec=spec)
