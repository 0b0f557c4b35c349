"""Prediction-powered estimates (PPI++, via ``ppi_py``): each judge's accuracy and balanced accuracy over the whole
run, from the human labels of a **uniform** queue plus a reference judge's verdict on every answer.

For judge *j* the reference's verdict predicts, answer by answer, whether *j* is right: 1 where the two say the
same, 0 where they differ, 0.5 where the reference abstained (0 where *j* abstained: an abstention is wrong for
both classes, as in :mod:`groundjudge.labels.estimates`). PPI++ (Angelopoulos, Duchi and Zrnic 2023) takes the
mean of that prediction over every answer and corrects it with the labelled answers' gap between truth and
prediction, scaled by a power-tuning factor fitted from the data (factor 0: the classical, labels-only estimate,
so a useless reference costs nothing but a little noise). Balanced accuracy is a ratio of means; its interval is
the PPI++ interval of its linearisation (delta method, one step from the PPI++ point) — asymptotic, like the
rest.

Validity. PPI assumes the labelled answers are a uniform random sample of the answers. Here that holds for a queue
drawn with ``--strategy uniform`` labelled in queue order, so PPI is given only for such a queue (the labelled
answers of the queue, ``unsure`` ones left out as missing at random). It is not given for a stratified queue, on
purpose: there the reference's verdict is one letter of every stratum, so the reference is constant within a
stratum, and PPI weighted by the design's inclusion probabilities reduces exactly to the design-based stratified
estimate (:mod:`groundjudge.labels.estimates`) with a cruder variance. The reference is chosen from the verdicts
alone (never the labels), which keeps the interval valid. The corpus is finite and every answer's prediction is
known, so ``ppi_py``'s term for the unlabelled mean's noise and its lack of a finite-population correction make the
interval a little conservative. The intervals are CLT (Wald-type): with few labels, or a judge near 0 or 1, they
can be too narrow; PPI is given from ``MIN_LABELS`` labels on, and only for a judge the labels show right and wrong
at least ``MIN_EACH`` times each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel, Field

from groundjudge.labels.queue import QueueItem

MIN_LABELS = 20
"""Labelled answers (grounded / ungrounded) of a uniform queue before PPI is given."""

MIN_EACH = 3
"""A judge gets PPI figures only when the labels hold this many answers it got right and this many it got wrong: a
CLT interval around a judge the labels show (almost) always right collapses to a point."""

ALPHA = 0.05
"""1 - the intervals' level."""

METHOD = ("PPI++ (ppi_py, power-tuned): the reference judge's verdict on every answer predicts whether each judge "
          "is right; the labelled answers of a uniform queue correct it. Balanced accuracy by the delta method. "
          "95% CLT intervals; classical_ci95: the labels alone.")


class PPIFigure(BaseModel):
    """One judge's figure as a PPI++ estimate, with the classical (labels-only) interval beside it."""

    estimate: float
    ci95: tuple[float, float]
    classical_estimate: float = Field(description="The labelled answers alone.")
    classical_ci95: tuple[float, float] = Field(description="CLT interval from the labelled answers alone.")


class PPIEstimates(BaseModel):
    """``estimates.json``'s ``ppi`` key: each judge over the whole run, by prediction-powered inference."""

    reference: str | None = Field(description="The judge whose verdict on every answer serves as the prediction.")
    reference_chosen: str = Field(default="", description="'given' (--reference) or how the default was picked.")
    n_labelled: int = Field(description="Labelled (grounded / ungrounded) answers of the uniform queue used.")
    n_answers: int
    judges: dict[str, dict[str, PPIFigure]] = Field(default_factory=dict, description=(
        "Per judge: accuracy and (when the labels hold both classes) balanced_accuracy."))
    skipped: str | None = Field(default=None, description="Why PPI was not given (judges is then empty).")
    judges_skipped: dict[str, str] = Field(default_factory=dict, description=(
        "Judges left out of ``judges``, and why (too few right or wrong answers among the labels)."))
    method: str = METHOD


