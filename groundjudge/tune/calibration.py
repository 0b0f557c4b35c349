"""Calibrations of a score judge, each a threshold on its score (P(grounded), e.g. P(yes) of a yes/no reply).

- ``none``: the judge's own threshold (0.5 when it has none set);
- ``threshold``: the threshold of best balanced accuracy on the optimise part (as ``groundjudge run`` fits it on
  dev, :func:`groundjudge.metrics.fit_threshold`);
- ``contextual`` (Zhao et al., 2021): the judge asks about a few content-free inputs ("N/A"); their mean log-odds
  is its prior, divided out: grounded when logit(p) - prior >= 0, i.e. p >= sigmoid(prior). A few calls per
  candidate, no labels;
- ``batch`` (Zhou et al., 2024): the mean log-odds of the batch judged is subtracted instead: no extra call, no
  labels; the threshold is that of the answers judged together (a rung of the select part, the test part).

Each is a monotone shift of the score, so a calibration changes the verdicts, never the ranking (ROC AUC).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from groundjudge.metrics import fit_threshold
from groundjudge.types import Example

EPS = 1e-4
"""Scores are clipped to [EPS, 1 - EPS] before taking log-odds."""


def logit(p: float) -> float:
    """Log-odds of a probability (clipped)."""
    p = min(max(p, EPS), 1 - EPS)
    return math.log(p / (1 - p))


def sigmoid(x: float) -> float:
    """The probability of log-odds ``x``."""
    return 1.0 / (1.0 + math.exp(-x))


def mean_logit_threshold(scores: Sequence[float | None]) -> float | None:
    """sigmoid(mean log-odds) of the scores given (None when none is): the threshold of contextual and batch
    calibration."""
    values = [logit(s) for s in scores if s is not None]
    return sigmoid(sum(values) / len(values)) if values else None


def fitted_threshold(scores: Sequence[float | None], gold: Sequence[str]) -> float | None:
    """The threshold of best balanced accuracy (None when no example has a score or one class is missing)."""
    if len(set(gold)) < 2:
        return None
    try:
        return fit_threshold(scores, gold)[0]
    except ValueError:
        return None


def content_free_examples(texts: Sequence[str], with_question: bool) -> list[Example]:
    """The inputs of contextual calibration: each text as documents, answer (and question)."""
    return [Example(id=f"content-free-{i}", question=text if with_question else None, context=(text,), answer=text)
            for i, text in enumerate(texts)]


def decide(label: str, score: float | None, threshold: float | None) -> str:
    """A verdict under a calibration: the judge's own label without a threshold, else score >= threshold
    (abstain without a score)."""
    if threshold is None:
        return label
    if score is None:
        return "abstain"
    return "grounded" if score >= threshold else "ungrounded"
