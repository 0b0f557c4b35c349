"""Where the signal is lost: one trained judge, step by step, on held-out parts of the shared data (issue 44, item 1).

The trained MiniLM cross-encoder (``models/gj-minilm``, rebuilt by ``bash scripts/train_local_judge.sh``) and the
untrained ``cosine`` baseline are scored on the parts of each set the model never trained on, at four steps:

(a) **pair, oracle evidence**: one claim against the evidence that holds its fact. SummEdits: an inconsistent
    summary's changed sentence (difflib against its closest consistent sibling) and the sibling's sentence it
    replaced, both against the document sentences that best match the *unedited* sentence; ContractNLI: the
    hypothesis against the sentences that overlap its gold evidence spans (Entailment vs Contradiction: the
    only rows that have spans); nli_unseen: the hypothesis against the whole premise.
(b) **pair, selected evidence**: the same pairs, each claim against the evidence the judge selects for it:
    the card's input (its top-2 context sentences by embedding cosine, what ``crossencoder`` builds), the
    ``nli`` judge's selection (top-3 128-token windows of ``local_nli/evidence.py``, max entailment), cosine's
    best sentence.
(c) **claim**: every claim of every answer (the judge's own split, ``local_nli.pairs.claims_of``) whose label is
    known (every claim of a grounded answer; the changed claims of an ungrounded one and its unchanged ones as
    grounded; the one claim of a one-claim answer), against selected evidence.
(d) **answer**: the claims' scores aggregated per answer: min, mean, and a logistic regression on
    [min, mean, max, n_claims], either cross-fitted within the set (fitted on the other fold of documents) or
    fitted on the other sets' answers (transfer); its C is chosen by cross-validation on the rows it is fitted on,
    and it never sees the rows it scores.

ROC AUC is threshold-free; balanced accuracy is at a threshold chosen on the other fold of documents (two folds
by a seeded group hash, cross-fitted: every row is scored with a threshold fitted without its document). 95%
intervals: percentile bootstrap over the rows (``groundjudge.metrics``). Where the same claims recur across
documents (ContractNLI's 17 hypotheses), a row also gives ``by_claim``: the AUC pooled, without the claim with the
most ungrounded rows, and within claims (steps a and b; c and d too where the answers themselves recur, a fixed
checklist): what one threshold per checklist question could reach, against one threshold for all.

Held-out parts: the model's card says it trained only on what ``groundjudge run --dev-fraction F`` calibrates on
(``run_dev_fraction``); the rest (the run's test part: 40% of documents by group hash) is used here, and the
script checks that none of its documents is in the card's train or dev split (it recomputes that split and its
hash). MNLI-mismatched and SNLI (``nli_unseen``) were never trained on; the same 40% part is used.

    GROUNDJUDGE_THREADS=1 python scripts/signal_steps.py [--model models/gj-minilm] [--limit N] [--seed 0]

A model folder with no groundjudge card (an NLI model trained on none of the sets, e.g. a base made by
``scripts/make_bench_nli_model.py --sets mnli_matched``) is scored as a judge by its entailment probability, with
``--run-dev-fraction 0.6`` naming the held-out part (the same answers as the trained judges) and the card input's
embedding evidence; there is no trained split to check, so the caller vouches that none of the sets trained it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from groundjudge.formats.load import assign_missing_splits, dataset_hash, load_examples
from groundjudge.local_nli.pairs import (
    EvidenceIndexes,
    changed_claims,
    claims_of,
    closest_sibling,
    context_sentences,
    document_sentences,
    gold_spans,
    source_group,
)
from groundjudge.local_nli.train_data import group_bucket, split_examples
from groundjudge.metrics import (
    bootstrap_ci,
    classification_metrics,
    fit_threshold,
    ranking_metrics,
    stratified_roc_auc,
)
from groundjudge.types import Example

ROOT = Path(__file__).resolve().parents[1]
SHARED = "../shared/datasets"
SET_FILES: dict[str, list[str]] = {
    "summedits": [f"{SHARED}/summedits/summedits_{d}.json" for d in
                  ("ectsum", "news", "podcast", "qmsumm", "sales_call", "sales_email", "samsum", "scitldr")],
    "contractnli": [f"{SHARED}/contractnli/dev.json"],
    "nli_unseen": [f"{SHARED}/nli_textfooler/mnli_mismatched.tsv", f"{SHARED}/nli_textfooler/snli.tsv"],
}
"""The sets, as paths relative to the repository root (the card names its data the same way)."""

STEPS = {"a": "pair, oracle evidence", "b": "pair, selected evidence", "c": "claim, selected evidence",
         "d_min": "answer, min of claims", "d_mean": "answer, mean of claims",
         "d_lr_in": "answer, LR cross-fitted in set", "d_lr_x": "answer, LR fitted on the other sets"}
"""Step keys and what each scores."""

GROUNDED, UNGROUNDED = "grounded", "ungrounded"
EMBEDDER = "sentence-transformers/all-MiniLM-L6-v2"
"""The sentence embedder of evidence selection and cosine (the packaged copy, as the card's judge uses)."""


# --- the held-out parts ------------------------------------------------------------------------------------------

def held_out(examples: Sequence[Example], run_dev_fraction: float) -> list[Example]:
    """The examples ``groundjudge run --dev-fraction F`` evaluates on (its test part): never trained on by a model
    whose card says ``run_dev_fraction`` F."""
    return [ex for ex in assign_missing_splits(examples, run_dev_fraction) if ex.split == "test" and ex.label]


def trained_groups(card: dict, root: Path = ROOT) -> tuple[set[str], bool]:
    """The groups (documents) of the card's train and dev split, recomputed from its data files, and whether the
    recomputed train part has the card's ``train_examples_hash`` (the same split the model was trained on)."""
    files = list(dict.fromkeys(str(root / item["file"]) for item in card["data"]))   # a mixed run lists a file
    # once as gold data and once as documents
    examples = load_examples(files).examples
    split = card["split"]
    train, dev, _ = split_examples(examples, split["dev_fraction"], split["seed"], split.get("run_dev_fraction"))
    same = dataset_hash(train) == split.get("train_examples_hash")
    return {source_group(ex) for ex in train + dev}, same


def sample(examples: Sequence[Example], limit: int, seed: int) -> list[Example]:
    """At most ``limit`` examples (0: all), drawn with a fixed seed, in their original order."""
    if not limit or len(examples) <= limit:
        return list(examples)
    keep = set(random.Random(seed).sample(range(len(examples)), limit))
    return [ex for i, ex in enumerate(examples) if i in keep]


# --- units: pairs with oracle evidence, claims with labels -----------------------------------------------------------

@dataclass(frozen=True)
class PairUnit:
    """One claim with its label and its oracle evidence (the context sentences that hold its fact)."""

    uid: str
    group: str
    claim: str
    label: str
    oracle: tuple[str, ...]
    example: Example


Indexes = EvidenceIndexes
"""An EvidenceIndex per distinct context, built on first use (the training pairs' own; every caller names the
method: 'tfidf' or 'embedding')."""


def grounded_by_group(examples: Sequence[Example]) -> dict[str, list[Example]]:
    """The grounded examples of each group (the siblings an ungrounded answer is compared with)."""
    out: dict[str, list[Example]] = defaultdict(list)
    for ex in examples:
        if ex.label == GROUNDED:
            out[source_group(ex)].append(ex)
    return out


def sibling_of(example: Example, siblings: dict[str, list[Example]]) -> Example | None:
    """The closest grounded answer of an ungrounded example's group (None for a grounded one or none there)."""
    if example.label != UNGROUNDED:
        return None
    return closest_sibling(example.answer, [s for s in siblings.get(source_group(example), []) if s.id != example.id])


def sibling_pair_units(examples: Sequence[Example], siblings: dict[str, list[Example]], indexes: Indexes,
                       k: int = 2) -> list[PairUnit]:
    """SummEdits-style minimal pairs: each changed claim of an ungrounded answer (ungrounded) and the sibling's
    sentence it replaced (grounded), both with the k context sentences that best match the *unedited* sentence
    (an inserted claim: the claim itself) as oracle evidence."""
    units: list[PairUnit] = []
    seen: set[tuple[str, int]] = set()
    for ex in examples:
        sibling = sibling_of(ex, siblings)
        if sibling is None:
            continue
        index, grounded, claims = indexes.of(ex), claims_of(sibling), claims_of(ex)
        for j, i in changed_claims(grounded, claims):
            anchor = grounded[i] if i is not None else claims[j]
            oracle = tuple(index.sentences[t] for t in index.top(anchor, k))
            units.append(PairUnit(f"{ex.id}#{j}", source_group(ex), claims[j], UNGROUNDED, oracle, ex))
            if i is not None and (sibling.id, i) not in seen:
                seen.add((sibling.id, i))
                units.append(PairUnit(f"{sibling.id}#{i}", source_group(ex), grounded[i], GROUNDED, oracle, sibling))
    return units


def gold_sentences(example: Example) -> tuple[str, ...]:
    """The sentences of the first document that overlap the example's gold evidence spans, in order."""
    doc, spans = example.context[0], gold_spans(example)
    out, cursor = [], 0
    for sentence in document_sentences(doc):
        start = doc.find(sentence, cursor)
        if start < 0:
            continue
        cursor = start + len(sentence)
        if any(start < end and begin < cursor for begin, end in spans):
            out.append(sentence)
    return tuple(out)


def span_pair_units(examples: Sequence[Example]) -> list[PairUnit]:
    """ContractNLI-style pairs: the answer (hypothesis) against its gold evidence sentences; rows without spans
    (NotMentioned) have no oracle evidence and are left out."""
    units = []
    for ex in examples:
        gold = gold_sentences(ex)
        if gold:
            units.append(PairUnit(ex.id, source_group(ex), ex.answer.strip(), ex.label, gold, ex))
    return units


def whole_context_units(examples: Sequence[Example]) -> list[PairUnit]:
    """NLI-style pairs: the answer against its whole (short) context, which is the evidence by construction."""
    return [PairUnit(ex.id, source_group(ex), ex.answer.strip(), ex.label, tuple(context_sentences(ex)), ex)
            for ex in examples]


def claim_labels(example: Example, sibling: Example | None) -> list[str | None]:
    """The label of each claim of an answer, where it is known: all grounded for a grounded answer; for an
    ungrounded one its single claim, or (with a sibling) the changed claims ungrounded and the rest grounded;
    None otherwise."""
    claims = claims_of(example)
    if example.label == GROUNDED:
        return [GROUNDED] * len(claims)
    if len(claims) == 1:
        return [UNGROUNDED]
    changed = {j for j, _ in changed_claims(claims_of(sibling), claims)} if sibling is not None else set()
    if not changed:
        return [None] * len(claims)
    return [UNGROUNDED if j in changed else GROUNDED for j in range(len(claims))]


# --- scorers: each says how well a claim is supported, with oracle or its own evidence ----------------------------

PairFn = Callable[[list[str], list[str]], np.ndarray]
"""(premises, claims) -> support score per pair."""
EmbedFn = Callable[[list[str]], np.ndarray]
"""texts -> unit-length embeddings (n, d)."""


class CardInput:
    """The trained cross-encoder with its card's input: P(entailment) of (top-k context sentences, claim)."""

    def __init__(self, score_pairs: PairFn, indexes: Indexes, k: int = 2) -> None:
        """``score_pairs`` scores (premise, claim) pairs; ``indexes`` ranks context sentences; ``k`` sentences."""
        self.score_pairs, self.indexes, self.k = score_pairs, indexes, k

    def oracle(self, units: Sequence[PairUnit]) -> np.ndarray:
        """Each unit's claim against its oracle sentences."""
        return self.score_pairs([" ".join(u.oracle) for u in units], [u.claim for u in units])

    def picks(self, example: Example, claim: str) -> tuple[str, ...]:
        """The sentences this judge selects for a claim, in document order."""
        index = self.indexes.of(example)
        return tuple(index.sentences[i] for i in index.top(claim, self.k))

    def selected(self, items: Sequence[tuple[Example, str]]) -> np.ndarray:
        """Each claim against the evidence the judge selects for it."""
        return self.score_pairs([" ".join(self.picks(ex, claim)) for ex, claim in items], [c for _, c in items])


class Windows:
    """The trained model as the ``nli`` judge uses a model: max P(entailment) over the claim's top-k windows
    (``local_nli.evidence``, windows of at most ``window_tokens`` tokens ranked by embedding cosine)."""

    oracle = None

    def __init__(self, engine, score_pairs: PairFn, top_k: int = 3, window_tokens: int = 128,
                 embedder: str = EMBEDDER) -> None:
        """``engine``: the loaded NLIModel (its tokenizer sizes the windows); ``embedder`` ranks the windows."""
        self.engine, self.score_pairs, self.top_k, self.window_tokens = engine, score_pairs, top_k, window_tokens
        self.embedder = embedder

    def selected(self, items: Sequence[tuple[Example, str]]) -> np.ndarray:
        """Each claim's max over its top-k windows (windows sized per example, as the judge does)."""
        from groundjudge.judges.nli import claim_windows

        by_example: dict[str, list[int]] = defaultdict(list)
        for row, (ex, _) in enumerate(items):
            by_example[ex.id].append(row)
        premises, claims, owner = [], [], []
        for rows in by_example.values():
            ex, mine = items[rows[0]][0], [items[r][1] for r in rows]
            wins, selection = claim_windows(ex.context, mine, self.engine, self.top_k, self.window_tokens,
                                            "embedding", self.embedder)
            for c, w in selection.pairs:
                premises.append(wins[w].text)
                claims.append(mine[c])
                owner.append(rows[c])
        scores = self.score_pairs(premises, claims)
        out = np.zeros(len(items))
        for row, value in zip(owner, scores):
            out[row] = max(out[row], float(value))
        return out


class Cosine:
    """The untrained ``cosine`` baseline: max cosine of the claim to a sentence of the evidence."""

    def __init__(self, embed: EmbedFn) -> None:
        """``embed`` gives unit-length embeddings; they are cached per text."""
        self.embed = embed
        self._cache: dict[str, np.ndarray] = {}

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            self._cache.update(zip(missing, self.embed(missing)))
        return np.vstack([self._cache[t] for t in texts])

    def best(self, claim: str, sentences: Sequence[str]) -> float:
        """The claim's best cosine to any of the sentences."""
        return float((self._vectors(list(sentences)) @ self._vectors([claim])[0]).max())

    def oracle(self, units: Sequence[PairUnit]) -> np.ndarray:
        """Best cosine to an oracle sentence."""
        return np.array([self.best(u.claim, u.oracle) for u in units])

    def selected(self, items: Sequence[tuple[Example, str]]) -> np.ndarray:
        """Best cosine to any context sentence (the cosine judge's own selection)."""
        return np.array([self.best(claim, context_sentences(ex) or [ex.context_text]) for ex, claim in items])


# --- metrics: cross-fitted thresholds and aggregators ----------------------------------------------------------------

def folds_of(groups: Sequence[str], seed: int) -> np.ndarray:
    """Two folds by a seeded hash of the group (document): no document is in both."""
    return np.array([0 if group_bucket(g, seed) < 0.5 else 1 for g in groups], dtype=int)


def crossfit_labels(scores: np.ndarray, labels: Sequence[str], folds: np.ndarray) -> tuple[list[str], list[float]]:
    """Each row decided with a threshold fitted (``fit_threshold``) on the other fold only; a fold whose other
    fold holds one class only abstains. Returns (predicted labels, the two thresholds; NaN where none)."""
    labels = np.asarray(labels)
    predicted = np.full(len(labels), "abstain", dtype=object)
    thresholds = []
    for fold in (0, 1):
        fit, apply = folds != fold, folds == fold
        if len(set(labels[fit])) < 2 or not apply.any():
            thresholds.append(float("nan"))
            continue
        threshold, _ = fit_threshold(list(scores[fit]), list(labels[fit]))
        thresholds.append(threshold)
        predicted[apply] = np.where(scores[apply] >= threshold, GROUNDED, UNGROUNDED)
    return list(predicted), thresholds


def make_aggregator(seed: int):
    """A logistic regression on standardised features, its C chosen by 3-fold cross-validation on its fit rows."""
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegressionCV(Cs=10, cv=3, random_state=seed))