def default_reference(verdicts: Mapping[str, Mapping[str, str]], judges: Sequence[str]) -> str | None:
    """Among the judges that judged every answer, the one that agrees most with the others (mean share of answers
    with the same verdict); ties and a single judge go to the first in run order. Picked from the verdicts alone,
    never the labels, so the PPI interval stays valid."""
    complete = [j for j in judges if all(j in row for row in verdicts.values())]
    if len(complete) <= 1 or len(judges) < 2:
        return complete[0] if complete else None

    def agreement(judge: str) -> float:
        others = [o for o in judges if o != judge]
        same = [row.get(judge) == row.get(o) for row in verdicts.values() for o in others if o in row]
        return sum(same) / len(same) if same else 0.0

    return max(complete, key=lambda j: (agreement(j), -judges.index(j)))


def uniform_labelled(queue: Sequence[QueueItem] | None, gold: Mapping[str, str]) -> tuple[list[str], str | None]:
    """The labelled answers PPI may use (those of a uniform queue, in queue order) and, when none may, why."""
    if not queue:
        return [], "no labelling queue (RUN/label_queue.jsonl): PPI needs the labels of a uniform queue"
    strategies = {item.strategy for item in queue}
    if strategies != {"uniform"}:
        shown = ("of unrecorded strategy (written before queues recorded it)" if None in strategies
                 else "/".join(sorted(map(str, strategies))))
        return [], (f"the queue is {shown}, not uniform: PPI needs a uniform random sample of labelled answers "
                    "(draw one with groundjudge label RUN --no-serve --strategy uniform before labelling); on a "
                    "stratified queue the design-based intervals above already use every judge's verdicts")
    return [item.id for item in queue if item.id in gold], None


def _prediction(reference: Sequence[str | None]) -> np.ndarray:
    """The reference's verdict as a probability of grounded: 1, 0, or 0.5 where it abstained."""
    return np.array([1.0 if r == "grounded" else 0.0 if r == "ungrounded" else 0.5 for r in reference])


def _clip(low: float, high: float) -> tuple[float, float]:
    return max(0.0, float(low)), min(1.0, float(high))


def _mean_figure(y: np.ndarray, yhat: np.ndarray, yhat_all: np.ndarray, shift: float = 0.0) -> PPIFigure:
    """PPI++ and classical estimate and 95% interval of a mean (plus ``shift``), clipped to [0, 1]."""
    import ppi_py

    lam = 0.0 if np.ptp(yhat) == 0 or np.ptp(yhat_all) == 0 else None      # a constant prediction says nothing
    point = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_all, lam=lam))[0])
    low, high = (float(np.ravel(v)[0]) for v in ppi_py.ppi_mean_ci(y, yhat, yhat_all, alpha=ALPHA, lam=lam))
    c_low, c_high = (float(np.ravel(v)[0]) for v in ppi_py.classical_mean_ci(y, alpha=ALPHA))
    return PPIFigure(estimate=min(1.0, max(0.0, shift + point)), ci95=_clip(shift + low, shift + high),
                     classical_estimate=min(1.0, max(0.0, shift + float(y.mean()))),
                     classical_ci95=_clip(shift + c_low, shift + c_high))


def _balanced(theta: np.ndarray) -> tuple[float, np.ndarray]:
    """Balanced accuracy from (P(grounded and said grounded), P(grounded), P(ungrounded and said ungrounded)) and
    its gradient."""
    a, b, c = theta
    value = 0.5 * (a / b + c / (1 - b))
    return value, 0.5 * np.array([1 / b, -a / b**2 + c / (1 - b) ** 2, 1 / (1 - b)])


def _balanced_figure(z: np.ndarray, zhat: np.ndarray, zhat_all: np.ndarray) -> PPIFigure | None:
    """Balanced accuracy by PPI++ on its linearisation at the PPI++ point (and classical at the sample means)."""
    import ppi_py

    lam = 0.0 if np.ptp(zhat, axis=0).max() == 0 or np.ptp(zhat_all, axis=0).max() == 0 else None
    pilot = np.ravel(ppi_py.ppi_mean_pointestimate(z, zhat, zhat_all, lam=lam))
    classical = z.mean(axis=0)
    if not (0 < pilot[1] < 1 and 0 < classical[1] < 1):
        return None
    value, grad = _balanced(pilot)
    ppi = _mean_figure(z @ grad, zhat @ grad, zhat_all @ grad, value - float(grad @ pilot))
    c_value, c_grad = _balanced(classical)
    c_shift = c_value - float(c_grad @ classical)
    c_low, c_high = (float(np.ravel(v)[0]) for v in ppi_py.classical_mean_ci(z @ c_grad, alpha=ALPHA))
    return ppi.model_copy(update={"classical_estimate": min(1.0, max(0.0, c_value)),
                                  "classical_ci95": _clip(c_shift + c_low, c_shift + c_high)})


