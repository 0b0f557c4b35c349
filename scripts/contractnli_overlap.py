"""Why might ContractNLI's oracle pairs score below chance? Two properties of the data, no model (not a test).

For every Entailment and Contradiction annotation of a ContractNLI file (the hypothesis against the sentences of
its gold evidence spans, the pairs of step (a) in ``scripts/signal_steps.py``):

* **word overlap**: the share of the hypothesis's content words (scikit-learn's English stop words removed) that
  occur in its evidence -- a scorer that measures relatedness ranks the pairs by something like it;
* **negation in the evidence**: the share of evidence texts with a negation word;
* **hypotheses**: how the Contradiction rows spread over the 17 hypotheses, and the overlap per hypothesis and
  label where a hypothesis has both;
* with ``--cosine``: ROC AUC (Entailment as the positive class) of the untrained embedding cosine between the
  hypothesis and its evidence (the packaged all-MiniLM-L6-v2 through groundjudge's embedder) and of the word
  overlap, over all pairs, without the most contradicted hypothesis, and within each hypothesis with both labels
  (the mean of their AUCs, weighted by pairs): how much of a pooled figure is the mix of hypotheses.

    python scripts/contractnli_overlap.py ../shared/datasets/contractnli/dev.json [--cosine] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

NEGATION = re.compile(r"\b(not|no|never|nothing|neither|nor|without|none)\b", re.IGNORECASE)
LABELS = ("Entailment", "Contradiction")


def content_words(text: str) -> set[str]:
    """The lower-cased words of ``text`` that are not English stop words."""
    return {w for w in re.findall(r"[a-z]+", text.lower()) if w not in ENGLISH_STOP_WORDS}


def overlap(hypothesis: str, evidence: str) -> float:
    """Share of the hypothesis's content words found in the evidence (0 when it has none)."""
    words = content_words(hypothesis)
    return len(words & content_words(evidence)) / len(words) if words else 0.0


def pairs_of(data: dict) -> list[tuple[str, str, str, str]]:
    """(hypothesis key, label, hypothesis, gold evidence text) of every Entailment / Contradiction annotation."""
    out = []
    for document in data["documents"]:
        for key, annotation in document["annotation_sets"][0]["annotations"].items():
            if annotation["choice"] in LABELS:
                evidence = " ".join(document["text"][slice(*document["spans"][s])] for s in annotation["spans"])
                out.append((key, annotation["choice"], data["labels"][key]["hypothesis"], evidence))
    return out


def aucs(pairs: list[tuple[str, str, str, str]], scores: list[float]) -> dict:
    """ROC AUC of ``scores`` (Entailment positive) pooled, without the most contradicted hypothesis and within
    hypotheses (:func:`groundjudge.metrics.stratified_roc_auc`), rounded."""
    from groundjudge.metrics import stratified_roc_auc

    out = stratified_roc_auc([p[1] == "Entailment" for p in pairs], scores, [p[0] for p in pairs])
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}


def cosine_scores(pairs: list[tuple[str, str, str, str]]) -> list[float]:
    """Cosine of each hypothesis and its evidence by the default embedder (unit vectors: a dot product)."""
    from groundjudge.local_nli.embedder import embed

    hypotheses, evidence = embed([p[2] for p in pairs]), embed([p[3] for p in pairs])
    return [float(h @ e) for h, e in zip(hypotheses, evidence)]


def measure(data: dict) -> dict:
    """The figures of the module docstring for one ContractNLI file's parsed JSON."""
    by_label: dict[str, list[float]] = {label: [] for label in LABELS}
    negated: Counter = Counter()
    per_hypothesis: dict[str, dict[str, list[float]]] = defaultdict(lambda: {label: [] for label in LABELS})
    for key, label, hypothesis, evidence in pairs_of(data):
        value = overlap(hypothesis, evidence)
        by_label[label].append(value)
        per_hypothesis[key][label].append(value)
        negated[label] += bool(NEGATION.search(evidence))
    return {
        "pairs": {label: len(values) for label, values in by_label.items()},
        "overlap_mean": {label: round(statistics.mean(v), 3) for label, v in by_label.items() if v},
        "overlap_median": {label: round(statistics.median(v), 3) for label, v in by_label.items() if v},
        "evidence_with_negation": {label: round(negated[label] / len(v), 3) for label, v in by_label.items() if v},
        "contradictions_by_hypothesis": dict(Counter({key: len(v["Contradiction"])
                                                      for key, v in per_hypothesis.items()}).most_common()),
        "both_labels": {key: {"description": data["labels"][key]["short_description"],
                              **{label: {"n": len(v[label]), "overlap_mean": round(statistics.mean(v[label]), 3)}
                                 for label in LABELS}}
                        for key, v in sorted(per_hypothesis.items()) if all(v[label] for label in LABELS)},
    }


def main() -> int:
    """Read the file, print the figures, save them with ``--json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="a ContractNLI JSON file (dev.json)")
    parser.add_argument("--cosine", action="store_true", help="also the AUCs of untrained cosine and word overlap")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    data = json.loads(args.data.read_text(encoding="utf-8"))
    figures = {"data": f"contractnli/{args.data.name}", **measure(data)}
    if args.cosine:
        pairs = pairs_of(data)
        figures["roc_auc"] = {"word_overlap": aucs(pairs, [overlap(p[2], p[3]) for p in pairs]),
                              "cosine_all_minilm_l6_v2": aucs(pairs, cosine_scores(pairs))}
    text = json.dumps(figures, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