def crossfit_scores(features: np.ndarray, labels: Sequence[str], folds: np.ndarray,
                    make: Callable[[], object]) -> np.ndarray:
    """P(grounded) of each row from a model fitted on the other fold only (NaN where it cannot be fitted)."""
    y = (np.asarray(labels) == GROUNDED).astype(int)
    out = np.full(len(y), np.nan)
    for fold in (0, 1):
        fit, apply = folds != fold, folds == fold
        if len(set(y[fit])) < 2 or min(np.bincount(y[fit])) < 3 or not apply.any():
            continue
        out[apply] = make().fit(features[fit], y[fit]).predict_proba(features[apply])[:, 1]
    return out


def transfer_scores(fit_features: np.ndarray, fit_labels: Sequence[str], features: np.ndarray,
                    make: Callable[[], object]) -> np.ndarray:
    """P(grounded) of each row from a model fitted on other rows (another set's answers)."""
    y = (np.asarray(fit_labels) == GROUNDED).astype(int)
    return make().fit(fit_features, y).predict_proba(features)[:, 1]


def answer_features(claim_scores: Sequence[Sequence[float]]) -> np.ndarray:
    """[min, mean, max, n_claims] per answer."""
    return np.array([[min(s), float(np.mean(s)), max(s), len(s)] for s in claim_scores], dtype=float)


