"""Per gold error type figures of one judge: which error types it catches, and how well it names them.

Computed from the records alone (``groundjudge.runs.summary`` puts them in each judge's summary):

* ``per_error_type``: per gold type, the ungrounded answers of that type (``n``), how many the judge called
  grounded (``missed``) or abstained on, and ``miss_rate`` (missed / n; abstentions are not misses here).
* ``error_type_recall``: per gold type, the share of those answers the judge called **ungrounded** (abstentions
  count as not caught), with its Wilson 95% interval (:func:`groundjudge.runs.injection.rate`).
* ``most_missed_type``: the gold type with the lowest recall among the types with at least
  :data:`MIN_TYPE_N` answers (ties: the type with more answers, then by name); None when no type has that many.
* For judges that type errors (an error-types judge, also inside a cascade or fallback): the types they gave
  (``predicted_error_types``), the share of typed answers whose types include a gold one
  (``error_type_accuracy``), and ``error_typing``: the confusion matrix of the typing over the judge's taxonomy,
  with per-type precision / recall / F1 and their macro-F1 (scikit-learn), see :func:`typing_confusion`.

An answer may carry several gold types; it then counts once under each of them in the per-type figures.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from groundjudge.runs.injection import rate
from groundjudge.types import ResultRecord

MIN_TYPE_N = 5
"""Fewest answers of a gold type for it to be named the judge's most missed type."""

NO_TYPE = "none"
"""The predicted type of an answer the judge called grounded, abstained on, or left untyped."""


def predicted_error_types(record: ResultRecord) -> list[str]:
    """Error types the judge gave to the claims of one answer."""
    return [c.error_type for c in record.result.verdict.claims if c.error_type]


def lead_claim(claims: Sequence[Any]) -> Any | None:
    """The least-supported typed unsupported claim: the lowest support score when every such claim has one (the
    first of equal scores), else the first in the answer; None when no unsupported claim is typed."""
    typed = [c for c in claims if c.error_type and c.label != "supported"]
    if not typed:
        return None
    if all(c.score is not None for c in typed):
        return min(typed, key=lambda c: c.score)   # min keeps the first of equal scores
    return typed[0]


def lead_error_type(claims: Sequence[Any]) -> str | None:
    """The type of the least-supported typed unsupported claim (:func:`lead_claim`); None when no unsupported
    claim is typed.

    Where a detector scores each sentence, its lowest-scored sentence is where the error most likely is: on the
    51 hand-written legal QA test answers the local error-types judge's lowest-scored typed sentence is the one the
    error altered in 14 of 44 answers with ``detector=quip``, its first typed sentence in 7
    (results/legal_types/local_head)."""
    lead = lead_claim(claims)
    return None if lead is None else lead.error_type


def answer_error_type(record: ResultRecord) -> str:
    """The judge's error type for one answer: the type of its least-supported typed unsupported claim
    (:func:`lead_error_type`), or ``"none"`` when the judge called the answer grounded, abstained, or typed no
    claim of it."""
    if record.result.verdict.label != "ungrounded":
        return NO_TYPE
    return lead_error_type(record.result.verdict.claims) or NO_TYPE


def typed_ungrounded(labelled: list[ResultRecord]) -> list[ResultRecord]:
    """The gold-ungrounded answers that carry gold error types."""
    return [r for r in labelled if r.example.label == "ungrounded" and r.example.error_types]


def miss_counts(typed: list[ResultRecord]) -> dict[str, dict[str, Any]]:
    """Per gold type (sorted): ``n``, ``missed`` (judged grounded), ``abstained`` and ``miss_rate``."""
    per_type: dict[str, dict[str, Any]] = {}
    for record in typed:
        for kind in record.example.error_types:
            row = per_type.setdefault(kind, {"n": 0, "missed": 0, "abstained": 0})
            row["n"] += 1
            row["missed"] += record.result.verdict.label == "grounded"
            row["abstained"] += record.result.verdict.label == "abstain"
    for row in per_type.values():
        row["miss_rate"] = row["missed"] / row["n"]
    return dict(sorted(per_type.items()))


def type_recall(typed: list[ResultRecord]) -> dict[str, dict[str, Any]]:
    """Per gold type (sorted): the answers of that type judged ungrounded as a rate (``k`` caught of ``n``,
    ``rate`` = recall, ``ci95`` = Wilson 95% interval), with ``abstained`` (abstentions are not caught)."""
    caught: Counter[str] = Counter()
    total: Counter[str] = Counter()
    abstained: Counter[str] = Counter()
    for record in typed:
        for kind in record.example.error_types:
            total[kind] += 1
            caught[kind] += record.result.verdict.label == "ungrounded"
            abstained[kind] += record.result.verdict.label == "abstain"
    return {kind: {**rate(caught[kind], total[kind]), "abstained": abstained[kind]} for kind in sorted(total)}


