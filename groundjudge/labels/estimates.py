"""What the labels so far prove: each judge's accuracy, balanced accuracy and macro-F1, and the difference between
every two judges, with 95% intervals valid under the queue's design.

Within a stratum of verdict patterns (:mod:`groundjudge.labels.strata`) every judge gives every answer the same
verdict, so every figure of every judge is a function of one unknown per stratum: how many of its answers are
grounded. The labelled answers of a stratum are a random sample of it (the queue shuffles within strata and fixes
the interleaving before any label is seen; a uniform queue is post-stratified the same way). The estimator draws
each stratum's grounded count from its finite-population posterior — the labelled answers as labelled, the rest
beta-binomial under a Jeffreys prior — and computes every metric on every draw: the point is the metric at the
posterior mean, the interval the draws' 2.5 and 97.5 percentiles. A stratum without labels keeps the whole prior
range, so the interval stays honest (wide) rather than invalid; a difference between two judges needs labels only
where they disagree, since where they agree their correctness is the same whatever the label.

The same posterior holds for the adaptive queue (:mod:`groundjudge.labels.adaptive`), whose stratum sample sizes
depend on the labels already seen: within a stratum the labelled answers are still a simple random sample, so the
design is ignorable and the likelihood, hence the posterior, is that of a fixed design with those sample sizes.
Beside the interval, each pair gets the exact range of its difference over every way the unlabelled answers could
turn out (:mod:`groundjudge.labels.worst_case`): when it excludes 0 no further label can change which judge is ahead.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from groundjudge.labels.people import PeopleAgreement, people_agreement
from groundjudge.labels.ppi import PPIEstimates
from groundjudge.labels.projection import (
    project_labels_to_half_width,
    project_more_labels,
)
from groundjudge.labels.worst_case import difference_range, pair_gain

METRICS = ("accuracy", "balanced_accuracy", "macro_f1")
"""The figures estimated per judge."""

PAIR_METRICS = ("accuracy", "balanced_accuracy")
"""The figures compared between two judges (estimate = a - b)."""

DRAWS = 4000
"""Posterior draws per estimate."""

TARGET_HALF_WIDTH = 0.05
"""The half-width of a pair's 95% interval the projection of labels to a target aims at."""


class Interval(BaseModel):
    """A point estimate and its 95% interval."""

    estimate: float
    ci95: tuple[float, float]


class PairEstimate(BaseModel):
    """Judge a minus judge b on one metric, with the labels that carry it and a projection of labels still needed."""

    a: str
    b: str
    metric: str
    estimate: float
    ci95: tuple[float, float]
    separated: bool = Field(description="Whether the interval excludes 0.")
    labels_where_they_differ: int = Field(description="Labelled answers on which the two verdicts differ.")
    more_labels_needed: int | None = Field(default=None, description=(
        "Projection: more labels before the interval would likely exclude 0, when it does not yet and the estimate "
        "is not 0 (None: not even the rest of the queue would). With the run's queue: from the per-stratum "
        "variances along the rest of the queue (groundjudge.labels.projection); without one: the interval narrowing "
        "as 1/sqrt(labels) at the labels' mix."))
    labels_to_half_width: int | None = Field(default=None, description=(
        "Projection along the rest of the run's queue: more labels before the 95% interval's half-width would "
        "likely be 0.05 or less (0: it is; None: no queue, or not even the rest of the queue would do)."))
    queue_target: bool = Field(default=False, description=(
        "Whether the run's queue was built for this pair and metric (groundjudge label --for / --pair)."))
    worst_case: tuple[float, float] | None = Field(default=None, description=(
        "a - b at its least and at its most over every way the answers without a grounded / ungrounded label "
        "could turn out (groundjudge.labels.worst_case): exact, no assumption about them."))
    ahead_for_good: str | None = Field(default=None, description=(
        "The judge (a or b) ahead on this metric whatever the unlabelled answers are: no further label can change "
        "which judge is ahead (None while one still can)."))


class Estimates(BaseModel):
    """``RUN/estimates.json``: per judge and per pair of judges, from the human labels so far."""

    n_labelled: int = Field(description="Answers with a grounded / ungrounded label (unsure ones left out).")
    n_unsure: int = 0
    n_answers: int
    strata: dict[str, dict[str, int]] = Field(description="Per stratum: answers (N), labelled (n), grounded among them.")
    judges: dict[str, dict[str, Interval]]
    pairs: list[PairEstimate]
    method: str = "finite-population stratified posterior (Jeffreys prior), 95% percentile intervals"
    people: PeopleAgreement | None = Field(default=None, description=(
        "Agreement between labellers on the answers two or more labelled (when any did)."))
    ppi: PPIEstimates | None = Field(default=None, description=(
        "Each judge over the whole run by prediction-powered inference (PPI++) with a reference judge, from the "
        "labels of a uniform queue (groundjudge.labels.ppi); None when not asked for."))