def summarize(labels: Sequence[str], scores: np.ndarray, folds: np.ndarray, seed: int, n_boot: int,
              tau: float | None = None) -> dict:
    """n, ROC AUC and balanced accuracy (cross-fitted threshold) with 95% bootstrap intervals; with ``tau`` also
    the balanced accuracy at that fixed threshold (the model card's, fitted without these rows' labels)."""
    scores = np.asarray(scores, dtype=float)
    keep = ~np.isnan(scores)
    labels, scores, folds = [lab for lab, k in zip(labels, keep) if k], scores[keep], folds[keep]
    out = {"n": len(labels), "n_grounded": labels.count(GROUNDED), "n_ungrounded": labels.count(UNGROUNDED)}
    if len(set(labels)) < 2:
        return {**out, "note": "one class only"}
    ranking = ranking_metrics(labels, list(scores), n_boot=n_boot, seed=seed)
    predicted, thresholds = crossfit_labels(scores, labels, folds)
    out.update(roc_auc=ranking.roc_auc, roc_auc_ci95=ranking.roc_auc_ci95, thresholds=thresholds,
               balanced_accuracy=classification_metrics(labels, predicted)["balanced_accuracy"],
               balanced_accuracy_ci95=bootstrap_ci(labels, predicted, ("balanced_accuracy",), n_boot,
                                                   seed)["balanced_accuracy"],
               abstained=predicted.count("abstain"))
    if tau is not None:
        at_tau = [GROUNDED if value >= tau else UNGROUNDED for value in scores]
        out.update(tau=tau, balanced_accuracy_at_tau=classification_metrics(labels, at_tau)["balanced_accuracy"],
                   balanced_accuracy_at_tau_ci95=bootstrap_ci(labels, at_tau, ("balanced_accuracy",), n_boot,
                                                              seed)["balanced_accuracy"])
    return out