def judge_figures(said: Sequence[str], truth: Sequence[str], labelled: Sequence[int],
                  grounded_hat: np.ndarray) -> dict[str, PPIFigure]:
    """One judge's PPI++ figures: its verdict on every answer, the labels of the answers at ``labelled`` (indices
    into ``said``), and the reference's probability of grounded on every answer."""
    says_g = np.array([s == "grounded" for s in said], dtype=float)
    says_u = np.array([s == "ungrounded" for s in said], dtype=float)
    g = np.array([t == "grounded" for t in truth], dtype=float)
    index = np.asarray(labelled, dtype=int)
    right_hat = grounded_hat * says_g + (1 - grounded_hat) * says_u
    right = g * says_g[index] + (1 - g) * says_u[index]
    if min(right.sum(), len(right) - right.sum()) < MIN_EACH:
        return {}
    out = {"accuracy": _mean_figure(right, right_hat[index], right_hat)}
    zhat_all = np.stack([grounded_hat * says_g, grounded_hat, (1 - grounded_hat) * says_u], axis=1)
    z = np.stack([g * says_g[index], g, (1 - g) * says_u[index]], axis=1)
    if 0 < g.sum() < len(g):
        balanced = _balanced_figure(z, zhat_all[index], zhat_all)
        if balanced is not None:
            out["balanced_accuracy"] = balanced
    return out


def ppi_estimates(verdicts: Mapping[str, Mapping[str, str]], judges: Sequence[str], gold: Mapping[str, str],
                  queue: Sequence[QueueItem] | None, reference: str | None = None) -> PPIEstimates:
    """PPI++ figures of every judge (verdicts: id -> judge -> label over the whole run; gold: id -> grounded /
    ungrounded, unsure left out) from the labelled answers of a uniform ``queue``; ``reference`` a judge of the run
    (default :func:`default_reference`). Raises ValueError for a reference that is not a judge of the run."""
    ids = list(verdicts)
    chosen = "given"
    if reference is None:
        reference, chosen = default_reference(verdicts, judges), "default: agrees most with the other judges"
    elif reference not in judges:
        raise ValueError(f"--reference {reference!r} is not a judge of the run; judges: {', '.join(judges)}")
    base = {"reference": reference, "reference_chosen": chosen, "n_labelled": 0, "n_answers": len(ids)}
    if reference is None:
        return PPIEstimates(**base, skipped="no judge judged every answer of the run: PPI needs a reference that did")
    missing = sum(reference not in row for row in verdicts.values())
    if missing:
        return PPIEstimates(**base, skipped=f"the reference {reference} left {missing} answer(s) unjudged")
    labelled, why = uniform_labelled(queue, {i: v for i, v in gold.items() if i in verdicts})
    base["n_labelled"] = len(labelled)
    if why:
        return PPIEstimates(**base, skipped=why)
    if len(labelled) < MIN_LABELS:
        return PPIEstimates(**base, skipped=f"{len(labelled)} labels of the uniform queue so far; PPI from "
                                            f"{MIN_LABELS} on")
    try:
        import ppi_py  # noqa: F401
    except ImportError:
        return PPIEstimates(**base, skipped="ppi_py is not installed: pip install 'groundjudge[labels]'")
    position = {example_id: k for k, example_id in enumerate(ids)}
    at = [position[i] for i in labelled]
    truth = [gold[i] for i in labelled]
    grounded_hat = _prediction([verdicts[i][reference] for i in ids])
    figures = {j: judge_figures([verdicts[i].get(j, "") for i in ids], truth, at, grounded_hat) for j in judges}
    left_out = {j: f"fewer than {MIN_EACH} right or {MIN_EACH} wrong answers among the labels: a CLT interval would "
                   "be too narrow (the design-based interval holds)" for j, f in figures.items() if not f}
    return PPIEstimates(**base, judges={j: f for j, f in figures.items() if f}, judges_skipped=left_out)