@dataclass(frozen=True)
class StratumCounts:
    """One stratum: its verdict per judge, its size, and its labels so far."""

    verdicts: tuple[str, ...]
    """Each judge's verdict label on this stratum's answers (grounded, ungrounded, abstain, or '' unjudged)."""
    size: int
    labelled: int
    grounded: int


def grounded_draws(strata: Sequence[StratumCounts], draws: int, seed: int) -> np.ndarray:
    """Posterior draws of each stratum's number of grounded answers: shape (draws, strata)."""
    rng = np.random.default_rng(seed)
    columns = []
    for s in strata:
        p = rng.beta(s.grounded + 0.5, s.labelled - s.grounded + 0.5, size=draws)
        columns.append(s.grounded + rng.binomial(s.size - s.labelled, p))
    return np.stack(columns, axis=1).astype(float)


def metrics_from_counts(grounded: np.ndarray, strata: Sequence[StratumCounts], judge: int) -> dict[str, np.ndarray]:
    """A judge's metrics from grounded counts per stratum (last axis), abstentions wrong for both classes."""
    size = np.array([s.size for s in strata], dtype=float)
    says_g = np.array([s.verdicts[judge] == "grounded" for s in strata], dtype=float)
    says_u = np.array([s.verdicts[judge] == "ungrounded" for s in strata], dtype=float)
    tp_g, tp_u = grounded @ says_g, (size - grounded) @ says_u
    actual_g = grounded.sum(axis=-1)
    actual_u = size.sum() - actual_g
    pred_g, pred_u = size @ says_g, size @ says_u

    def ratio(num, den):
        return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=np.asarray(den) > 0)

    recall_g, recall_u = ratio(tp_g, actual_g), ratio(tp_u, actual_u)
    precision_g, precision_u = ratio(tp_g, pred_g), ratio(tp_u, pred_u)
    f1_g = ratio(2 * precision_g * recall_g, precision_g + recall_g)
    f1_u = ratio(2 * precision_u * recall_u, precision_u + recall_u)
    return {"accuracy": (tp_g + tp_u) / size.sum(), "balanced_accuracy": (recall_g + recall_u) / 2,
            "macro_f1": (f1_g + f1_u) / 2}


def _interval(point: float, draws: np.ndarray) -> tuple[float, tuple[float, float]]:
    low, high = np.percentile(draws, [2.5, 97.5])
    return float(point), (float(low), float(high))


def _more_labels(estimate: float, ci: tuple[float, float], labelled: int) -> int | None:
    """Labels to add (same mix) before a 95% interval of this half-width around ``estimate`` would exclude 0."""
    half = (ci[1] - ci[0]) / 2
    if abs(estimate) < 1e-9 or labelled == 0:
        return None
    if ci[0] > 0 or ci[1] < 0:
        return 0
    return max(1, math.ceil(labelled * ((half / abs(estimate)) ** 2 - 1)))