# --- one set, every step -----------------------------------------------------------------------------------------

@dataclass
class SetData:
    """One set's sampled answers, pair units and claim items."""

    name: str
    answers: list[Example]
    units: list[PairUnit]
    items: list[tuple[Example, str]]
    item_answer: list[int]
    item_labels: list[str | None]


def build_set(name: str, pool: Sequence[Example], answers: Sequence[Example], indexes: Indexes) -> SetData:
    """Pair units (oracle evidence as the set allows) and every claim of the sampled answers."""
    siblings = grounded_by_group(pool)
    if name == "summedits":
        units = sibling_pair_units(answers, siblings, indexes)
    elif name == "contractnli":
        units = span_pair_units(answers)
    else:
        units = whole_context_units(answers)
    items, owner, labels = [], [], []
    for a, ex in enumerate(answers):
        claims = claims_of(ex)
        items += [(ex, c) for c in claims]
        owner += [a] * len(claims)
        labels += claim_labels(ex, sibling_of(ex, siblings))
    return SetData(name, list(answers), units, items, owner, labels)


def step_scores(data: SetData, scorers: dict[str, object]) -> dict[str, dict[str, np.ndarray]]:
    """Per scorer: 'a' (oracle pairs), 'b' (the same pairs, selected evidence), 'claims' (every claim item)."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for name, scorer in scorers.items():
        mine = {}
        if getattr(scorer, "oracle", None) is not None:
            mine["a"] = scorer.oracle(data.units)
        mine["b"] = scorer.selected([(u.example, u.claim) for u in data.units])
        mine["claims"] = scorer.selected(data.items)
        out[name] = mine
    return out


def answer_claim_scores(data: SetData, claim_scores: np.ndarray) -> list[list[float]]:
    """The scores of each answer's claims."""
    per: list[list[float]] = [[] for _ in data.answers]
    for a, value in zip(data.item_answer, claim_scores):
        per[a].append(float(value))
    return per


