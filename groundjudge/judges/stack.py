"""Stacked judge: a logistic regression over the scores of other judges (local and LLM), fitted on dev data.

``stack:judges=[quip:n=21, cosine]`` runs every inner judge on the answer and
combines their scores, ``P(grounded) = sigmoid(intercept + weights . scores)``.
The regression is fitted where thresholds are fitted (``run --calibrate-on DEV``
or the dev split; :mod:`groundjudge.judges.stack_fit`) and frozen with the run:
weights, intercept, feature order, imputed scores and the ids it was fitted on go
in the records header (the judge's calibration), and into ``stack-<hash>.json`` in
the run folder, which ``weights=FILE`` loads to use the judge anywhere without
refitting. An inner judge that abstains is given its mean dev score (recorded as
``imputed``); when every inner judge abstains, so does the stack. Unfitted, the
judge still runs its inner judges (that is how dev scores are gathered) but abstains
(``not_fitted``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from groundjudge.judges import SpecError, register
from groundjudge.judges.composite import InnerJudge, build_inner, inner_config
from groundjudge.judges.stack_model import inner_score, stacked_score
from groundjudge.paths import portable_path
from groundjudge.types import Calibration, Example, JudgeResult, StackFit, Verdict


def load_fit(path: str, features: Sequence[str]) -> Calibration:
    """A saved stack fit (``stack-<hash>.json`` of a run), checked against the stack's inner judges."""
    file = Path(path)
    try:
        calibration = Calibration.model_validate_json(file.read_text(encoding="utf-8"))
    except OSError as err:
        raise SpecError(f"stack weights {path!r}: cannot read it ({err.strerror})") from None
    except ValueError as err:
        raise SpecError(f"stack weights {path}:1: not a stack fit: {str(err).splitlines()[0]}") from None
    if calibration.fit is None:
        raise SpecError(f"stack weights {path}:1:fit: the file holds a threshold but no stack fit")
    if tuple(calibration.fit.features) != tuple(features):
        raise SpecError(f"stack weights {path}:1:fit.features: fitted on judges {list(calibration.fit.features)}, "
                        f"but this stack has {list(features)} (same judges, same order)")
    return calibration


@register
@dataclass(frozen=True)
class StackJudge:
    """Logistic regression over inner judges' scores, fitted on dev data (--calibrate-on) or loaded (weights=)."""

    name: ClassVar[str] = "stack"
    max_concurrency: ClassVar[int | None] = None
    judges: tuple[InnerJudge, ...] = ("quip", "cosine")
    """The inner judges whose scores are the features, in order."""
    weights: str | None = None
    """A fit saved by an earlier run (its ``stack-<hash>.json``): use it, do not refit."""
    threshold: float | None = None
    """Stacked score >= threshold is grounded; None: fitted on dev with the weights (or the saved one)."""
    C: float | Literal["auto"] = 1.0
    """Inverse L2 regularisation strength of the logistic regression; ``auto``: chosen by grouped cross-validation
    on the dev data (documents kept apart)."""
    service: Any = field(default=None, compare=False, repr=False, metadata={"runtime": True})
    fit: StackFit | None = field(default=None, compare=False, repr=False, metadata={"runtime": True})
    """Not a setting: the fitted model, from the run's calibration or the weights file."""

    def __post_init__(self) -> None:
        if not self.judges:
            raise SpecError("stack: give at least one inner judge, judges=[A, B]")
        # named _stages so judge_parts (prompts, demonstrations, batch checks) reaches the inner judges
        object.__setattr__(self, "_stages", tuple(build_inner(inner, self.service) for inner in self.judges))
        object.__setattr__(self, "features", tuple(inner_config(inner).name for inner in self.judges))
        loaded = load_fit(self.weights, self.features) if self.weights and self.fit is None else None
        if loaded is not None:   # the file's threshold unless the stack sets one
            threshold = loaded.threshold if self.threshold is None else self.threshold
            source = f"weights {portable_path(self.weights)} (fitted on {loaded.source})"
            loaded = loaded.model_copy(update={"source": source, "threshold": threshold})
            object.__setattr__(self, "fit", loaded.fit)
            object.__setattr__(self, "threshold", threshold)
        object.__setattr__(self, "frozen_calibration", loaded)

    @property
    def needs_fit(self) -> bool:
        """Whether the regression is still to be fitted on dev data (no run calibration, no weights file)."""
        return self.fit is None

    def fit_calibration(self, results: Sequence[Any], source: str) -> Calibration:
        """Fit the regression (and, unless set, the threshold) on dev results (records of this judge)."""
        from groundjudge.errors import UsageError
        from groundjudge.judges.stack_fit import fit_from_records

        try:
            return fit_from_records(self, results, source)
        except ValueError as err:   # one class only, too few documents for C=auto: a usage problem, said in one line
            raise UsageError(str(err)) from None

    async def judge(self, example: Example) -> JudgeResult:
        """Run every inner judge, combine their scores with the fitted weights, decide with the threshold."""
        results = await asyncio.gather(*(stage.judge(example) for stage in self._stages))
        stages = tuple(r.verdict for r in results)
        calls = tuple(call for r in results for call in r.calls)
        score = stacked_score(self.fit, [inner_score(v) for v in stages]) if self.fit is not None else None
        if self.fit is None or self.threshold is None:
            reason = "not_fitted: fit it with run --calibrate-on DEV (or a dev split), or give weights=FILE"
        elif score is None:
            reason = "every inner judge abstained"
        else:
            reason = None
        label = "abstain" if reason else ("grounded" if score >= self.threshold else "ungrounded")
        verdict = Verdict(example_id=example.id, label=label, score=None if reason else score,
                          threshold=self.threshold, abstain_reason=reason, path="stack")
        return JudgeResult(verdict=verdict, calls=calls, stages=stages)