def estimate(strata: Mapping[str, StratumCounts], judges: Sequence[str], n_unsure: int = 0, draws: int = DRAWS,
             seed: int = 0, upcoming: Sequence[str] | None = None, built_for: Any = None) -> Estimates:
    """Per judge and per pair of judges, from the strata's labels so far (see the module's description).
    ``upcoming``: the strata of the queue's unlabelled items in queue order, for the projections of labels still
    needed (:mod:`groundjudge.labels.projection`); without it, a rough 1/sqrt(labels) rule and no projection to
    ±0.05. ``built_for``: what the queue was built for (:class:`groundjudge.labels.queue.BuiltFor`), to flag the
    pairs and metric it aims at."""
    names = sorted(strata)
    ordered = [strata[n] for n in names]
    sampled = grounded_draws(ordered, draws, seed)
    mean = np.array([[s.grounded + (s.size - s.labelled) * (s.grounded + 0.5) / (s.labelled + 1) for s in ordered]])
    per_judge = {j: metrics_from_counts(sampled, ordered, i) for i, j in enumerate(judges)}
    at_mean = {j: {m: float(v[0]) for m, v in metrics_from_counts(mean, ordered, i).items()}
               for i, j in enumerate(judges)}
    judge_out = {j: {m: Interval(**dict(zip(("estimate", "ci95"), _interval(at_mean[j][m], per_judge[j][m]))))
                     for m in METRICS} for j in judges}
    pairs = []
    size = np.array([s.size for s in ordered], dtype=float)
    labelled = np.array([s.labelled for s in ordered], dtype=float)
    grounded = np.array([s.grounded for s in ordered], dtype=float)
    for (ia, a), (ib, b) in combinations(enumerate(judges), 2):
        differ = sum(s.labelled for s in ordered if s.verdicts[ia] != s.verdicts[ib])
        gain = pair_gain([s.verdicts for s in ordered], ia, ib)
        for metric in PAIR_METRICS:
            bounds = difference_range(size, labelled, grounded, gain, metric, lambda x, m=metric, i=ia, k=ib: (
                metrics_from_counts(x, ordered, i)[m] - metrics_from_counts(x, ordered, k)[m]))
            leader = a if bounds[0] > 0 else b if bounds[1] < 0 else None
            diff = per_judge[a][metric] - per_judge[b][metric]
            point, ci = _interval(at_mean[a][metric] - at_mean[b][metric], diff)
            separated = ci[0] > 0 or ci[1] < 0
            if upcoming is None or separated:
                more = _more_labels(point, ci, sum(s.labelled for s in ordered))
            else:
                more = project_more_labels(point, diff, sampled, ordered, names, upcoming)
            to_target = None if upcoming is None else (
                0 if (ci[1] - ci[0]) / 2 <= TARGET_HALF_WIDTH else
                project_labels_to_half_width(TARGET_HALF_WIDTH, diff, sampled, ordered, names, upcoming))
            target = built_for is not None and metric == built_for.metric and (
                (a, b) in {tuple(p) for p in built_for.pairs} or (b, a) in {tuple(p) for p in built_for.pairs})
            pairs.append(PairEstimate(a=a, b=b, metric=metric, estimate=point, ci95=ci, separated=separated,
                                      labels_where_they_differ=differ, more_labels_needed=more,
                                      labels_to_half_width=to_target, queue_target=target,
                                      worst_case=bounds, ahead_for_good=leader))
    return Estimates(n_labelled=sum(s.labelled for s in ordered), n_unsure=n_unsure,
                     n_answers=sum(s.size for s in ordered),
                     strata={n: {"N": s.size, "n": s.labelled, "grounded": s.grounded} for n, s in zip(names, ordered)},
                     judges=judge_out, pairs=pairs)


def strata_counts(verdicts: Mapping[str, Mapping[str, str]], judges: Sequence[str],
                  gold: Mapping[str, str]) -> dict[str, StratumCounts]:
    """The strata of a run from its verdicts (id -> judge -> label) and the human gold so far (id -> grounded /
    ungrounded; unsure left out)."""
    from groundjudge.labels.strata import pattern

    grouped: dict[str, list[str]] = {}
    for example_id, row in verdicts.items():
        grouped.setdefault(pattern(row, judges), []).append(example_id)
    out = {}
    for name, ids in grouped.items():
        row = verdicts[ids[0]]
        labelled = [gold[i] for i in ids if i in gold]
        out[name] = StratumCounts(verdicts=tuple(row.get(j, "") for j in judges), size=len(ids),
                                  labelled=len(labelled), grounded=sum(g == "grounded" for g in labelled))
    return out


def estimate_run(records, labels: Mapping[str, Any], draws: int = DRAWS, seed: int = 0,
                 history: Sequence[Any] | None = None, queue: Sequence[Any] | None = None,
                 reference: str | None = None) -> Estimates:
    """Estimates for a run's records from its labels (id -> :class:`~groundjudge.labels.store.LabelRecord`, the
    label that counts per answer); with ``history`` (every label line, in file order) also the agreement between
    labellers; with ``queue`` (the run's queue, empty when it has none) also the PPI++ figures with ``reference``
    (a judge of the run; default :func:`groundjudge.labels.ppi.default_reference`)."""
    from groundjudge.labels.store import latest_by_labeller
    from groundjudge.labels.strata import judge_order, verdict_table

    gold = {i: r.label for i, r in labels.items() if r.label in ("grounded", "ungrounded")}
    judges = judge_order(records)
    table = verdict_table(records)
    counts = strata_counts(table, judges, gold)
    upcoming = None if not queue else [item.stratum for item in queue if item.id not in labels
                                       and item.stratum in counts]
    built_for = next((item.built_for for item in queue or [] if getattr(item, "built_for", None)), None)
    result = estimate(counts, judges, n_unsure=sum(r.label == "unsure" for r in labels.values()), draws=draws,
                      seed=seed, upcoming=upcoming, built_for=built_for)
    if queue is not None:
        from groundjudge.labels.ppi import ppi_estimates

        result = result.model_copy(update={"ppi": ppi_estimates(table, judges, gold, queue, reference)})
    if history:
        by_labeller = latest_by_labeller(list(history))
        if len({who for _, who in by_labeller}) >= 2:
            types = sorted({t for r in history for t in r.error_types})
            result = result.model_copy(update={"people": people_agreement(by_labeller, types)})
    return result