def evidence_recall(data: SetData, card: CardInput) -> dict:
    """How often the card input's selection holds the oracle evidence (any / all of it), per label."""
    out = {}
    for label in (GROUNDED, UNGROUNDED):
        mine = [u for u in data.units if u.label == label]
        picks = [set(card.picks(u.example, u.claim)) for u in mine]
        out[label] = {"n": len(mine),
                      "any": float(np.mean([bool(p & set(u.oracle)) for p, u in zip(picks, mine)])) if mine else None,
                      "all": float(np.mean([set(u.oracle) <= p for p, u in zip(picks, mine)])) if mine else None}
    return out


def recurring(strata: Sequence[str]) -> bool:
    """Whether the rows are a checklist: each claim recurs on average (at most half as many distinct claims as
    rows), not a few repeated sentences among distinct ones (SummEdits' siblings share some)."""
    return 2 * len(set(strata)) <= len(strata)


def per_claim_crossfit(scores: np.ndarray, labels: Sequence[str], folds: np.ndarray, strata: Sequence[str],
                       shared: Sequence[str] | None = None) -> list[str]:
    """Each row decided with a threshold fitted on the other fold's rows *of its own claim*; where those hold one
    class only, the threshold fitted on the other fold's rows of every claim (``shared``: those decisions, when
    already made by :func:`crossfit_labels`)."""
    labels, strata = np.asarray(labels), np.asarray(strata)
    if shared is None:
        shared = crossfit_labels(scores, list(labels), folds)[0]
    predicted = np.array(shared, dtype=object)
    for claim in np.unique(strata):
        mine = strata == claim
        for fold in (0, 1):
            fit, apply = mine & (folds != fold), mine & (folds == fold)
            if apply.any() and len(set(labels[fit])) == 2:
                threshold, _ = fit_threshold(list(scores[fit]), list(labels[fit]))
                predicted[apply] = np.where(scores[apply] >= threshold, GROUNDED, UNGROUNDED)
    return list(predicted)


