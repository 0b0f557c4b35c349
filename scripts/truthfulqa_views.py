"""The evidence-typed generation protocol on TruthfulQA, with the model you have, beside the seed's figures.

Evidence = each question's Best Answer; claims = every correct answer
(should be accepted) and every incorrect answer (should be rejected). Five
views of one NLI model (plus ``--models`` as independent backends) vote on
each claim; a claim is accepted (Verified) when its support mass reaches tau.
Prints: the main table (no verification / single view / all views), the
confusion matrix, the support-mass distribution, per-view TPR/FPR, a threshold
sweep, and Proposition 1's bound next to the measured false-positive rate with
the measured correlation of view errors.

    python scripts/truthfulqa_views.py --model PATH_OR_HUB_NAME [--models M2;M3] [--questions 200] --out t.json
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np

from groundjudge.formats.load import load_examples
from groundjudge.local_nli.nli_model import ENTAILMENT, NLIModel
from groundjudge.local_nli.views import VIEWS, error_correlation, evidence_type, exponential_bound, view_pair
from groundjudge.paths import portable_model

CSV = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "truthfulqa" / "TruthfulQA.csv"

SEED_FIGURES = {
    "model": "cross-encoder/nli-deberta-v3-small", "claims": 5865, "tau": 0.6,
    "main": {"none": {"precision": 0.4394, "recall": 1.0, "hallucination_rate": 0.5606, "fpr": 1.0},
             "single_view": {"precision": 0.9509, "recall": 0.5037, "hallucination_rate": 0.0491, "fpr": 0.0204},
             "multi_view": {"precision": 0.9688, "recall": 0.4463, "hallucination_rate": 0.0312, "fpr": 0.0113}},
    "per_view": {"direct": (0.5037, 0.0204), "context": (0.4315, 0.0146), "reversed": (0.4602, 0.0328),
                 "truncated": (0.1284, 0.0070), "paraphrase": (0.4451, 0.0274)},
    "bound": 0.000237, "measured_fpr": 0.0113,
}
"""The figures the seed paper reports for this protocol (for side-by-side printing only)."""


def rates(accepted: np.ndarray, correct: np.ndarray) -> dict[str, float]:
    """Claim precision, recall, F1, hallucination rate and false-positive rate of an acceptance rule."""
    tp = int((accepted & correct).sum())
    fp = int((accepted & ~correct).sum())
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / int(correct.sum())
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "hallucination_rate": 1 - precision if tp + fp else 0.0,
            "fpr": fp / int((~correct).sum()), "accepted": tp + fp}


def main() -> None:
    """Run the protocol and print its tables."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", required=True, help="NLI model: hub name or local path")
    parser.add_argument("--models", default="", help="';'-separated further models, each an independent view")
    parser.add_argument("--csv", default=str(CSV))
    parser.add_argument("--questions", type=int, help="a seeded sample of this many questions (default: all 817)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tau", type=float, default=0.6)
    parser.add_argument("--entail-at", type=float, default=0.5)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--int8", action="store_true")
    parser.add_argument("--out", default="truthfulqa_views.json")
    args = parser.parse_args()

    examples = load_examples([args.csv]).examples
    groups = sorted({e.group for e in examples})
    if args.questions:
        groups = set(random.Random(args.seed).sample(groups, args.questions))
        examples = [e for e in examples if e.group in groups]
    correct = np.array([e.label == "grounded" for e in examples])
    start = time.perf_counter()
    names = [args.model] + [m for m in args.models.split(";") if m.strip()]
    engines = [NLIModel(name, batch_size=args.batch_size, int8=args.int8, dtype="float32")   # as committed
               for name in names]
    plan = [(engines[0], view, view) for view in VIEWS] + [
        (engine, "direct", f"direct@{Path(name).name}") for engine, name in zip(engines[1:], names[1:])]
    votes, view_names = [], []
    for engine, view, label in plan:
        pairs = [view_pair(view, e.context[0], e.answer, e.question) for e in examples]
        probs = engine.score_pairs([p for p, _ in pairs], [h for _, h in pairs])[:, ENTAILMENT]
        votes.append(probs >= args.entail_at)
        view_names.append(label)
        print(f"  view {label}: {len(pairs)} pairs scored")
    votes = np.stack(votes, axis=1)
    mass = votes.mean(axis=1)
    elapsed = time.perf_counter() - start
    accepted = mass >= args.tau
    main_table = {"none": rates(np.ones_like(correct), correct), "single_view": rates(votes[:, 0], correct),
                  "multi_view": rates(accepted, correct)}
    per_view = {name: {"tpr": float(votes[correct, i].mean()), "fpr": float(votes[~correct, i].mean())}
                for i, name in enumerate(view_names)}
    alpha = per_view[view_names[0]]["fpr"]
    errors = np.where(correct[:, None], ~votes, votes).astype(float)   # a view errs: rejects true / accepts false
    types = [evidence_type(m, args.tau, 0.0) for m in mass]
    distribution = {
        kind: {"mean_mass": float(mass[sel].mean()), "m=0": float((mass[sel] == 0).mean()),
               "0<m<tau": float(((mass[sel] > 0) & (mass[sel] < args.tau)).mean()),
               "m>=tau": float((mass[sel] >= args.tau).mean())}
        for kind, sel in (("correct", correct), ("incorrect", ~correct))}
    result = {
        "model": portable_model(args.model), "models": [portable_model(m) for m in names[1:]], "claims": int(len(examples)), "correct": int(correct.sum()),
        "incorrect": int((~correct).sum()), "tau": args.tau, "entail_at": args.entail_at, "seconds": elapsed,
        "main": main_table,
        "confusion": {"correct": {"accepted": int((accepted & correct).sum()), "rejected": int((~accepted & correct).sum())},
                      "incorrect": {"accepted": int((accepted & ~correct).sum()),
                                    "rejected": int((~accepted & ~correct).sum())}},
        "support_mass": distribution, "per_view": per_view,
        "sweep": {f"{t:.1f}": rates(mass >= t - 1e-9, correct) for t in (0.2, 0.4, 0.6, 0.8, 1.0)},
        "bound": {"alpha_single_view_fpr": alpha, "n_views": len(view_names),
                  "proposition_1_bound": exponential_bound(len(view_names), args.tau, alpha),
                  "measured_multi_view_fpr": main_table["multi_view"]["fpr"],
                  "mean_view_error_correlation": error_correlation(errors),
                  "mean_false_claim_vote_correlation": error_correlation(votes[~correct].astype(float))},
        "verified_share": types.count("Verified") / len(types),
        "seed": SEED_FIGURES,
    }
    print(f"\n{len(examples)} claims ({int(correct.sum())} correct / {int((~correct).sum())} incorrect), "
          f"{len(view_names)} views, tau={args.tau}, {elapsed:.0f} s; model {args.model}")
    print(f"{'':<14}{'precision':>10}{'recall':>8}{'F1':>7}{'halluc.':>9}{'FPR':>8}   seed: precision / FPR")
    for key, row in main_table.items():
        seed = SEED_FIGURES["main"][key]
        print(f"{key:<14}{row['precision']:>10.4f}{row['recall']:>8.4f}{row['f1']:>7.4f}"
              f"{row['hallucination_rate']:>9.4f}{row['fpr']:>8.4f}   {seed['precision']:.4f} / {seed['fpr']:.4f}")
    print("\nconfusion (multi-view):", result["confusion"])
    print("\nsupport mass:", json.dumps(distribution))
    print(f"\n{'view':<22}{'TPR':>8}{'FPR':>8}   seed TPR / FPR")
    for name, row in per_view.items():
        seed = SEED_FIGURES["per_view"].get(name)
        print(f"{name:<22}{row['tpr']:>8.4f}{row['fpr']:>8.4f}   " + (f"{seed[0]:.4f} / {seed[1]:.4f}" if seed else "-"))
    print(f"\n{'tau':<6}{'precision':>10}{'recall':>8}{'FPR':>8}")
    for t, row in result["sweep"].items():
        print(f"{t:<6}{row['precision']:>10.4f}{row['recall']:>8.4f}{row['fpr']:>8.4f}")
    b = result["bound"]
    print(f"\nProposition 1 bound (N={b['n_views']}, tau={args.tau}, alpha={b['alpha_single_view_fpr']:.4f}): "
          f"{b['proposition_1_bound']:.6f}; measured multi-view FPR: {b['measured_multi_view_fpr']:.4f} "
          f"({'holds' if b['measured_multi_view_fpr'] <= b['proposition_1_bound'] else 'does not hold'}); "
          f"mean correlation of view errors {b['mean_view_error_correlation']:.2f}, of votes on false claims "
          f"{b['mean_false_claim_vote_correlation']:.2f} (0 = independent). Seed: bound {SEED_FIGURES['bound']}, "
          f"measured {SEED_FIGURES['measured_fpr']}.")
    Path(args.out).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
