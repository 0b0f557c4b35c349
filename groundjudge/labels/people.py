"""Agreement between people: answers labelled by two or more people give Cohen's kappa per pair of labellers and
Krippendorff's alpha across all of them, for the label and for each error type; their disagreements are listed
apart from the judges' errors (a judge cannot be wrong where people do not agree)."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from groundjudge.labels.store import LabelRecord

LABEL_CODES = {"grounded": 0, "ungrounded": 1, "unsure": 2}
"""Nominal codes of the label values for Krippendorff's alpha."""


class PairOfLabellers(BaseModel):
    """Two labellers on the answers both labelled."""

    a: str
    b: str
    n: int = Field(description="Answers both labelled.")
    agreement: float | None = None
    kappa: float | None = Field(default=None, description="Cohen's kappa on the label (None: undefined).")
    kappa_per_error_type: dict[str, float | None] = Field(default_factory=dict, description=(
        "Cohen's kappa on whether each error type was given (answers both labelled ungrounded)."))


class PeopleAgreement(BaseModel):
    """How far people agree with each other, and where they do not."""

    labellers: list[str]
    n_overlap: int = Field(description="Answers labelled by two people or more.")
    alpha: float | None = Field(default=None, description="Krippendorff's alpha (nominal) on the label, all labellers.")
    alpha_per_error_type: dict[str, float | None] = Field(default_factory=dict)
    pairs: list[PairOfLabellers] = Field(default_factory=list)
    disagreements: list[dict[str, Any]] = Field(default_factory=list, description=(
        "Answers on which people gave different labels: id and each labeller's label."))


def _kappa(a: list, b: list) -> float | None:
    from sklearn.metrics import cohen_kappa_score

    if not a or (len(set(a)) == 1 and set(a) == set(b)):
        return None
    value = float(cohen_kappa_score(a, b))
    return None if np.isnan(value) else value


def _alpha(rows: np.ndarray) -> float | None:
    """Krippendorff's alpha (nominal) of a labellers x answers matrix with NaN for missing."""
    import krippendorff

    present = (~np.isnan(rows)).sum(axis=0) >= 2
    if present.sum() == 0 or len(np.unique(rows[:, present][~np.isnan(rows[:, present])])) < 2:
        return None
    return float(krippendorff.alpha(reliability_data=rows, level_of_measurement="nominal"))


def people_agreement(by_labeller: Mapping[tuple[str, str], LabelRecord], types: list[str]) -> PeopleAgreement:
    """Agreement figures from each labeller's last label per answer (``latest_by_labeller``)."""
    labellers = sorted({who for _, who in by_labeller})
    answers = sorted({answer for answer, _ in by_labeller})
    per_answer = {answer: {who: by_labeller[(answer, who)] for who in labellers if (answer, who) in by_labeller}
                  for answer in answers}
    overlap = [answer for answer, given in per_answer.items() if len(given) >= 2]
    pairs = []
    for a, b in combinations(labellers, 2):
        both = [answer for answer in overlap if a in per_answer[answer] and b in per_answer[answer]]
        la = [per_answer[x][a].label for x in both]
        lb = [per_answer[x][b].label for x in both]
        wrong = [x for x in both if per_answer[x][a].label == per_answer[x][b].label == "ungrounded"]
        per_type = {t: _kappa([t in per_answer[x][a].error_types for x in wrong],
                              [t in per_answer[x][b].error_types for x in wrong]) for t in types}
        pairs.append(PairOfLabellers(a=a, b=b, n=len(both), agreement=(sum(x == y for x, y in zip(la, lb)) / len(both))
                                     if both else None, kappa=_kappa(la, lb), kappa_per_error_type=per_type))
    matrix = np.full((len(labellers), len(overlap)), np.nan)
    type_matrices = {t: np.full((len(labellers), len(overlap)), np.nan) for t in types}
    for j, answer in enumerate(overlap):
        for i, who in enumerate(labellers):
            record = per_answer[answer].get(who)
            if record is None:
                continue
            matrix[i, j] = LABEL_CODES[record.label]
            if record.label == "ungrounded":
                for t in types:
                    type_matrices[t][i, j] = float(t in record.error_types)
    disagreements = [{"id": answer, "labels": {who: r.label for who, r in per_answer[answer].items()}}
                     for answer in overlap if len({r.label for r in per_answer[answer].values()}) > 1]
    return PeopleAgreement(labellers=labellers, n_overlap=len(overlap), alpha=_alpha(matrix) if overlap else None,
                           alpha_per_error_type={t: _alpha(m) if overlap else None for t, m in type_matrices.items()},
                           pairs=pairs, disagreements=disagreements)
