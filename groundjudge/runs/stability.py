"""Verdict stability under repeats: the majority verdict of N repeats, the flip rate and Fleiss' kappa.

A judge with ``repeats=N`` judges every answer N times (each repeat its own
cached calls). The verdict scored is the majority label of the repeats that
did not abstain (a tie goes to the label reached first), with the mean score;
the summary says how often the repeats disagree (flip rate: the share of
answers whose repeats are not all the same label) and how far they agree beyond
chance (Fleiss' kappa over grounded / ungrounded / abstain).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from groundjudge.types import JudgeResult, ResultRecord

CATEGORIES = ("grounded", "ungrounded", "abstain")


def majority(results: Sequence[JudgeResult]) -> JudgeResult:
    """One result from the repeats: the majority label (abstentions count only when every repeat abstained),
    the mean score, the claims and reason of the first repeat with that label, every call, every verdict."""
    verdicts = [r.verdict for r in results]
    decided = [v.label for v in verdicts if v.label != "abstain"]
    if decided:
        counts = Counter(decided)
        top = max(counts.values())
        label = next(lab for lab in decided if counts[lab] == top)
    else:
        label = "abstain"
    chosen = next(r for r in results if r.verdict.label == label)
    scores = [v.score for v in verdicts if v.score is not None]
    verdict = chosen.verdict.model_copy(update={"score": float(np.mean(scores)) if scores else None})
    return chosen.model_copy(update={"verdict": verdict, "calls": tuple(c for r in results for c in r.calls),
                                     "repeats": tuple(verdicts)})


def fleiss_kappa(labels: Sequence[Sequence[str]], categories: Sequence[str] = CATEGORIES) -> float | None:
    """Fleiss' kappa of items each rated by the same number of raters (None: fewer than two raters or items,
    or one category only, where agreement beyond chance is undefined)."""
    rows = [list(row) for row in labels]
    if len(rows) < 2 or len({len(row) for row in rows}) != 1 or len(rows[0]) < 2:
        return None
    raters = len(rows[0])
    counts = np.array([[row.count(c) for c in categories] for row in rows], dtype=float)
    p_item = ((counts ** 2).sum(axis=1) - raters) / (raters * (raters - 1))
    p_bar = p_item.mean()
    share = counts.sum(axis=0) / counts.sum()
    p_chance = float((share ** 2).sum())
    if p_chance >= 1.0:
        return None
    return float((p_bar - p_chance) / (1 - p_chance))


def stability_summary(results: Sequence[ResultRecord]) -> dict[str, Any] | None:
    """Flip rate and Fleiss' kappa of a judge's repeated verdicts (None when it was not repeated)."""
    repeated = [[v.label for v in r.result.repeats] for r in results if len(r.result.repeats) > 1]
    if not repeated:
        return None
    sizes = Counter(len(row) for row in repeated)
    size = sizes.most_common(1)[0][0]
    same_size = [row for row in repeated if len(row) == size]
    flips = [len(set(row)) > 1 for row in repeated]
    return {"repeats": size, "n": len(repeated), "flip_rate": float(np.mean(flips)), "n_flipped": int(sum(flips)),
            "fleiss_kappa": fleiss_kappa(same_size),
            "label_shares": {c: float(np.mean([row.count(c) / len(row) for row in repeated])) for c in CATEGORIES}}