def by_stratum(labels: Sequence[str], scores: np.ndarray, strata: Sequence[str],
               folds: np.ndarray | None = None) -> dict:
    """ROC AUC pooled, without the claim with the most ungrounded rows, within claims and pooled over per-claim
    quantiles (:func:`groundjudge.metrics.stratified_roc_auc`, grounded ranked above ungrounded as in the rows);
    with ``folds``, balanced accuracy at one cross-fitted threshold and at a cross-fitted threshold per claim
    (labels of the other fold's rows of the same claim). Unscored pairs left out."""
    keep = [i for i, value in enumerate(scores) if not np.isnan(value)]
    out = stratified_roc_auc([labels[i] == GROUNDED for i in keep], [float(scores[i]) for i in keep],
                             [strata[i] for i in keep])
    if folds is not None:
        kept_labels = [labels[i] for i in keep]
        kept_scores, kept_folds = np.asarray([scores[i] for i in keep], dtype=float), folds[keep]
        one = crossfit_labels(kept_scores, kept_labels, kept_folds)[0]
        per_claim = per_claim_crossfit(kept_scores, kept_labels, kept_folds, [strata[i] for i in keep], one)
        out.update(balanced_accuracy_one_threshold=classification_metrics(kept_labels, one)["balanced_accuracy"],
                   balanced_accuracy_per_claim_threshold=classification_metrics(kept_labels,
                                                                                per_claim)["balanced_accuracy"])
    return out


def set_rows(data: SetData, scores: dict[str, dict[str, np.ndarray]], seed: int, n_boot: int,
             taus: dict[str, float] | None = None) -> list[dict]:
    """The step rows a-d (LR transfer comes later, across sets) of every scorer on one set; a scorer in ``taus``
    also gets its balanced accuracy at that fixed threshold on the rows it scores directly (not the LR's)."""
    rows = []
    unit_labels, unit_folds = [u.label for u in data.units], folds_of([u.group for u in data.units], seed)
    known = [i for i, lab in enumerate(data.item_labels) if lab is not None]
    claim_labels_, claim_folds = ([data.item_labels[i] for i in known],
                                  folds_of([source_group(data.items[i][0]) for i in known], seed))
    answer_labels = [ex.label for ex in data.answers]
    answer_folds = folds_of([source_group(ex) for ex in data.answers], seed)
    strata = [u.claim for u in data.units]
    repeated = recurring(strata)         # the same claims across answers: ContractNLI's 17 hypotheses
    answer_strata = [ex.answer for ex in data.answers]     # a ContractNLI answer is its hypothesis: a checklist
    answers_repeat = recurring(answer_strata)
    claim_strata = [data.items[i][1] for i in known]
    for name, mine in scores.items():
        def row(step: str, labels, values, folds, name: str = name, **extra) -> None:
            tau = (taus or {}).get(name) if not step.startswith("d_lr") else None
            rows.append({"set": data.name, "step": step, "scorer": name,
                         **summarize(labels, np.asarray(values, dtype=float), folds, seed, n_boot, tau), **extra})
        for step in ("a", "b"):
            if step in mine:
                by_claim = ({"by_claim": by_stratum(unit_labels, mine[step], strata, unit_folds)} if repeated
                            else {})
                row(step, unit_labels, mine[step], unit_folds, **by_claim)
        claim_values = mine["claims"][known]
        row("c", claim_labels_, claim_values, claim_folds,
            **({"by_claim": by_stratum(claim_labels_, claim_values, claim_strata, claim_folds)} if answers_repeat
               else {}))
        features = answer_features(answer_claim_scores(data, mine["claims"]))
        for step, column in (("d_min", 0), ("d_mean", 1)):
            row(step, answer_labels, features[:, column], answer_folds,
                **({"by_claim": by_stratum(answer_labels, features[:, column], answer_strata, answer_folds)}
                   if answers_repeat else {}))
        row("d_lr_in", answer_labels, crossfit_scores(features, answer_labels, answer_folds,
                                                      lambda: make_aggregator(seed)), answer_folds)
    return rows


def transfer_rows(sets: Sequence[SetData], scores: dict[str, dict[str, dict[str, np.ndarray]]], seed: int,
                  n_boot: int) -> list[dict]:
    """Step d_lr_x: the aggregator fitted on the answers of every other set, applied to this one."""
    rows = []
    scorers = next(iter(scores.values())).keys() if scores else []
    for name in scorers:
        feats = {d.name: answer_features(answer_claim_scores(d, scores[d.name][name]["claims"])) for d in sets}
        labels = {d.name: [ex.label for ex in d.answers] for d in sets}
        for d in sets:
            others = [o.name for o in sets if o.name != d.name]
            if not others:
                continue
            fit_x = np.vstack([feats[o] for o in others])
            fit_y = [lab for o in others for lab in labels[o]]
            values = transfer_scores(fit_x, fit_y, feats[d.name], lambda: make_aggregator(seed))
            rows.append({"set": d.name, "step": "d_lr_x", "scorer": name, "fitted_on": others,
                         **summarize(labels[d.name], values, folds_of([source_group(e) for e in d.answers], seed),
                                     seed, n_boot)})
    return rows


