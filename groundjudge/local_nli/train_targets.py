"""The head of a trained judge and what it learns: its labels (binary, or 3-way NLI), the target distribution of
each training pair (hard labels and a teacher's soft ones), and class weights."""

from __future__ import annotations

import numpy as np

from groundjudge.local_nli.nli_rows import NLI_LABELS
from groundjudge.local_nli.pairs import Pair

BINARY_LABELS = {0: "unsupported", 1: "supported"}
"""id2label of the head trained without NLI rows."""


THREE_WAY_LABELS = {i: name for i, name in enumerate(NLI_LABELS)}
"""id2label of the head trained with NLI rows (unless the base model has its own order of these labels)."""


def is_supported(label: str) -> bool:
    """Whether a pair label counts as supported (grounded)."""
    return label in ("supported", "entailment")


def choose_labels(nli: bool, base_id2label: dict[int, str]) -> dict[int, str]:
    """The head's id2label: binary, or 3-way in the base model's own order when it has the NLI labels."""
    if not nli:
        return dict(BINARY_LABELS)
    names = {i: str(n).lower() for i, n in base_id2label.items()}
    return names if sorted(names.values()) == sorted(NLI_LABELS) else dict(THREE_WAY_LABELS)


def target(label: str, id2label: dict[int, str]) -> list[float]:
    """The training target of a pair label as a distribution over the head's classes."""
    index = {name: i for i, name in id2label.items()}
    out = [0.0] * len(id2label)
    if len(id2label) == 2:
        out[index["supported" if is_supported(label) else "unsupported"]] = 1.0
    elif label in ("supported", "entailment"):
        out[index["entailment"]] = 1.0
    elif label in ("neutral", "contradiction"):
        out[index[label]] = 1.0
    else:  # unsupported: unverifiable or contradicted, we do not know which
        out[index["neutral"]] = out[index["contradiction"]] = 0.5
    return out


def pair_target(pair: Pair, id2label: dict[int, str]) -> list[float]:
    """The training target of a pair: its soft ``support`` (P(supported) spread over the head's classes: on a
    3-way head the rest is split between neutral and contradiction) when it has one, else its label's target."""
    if pair.support is None:
        return target(pair.label, id2label)
    index = {name: i for i, name in id2label.items()}
    p = min(max(float(pair.support), 0.0), 1.0)
    out = [0.0] * len(id2label)
    if len(id2label) == 2:
        out[index["supported"]], out[index["unsupported"]] = p, 1.0 - p
    else:
        out[index["entailment"]] = p
        out[index["neutral"]] = out[index["contradiction"]] = (1.0 - p) / 2
    return out


def supported_index(id2label: dict[int, str]) -> int:
    """Index of the class whose probability is the support score."""
    return next(i for i, name in id2label.items() if name in ("supported", "entailment"))


def class_weights(targets: np.ndarray, pair_weights: np.ndarray | None = None) -> np.ndarray:
    """Inverse-frequency class weights (mean 1 over present classes, clipped to [0.25, 4]); with ``pair_weights``
    each pair counts as much as its weight (a pair of weight 0 does not count)."""
    counts = (targets if pair_weights is None else targets * pair_weights[:, None]).sum(axis=0)
    present = counts > 0
    weights = np.ones(len(counts))
    weights[present] = counts[present].sum() / (present.sum() * counts[present])
    return np.clip(weights, 0.25, 4.0)
