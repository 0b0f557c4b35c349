"""Pick the cascade's local judge and its escalation band from a committed local run, on dev data only.

The local judge is the best of the judges that need no trained model (``quip``, ``cosine``) by balanced
accuracy on the dev part of ``results/local/SET`` (its ``calibration.jsonl.gz``: the verdicts the threshold
was fitted on), so the choice never looks at the evaluation part the cascade is measured on. The band is
the interval around that judge's fitted threshold holding the ``--escalate`` share of dev scores nearest
to it: answers whose score falls in it go to the LLM, so about that share is escalated.

    python scripts/cascade_local.py results/local/truthfulqa [--escalate 0.4]
    # prints: SPEC THRESHOLD LO-HI DEV_BALANCED_ACCURACY
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sklearn.metrics import balanced_accuracy_score

from groundjudge.records import find_records, read_records

CANDIDATES = ("quip", "cosine")
"""Local judges that run with no trained model: the cascade must not depend on weights that are not committed."""


def choose(run_dir: Path, escalate: float) -> tuple[str, float, float, float, float]:
    """(spec, threshold, band low, band high, dev balanced accuracy) of the best model-free local judge."""
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    dev = read_records(find_records(run_dir, "calibration.jsonl")).results
    best: tuple[str, float, float, float, float] | None = None
    for spec, row in summary["judges"].items():
        if spec.split(":")[0] not in CANDIDATES or row.get("threshold") is None:
            continue
        threshold = float(row["threshold"])
        scored = [(r.result.verdict.score, r.example.label) for r in dev
                  if r.judge == spec and r.example.label and r.result.verdict.score is not None]
        if not scored:
            continue
        gold = [label == "grounded" for _, label in scored]
        predicted = [score >= threshold for score, _ in scored]
        accuracy = float(balanced_accuracy_score(gold, predicted))
        nearest = sorted((abs(score - threshold), score) for score, _ in scored)[:max(1, round(escalate * len(scored)))]
        low, high = min(s for _, s in nearest), max(s for _, s in nearest)
        if best is None or accuracy > best[4]:
            best = (spec, threshold, max(low, 0.0), min(high, 1.0), accuracy)
    if best is None:
        raise SystemExit(f"{run_dir}: no dev verdicts of {' or '.join(CANDIDATES)}")
    return best


def main() -> None:
    """Print the choice for one set."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--escalate", type=float, default=0.4, help="share of dev answers inside the band")
    args = parser.parse_args()
    spec, threshold, low, high, accuracy = choose(args.run_dir, args.escalate)
    print(f"{spec} {threshold:.6f} {low:.6f}-{high:.6f} {accuracy:.4f}")


if __name__ == "__main__":
    main()