# --- the table -----------------------------------------------------------------------------------------------------

def _cell(row: dict | None) -> str:
    if row is None:
        return "—"
    if row.get("roc_auc") is None:
        return row.get("note", "—")
    auc, ci = row["roc_auc"], row["roc_auc_ci95"]
    bacc, bci = row["balanced_accuracy"], row["balanced_accuracy_ci95"]
    text = f"{auc:.3f} [{ci[0]:.2f}, {ci[1]:.2f}] / {bacc:.3f} [{bci[0]:.2f}, {bci[1]:.2f}]"
    if row.get("balanced_accuracy_at_tau") is not None:
        tci = row["balanced_accuracy_at_tau_ci95"]
        text += f" / at tau {row['balanced_accuracy_at_tau']:.3f} [{tci[0]:.2f}, {tci[1]:.2f}]"
    return text


def table(rows: Sequence[dict], scorers: Sequence[str]) -> str:
    """One markdown row per set and step: n (grounded / ungrounded), then AUC / balanced accuracy per scorer."""
    index = {(r["set"], r["step"], r["scorer"]): r for r in rows}
    sets = list(dict.fromkeys(r["set"] for r in rows))
    lines = ["| set | step | n (grounded / ungrounded) | " + " | ".join(scorers) + " |",
             "|---|---|---|" + "---|" * len(scorers)]
    for name in sets:
        for step, what in STEPS.items():
            mine = [index.get((name, step, s)) for s in scorers]
            first = next((r for r in mine if r), None)
            if first is None:
                continue
            n = f"{first['n']} ({first['n_grounded']} / {first['n_ungrounded']})"
            lines.append(f"| {name} | {step.split('_')[0]}: {what} | {n} | " + " | ".join(_cell(r) for r in mine)
                         + " |")
    return "\n".join(lines)


# --- main ------------------------------------------------------------------------------------------------------------

def real_scorers(model: str, indexes: Indexes, embedder_name: str = EMBEDDER) -> dict[str, object]:
    """The trained model with the card's input and with the nli judge's windows, and cosine; ``embedder_name``
    selects the evidence (both ways) and is cosine's model."""
    from tqdm import tqdm

    from groundjudge.judges.crossencoder import CrossEncoderJudge
    from groundjudge.local_nli.model import load_embedder
    from groundjudge.local_nli.nli_model import ENTAILMENT

    engine = CrossEncoderJudge(model=model).engine()
    embedder = load_embedder(embedder_name)

    def embed(texts: list[str]) -> np.ndarray:
        return embedder.encode(list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                               show_progress_bar=False)

    def score_pairs(premises: list[str], claims: list[str]) -> np.ndarray:
        out = []
        for start in tqdm(range(0, len(premises), 128), desc="pairs", unit="x128", leave=False, file=sys.stderr):
            chunk = slice(start, start + 128)
            out.append(engine.score_pairs(premises[chunk], claims[chunk])[:, ENTAILMENT])
        return np.concatenate(out) if out else np.zeros(0)

    card_name = f"{Path(model).name} (card input: top-2 sentences)"
    return {card_name: CardInput(score_pairs, indexes),
            f"{Path(model).name} (nli windows: top-3 x 128 tokens, max)": Windows(engine, score_pairs,
                                                                                  embedder=embedder_name),
            "cosine (untrained)": Cosine(embed)}


def load_card(card_file: Path, run_dev_fraction: float | None) -> dict:
    """The model's groundjudge card; for a folder with none (an NLI model trained on none of the sets), a stand-in
    that names only the held-out split (``run_dev_fraction``) and the card input's embedding evidence, with no data
    (no trained groups to check). ValueError when the card is missing and no fraction is given, or both are."""
    if card_file.is_file():
        if run_dev_fraction is not None:
            raise ValueError("--run-dev-fraction is only for a model with no groundjudge_card.json; "
                             "this one's card names its own")
        return json.loads(card_file.read_text(encoding="utf-8"))
    if run_dev_fraction is None or not 0 < run_dev_fraction < 1:
        raise ValueError("no groundjudge_card.json: give --run-dev-fraction F (0 < F < 1; 0.6 as the trained "
                         "judges) to score a model trained on none of these sets")
    return {"split": {"run_dev_fraction": run_dev_fraction}, "evidence": "embedding", "data": []}


