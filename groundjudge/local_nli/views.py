"""Multi-view verification (evidence-typed generation): several views vote on each claim.

A view turns (evidence, claim, question) into one NLI pair in its own way:
``direct`` (evidence, claim); ``context`` (question + evidence, claim);
``reversed`` (claim, evidence); ``truncated`` (first half of the evidence,
claim); ``paraphrase`` (evidence, "It is true that " + claim). Views from
other models are independent backends: the same ``direct`` pair scored by a
different model. A claim's support mass is the share of views that find it
entailed; its evidence type is Verified (m >= tau), Unsupported (m <= tau')
or Uncertain.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from groundjudge.local_nli.nli_model import ENTAILMENT, NLIModel

VIEWS = ("direct", "context", "reversed", "truncated", "paraphrase")
"""The prompt-formulation views of one model."""


def view_pair(view: str, evidence: str, claim: str, question: str | None) -> tuple[str, str]:
    """The (premise, hypothesis) a view scores."""
    if view == "direct":
        return evidence, claim
    if view == "context":
        return (f"{question} {evidence}" if question else evidence), claim
    if view == "reversed":
        return claim, evidence
    if view == "truncated":
        words = evidence.split()
        return " ".join(words[: max(len(words) // 2, 1)]), claim
    if view == "paraphrase":
        return evidence, f"It is true that {claim[:1].lower()}{claim[1:]}"
    raise ValueError(f"unknown view {view!r}; views: {', '.join(VIEWS)}")


def entailment_votes(engines: Sequence[tuple[str, NLIModel]], evidence: Sequence[Sequence[str]],
                     claims: Sequence[str], questions: Sequence[str | None], views: Sequence[str],
                     entail_at: float = 0.5) -> tuple[np.ndarray, list[str]]:
    """Votes (claims x views) of 1 where a view finds the claim entailed by any of its evidence windows.

    ``engines`` is [(name, model)]: the first runs every prompt view, each further one a ``direct`` view
    (an independent backend). ``questions`` has one entry per claim (the question of the claim's answer, or
    None), so that the claims of many answers are scored in one call per view. Returns the vote matrix and the
    view names.
    """
    names: list[str] = []
    columns: list[np.ndarray] = []
    plan = [(engines[0], view) for view in views] + [(engine, "direct") for engine in engines[1:]]
    for (engine_name, engine), view in plan:
        premises, hypotheses, owner = [], [], []
        for c, (claim, windows, question) in enumerate(zip(claims, evidence, questions)):
            for window in windows:
                premise, hypothesis = view_pair(view, window, claim, question)
                premises.append(premise)
                hypotheses.append(hypothesis)
                owner.append(c)
        probs = engine.score_pairs(premises, hypotheses)[:, ENTAILMENT] if premises else np.zeros(0)
        best = np.zeros(len(claims))
        for row, c in enumerate(owner):
            best[c] = max(best[c], probs[row])
        columns.append((best >= entail_at).astype(float))
        names.append(view if engine is engines[0][1] else f"{view}@{engine_name}")
    return np.stack(columns, axis=1), names


def evidence_type(mass: float, tau: float, tau_prime: float) -> str:
    """Verified / Uncertain / Unsupported from the support mass."""
    if mass >= tau:
        return "Verified"
    if mass <= tau_prime:
        return "Unsupported"
    return "Uncertain"


def kl_bernoulli(p: float, q: float) -> float:
    """KL divergence D(Bernoulli(p) || Bernoulli(q))."""
    eps = 1e-12
    p, q = min(max(p, eps), 1 - eps), min(max(q, eps), 1 - eps)
    return p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))


def exponential_bound(n_views: int, tau: float, alpha: float) -> float:
    """Proposition 1's bound on Pr[m(c) >= tau] for a false claim under independent views: exp(-N D(tau||alpha))."""
    if alpha >= tau:
        return 1.0
    return math.exp(-n_views * kl_bernoulli(tau, alpha))


def error_correlation(errors: np.ndarray) -> float:
    """Mean pairwise Pearson correlation of the views' error indicators (columns); 0 means independent."""
    if errors.shape[1] < 2:
        return 0.0
    keep = errors.std(axis=0) > 0
    if keep.sum() < 2:
        return 0.0
    corr = np.corrcoef(errors[:, keep].T)
    upper = corr[np.triu_indices_from(corr, k=1)]
    return float(np.nanmean(upper))