def most_missed_type(recall: dict[str, dict[str, Any]], min_n: int = MIN_TYPE_N) -> str | None:
    """The gold type with the lowest recall among those with at least ``min_n`` answers; of equal recalls the one
    with more answers (the firmer figure), then the first by name. None when no type has ``min_n`` answers."""
    eligible = [(row["rate"], -row["n"], kind) for kind, row in recall.items() if row["n"] >= min_n]
    return min(eligible)[2] if eligible else None


def typing_confusion(labelled: list[ResultRecord], taxonomy: frozenset[str]) -> dict[str, Any] | None:
    """How well the judge names the error: gold type × the judge's type of the answer (:func:`answer_error_type`),
    on the gold-ungrounded answers whose gold type is in ``taxonomy``.

    An answer with several gold types gets one row: the gold type the judge named if it named one, else its first
    gold type in the taxonomy. Returns ``n``, ``types`` (the taxonomy, sorted: the rows), ``predicted`` (the
    columns: the types, any type given from outside the taxonomy, then ``"none"``), ``confusion`` (gold →
    predicted → count, every row and column present), ``per_type`` (precision, recall, F1, support of each type
    that is a gold or a predicted type; ``"none"`` is never a class, only a miss of the gold one), ``macro_f1``
    (their mean), ``accuracy`` (answers typed as their gold type) and ``n_none`` (answers given no type). None when
    no answer has a gold type from the taxonomy."""
    from sklearn.metrics import confusion_matrix, precision_recall_fscore_support

    gold, predicted = [], []
    for record in typed_ungrounded(labelled):
        inside = [t for t in record.example.error_types if t in taxonomy]
        if not inside:
            continue
        given = answer_error_type(record)
        gold.append(given if given in inside else inside[0])
        predicted.append(given)
    if not gold:
        return None
    types = sorted(taxonomy)
    columns = types + sorted(set(predicted) - set(types) - {NO_TYPE}) + [NO_TYPE]
    matrix = confusion_matrix(gold, predicted, labels=columns)
    classes = [t for t in columns if t != NO_TYPE and (t in gold or t in predicted)]
    precision, recall, f1, support = precision_recall_fscore_support(gold, predicted, labels=classes,
                                                                     zero_division=0)
    per_type = {kind: {"precision": float(p), "recall": float(r), "f1": float(f), "support": int(s)}
                for kind, p, r, f, s in zip(classes, precision, recall, f1, support)}
    return {
        "n": len(gold),
        "types": types,
        "predicted": columns,
        "confusion": {g: {p: int(matrix[i, j]) for j, p in enumerate(columns)} for i, g in enumerate(columns)
                      if g in types},
        "per_type": per_type,
        "macro_f1": float(sum(row["f1"] for row in per_type.values()) / len(per_type)),
        "accuracy": sum(g == p for g, p in zip(gold, predicted)) / len(gold),
        "n_none": predicted.count(NO_TYPE),
    }


def error_type_summary(labelled: list[ResultRecord], taxonomy: frozenset[str] | None = None) -> dict[str, Any]:
    """A judge's per error type figures (see the module's docstring) on its labelled answers. With the judge's
    ``taxonomy`` known, the typing is scored only on answers whose gold types come from it: gold types of another
    scheme (SummEdits' edit kinds) cannot match and would read as a 0% match."""
    out: dict[str, Any] = {}
    typed = typed_ungrounded(labelled)
    if typed:
        out["per_error_type"] = miss_counts(typed)
        out["error_type_recall"] = type_recall(typed)
        out["most_missed_type"] = most_missed_type(out["error_type_recall"])
    predicted = Counter(t for r in labelled for t in predicted_error_types(r))
    if predicted:
        out["predicted_error_types"] = dict(predicted.most_common())
        scored = [r for r in typed if predicted_error_types(r)]
        if taxonomy is not None:
            outside = [r for r in scored if not set(r.example.error_types) & taxonomy]
            scored = [r for r in scored if set(r.example.error_types) & taxonomy]
            if outside:
                out["error_type_gold_outside_taxonomy"] = len(outside)
        if scored:
            out["error_type_accuracy"] = sum(bool(set(predicted_error_types(r)) & set(r.example.error_types))
                                             for r in scored) / len(scored)
            out["error_type_accuracy_n"] = len(scored)
    if taxonomy is not None:
        typing = typing_confusion(labelled, taxonomy)
        if typing is not None:
            out["error_typing"] = typing
    return out