def main(argv: Sequence[str] | None = None) -> int:
    """Score every step on every set, write the JSON and the markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="models/gj-minilm", help="a model folder written by groundjudge train")
    parser.add_argument("--limit", type=int, default=0, help="answers per set, sampled with --seed (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--sets", default=",".join(SET_FILES), help="comma-separated: " + ", ".join(SET_FILES))
    parser.add_argument("--out", default="results/models/signal_steps.json")
    parser.add_argument("--table", default="results/models/signal_steps.md")
    parser.add_argument("--run-dev-fraction", type=float, metavar="F",
                        help="only for a model folder with no groundjudge card (an NLI model trained on none of "
                             "these sets, e.g. from scripts/make_bench_nli_model.py --sets mnli_matched): score the "
                             "part `groundjudge run --dev-fraction F` leaves for test, with the card input's "
                             "embedding evidence (0.6: the same answers as the trained judges)")
    parser.add_argument("--embedder", default=EMBEDDER, metavar="NAME|DIR",
                        help="the sentence embedder of evidence selection (card input and nli windows) and of the "
                             f"cosine baseline (default {EMBEDDER}, the packaged copy)")
    args = parser.parse_args(argv)
    chosen = [s.strip() for s in args.sets.split(",") if s.strip()]
    if unknown := [s for s in chosen if s not in SET_FILES]:
        parser.error(f"--sets: unknown {', '.join(unknown)}; known: {', '.join(SET_FILES)}")
    model_dir = Path(args.model) if Path(args.model).is_absolute() else ROOT / args.model
    card_file = model_dir / "groundjudge_card.json"
    if not (model_dir / "config.json").is_file():
        parser.error(f"--model: {args.model} is not a model folder (no config.json; "
                     "bash scripts/train_local_judge.sh rebuilds models/gj-minilm)")
    try:
        card = load_card(card_file, args.run_dev_fraction)
    except ValueError as err:
        parser.error(f"--model: {args.model}: {err}")
    started = time.perf_counter()
    seen, same_split = trained_groups(card) if card["data"] else (set(), None)
    embedder = args.embedder if args.embedder == EMBEDDER or Path(args.embedder).is_absolute() \
        or not (ROOT / args.embedder).is_dir() else str(ROOT / args.embedder)
    indexes = Indexes(card.get("evidence", "tfidf"), embedder)
    scorers = real_scorers(str(model_dir), indexes, embedder)
    taus = {next(iter(scorers)): float(card["tau"])} if card.get("tau") is not None else {}
    sets, scores, rows, info = [], {}, [], {}
    for name in chosen:
        loaded = load_examples([str(ROOT / f) for f in SET_FILES[name]])
        pool = held_out(loaded.examples, card["split"]["run_dev_fraction"])
        leaked = sorted({source_group(ex) for ex in pool} & seen)
        if leaked:
            raise SystemExit(f"{name}: {len(leaked)} held-out documents are in the model's training split")
        answers = sample(pool, args.limit, args.seed)
        data = build_set(name, pool, answers, indexes)
        print(f"{name}: {len(answers)} answers, {len(data.units)} oracle pairs, {len(data.items)} claims",
              file=sys.stderr)
        scores[name] = step_scores(data, scorers)
        rows += set_rows(data, scores[name], args.seed, args.n_boot, taus)
        card_scorer = next(iter(scorers.values()))
        info[name] = {"files": SET_FILES[name], "held_out_answers": len(pool), "answers": len(answers),
                      "documents": len({source_group(ex) for ex in answers}), "oracle_pairs": len(data.units),
                      "claims": len(data.items), "claims_labelled": sum(x is not None for x in data.item_labels),
                      "evidence_recall_card_input": evidence_recall(data, card_scorer)}
        sets.append(data)
    rows += transfer_rows(sets, scores, args.seed, args.n_boot)
    names = list(scorers)
    result = {
        "what": "issue 44 item 1: where the signal is lost, step by step (see scripts/signal_steps.py)",
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": "GROUNDJUDGE_THREADS={} python scripts/signal_steps.py {}".format(
            os.environ.get("GROUNDJUDGE_THREADS", ""), " ".join(argv if argv is not None else sys.argv[1:])).strip(),
        "embedder": args.embedder,
        "model": {"path": args.model, "card": card_file.is_file(), "base": card.get("base"),
                  "trained": card.get("date"),
                  "data": [d["file"] for d in card["data"]], "nli_mix": card.get("nli_mix"),
                  "run_dev_fraction": card["split"]["run_dev_fraction"],
                  "train_split_matches_card": same_split, "tau": card.get("tau")},
        "machine": {"cpus": os.cpu_count(), "threads": os.environ.get("GROUNDJUDGE_THREADS"),
                    "python": platform.python_version(), "platform": platform.machine()},
        "seed": args.seed, "limit": args.limit, "n_boot": args.n_boot, "steps": STEPS, "scorers": names,
        "sets": info, "rows": rows, "wall_s": round(time.perf_counter() - started, 1)}
    out = ROOT / args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    text = table(rows, names)
    (ROOT / args.table).write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
