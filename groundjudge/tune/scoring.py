"""A candidate's verdicts and scores on a set of answers, from its judge config's results and its calibration."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from groundjudge.metrics import classification_metrics, ranking_metrics
from groundjudge.tune.calibration import decide, fitted_threshold, mean_logit_threshold
from groundjudge.tune.candidates import Candidate
from groundjudge.tune.state import Judged
from groundjudge.types import Example


@dataclass(frozen=True)
class Scored:
    """A candidate on some answers: verdicts, balanced accuracy, ROC AUC and what it cost per answer."""

    verdicts: list[str]
    scores: list[float | None]
    threshold: float | None
    balanced_accuracy: float
    roc_auc: float | None
    input_tokens: float
    output_tokens: float
    cost_usd: float


def threshold_of(candidate: Candidate, batch: Sequence[Judged], fit: Sequence[Judged] = (),
                 fit_gold: Sequence[str] = (), prior: Sequence[Judged] = ()) -> float | None:
    """The threshold a candidate's calibration gives (None: the judge's own verdicts)."""
    if candidate.method == "threshold":
        found = fitted_threshold([j.score for j in fit], list(fit_gold))
        return found if found is not None else 0.5
    if candidate.method == "contextual":
        return mean_logit_threshold([j.score for j in prior])
    if candidate.method == "batch":
        return mean_logit_threshold([j.score for j in batch])
    return None


def score(examples: Sequence[Example], results: Mapping[str, Judged], threshold: float | None,
          n_boot: int = 0) -> Scored:
    """The candidate's metrics on ``examples`` (labelled) given its config's results there and its threshold."""
    chosen = [results[ex.id] for ex in examples]
    gold = [ex.label for ex in examples]
    verdicts = [decide(j.label, j.score, threshold) for j in chosen]
    scores = [j.score for j in chosen]
    bal = classification_metrics(gold, verdicts)["balanced_accuracy"]
    ranking = ranking_metrics(gold, scores, n_boot=n_boot) if any(s is not None for s in scores) else None
    n = max(1, len(chosen))
    return Scored(verdicts=verdicts, scores=scores, threshold=threshold, balanced_accuracy=bal,
                  roc_auc=ranking.roc_auc if ranking else None,
                  input_tokens=sum(j.input_tokens for j in chosen) / n,
                  output_tokens=sum(j.output_tokens for j in chosen) / n,
                  cost_usd=sum(j.answer_cost_usd for j in chosen) / n)


def rank_key(scored: Scored, order: int, select_by: str = "balanced_accuracy") -> tuple:
    """Sort key, best first: the ``select_by`` metric (balanced accuracy, or ROC AUC when the score's ranking is
    what counts), then the other, then fewer input tokens, then the earlier candidate."""
    auc = scored.roc_auc if scored.roc_auc is not None else -1.0
    metrics = (-auc, -scored.balanced_accuracy) if select_by == "roc_auc" else (-scored.balanced_accuracy, -auc)
    return (*metrics, scored.input_tokens, order)
