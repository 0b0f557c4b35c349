"""The recipe ablation of issue 44 as one table: for each trained (or untrained) local judge, what it was trained on
(from its card) beside its ROC AUC on the held-out parts of the shared data (from its ``signal_steps.json``) at
step (a), the pair with oracle evidence, and step (d), the answer scored by the min of its claims (the judge as a
run uses it).

    python scripts/ablation_table.py \
        --row "gj-docs3" results/models/gj-docs3/signal_steps.json results/models/gj-docs3/groundjudge_card.json ...

A row whose card is ``-`` is an untrained scorer; the cosine column of the first file gives the cosine row.
``--within SET`` adds, for a set whose claims recur across documents (ContractNLI's hypotheses), the AUC within
claims at steps a, b and d (``by_claim`` of the rows): what one threshold per checklist question could reach.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

SETS = ("summedits", "contractnli", "nli_unseen")
STEPS = (("a", "pair, oracle evidence"), ("d_min", "answer, min of claims"))


def _auc(rows: list[dict], set_name: str, step: str, scorer: str) -> str:
    for row in rows:
        if row["set"] == set_name and row["step"] == step and row["scorer"] == scorer:
            low, high = row["roc_auc_ci95"]
            return f"{row['roc_auc']:.3f} [{low:.2f}, {high:.2f}]"
    return "–"


WITHIN_STEPS = ("a", "b", "d_min")


def _within(rows: list[dict], set_name: str, step: str, scorer: str) -> str:
    for row in rows:
        if row["set"] == set_name and row["step"] == step and row["scorer"] == scorer and "by_claim" in row:
            return f"{row['by_claim']['within_strata']:.3f}"
    return "–"


def _sources(card: dict) -> str:
    """What the model was trained on, with the pairs of each source kept for training."""
    mix = card.get("mix")
    if mix:
        parts = [f"{name} {info['train_pairs']:,} (weight {info['weight']:g})"
                 for name, info in mix["sources"].items()]
        return " + ".join(parts)
    train = card.get("split", {}).get("train", {})
    built = card.get("pairs", {}).get("built", {})
    if len(built) > 1:   # gold pairs with --synthetic / --nli-mix: the pairs each made, then the capped total
        return " + ".join(f"{name} {n:,} made" for name, n in built.items()) + f"; {train.get('pairs', 0):,} kept"
    source = "documents" if card.get("recipe") == "documents" else "gold"
    return f"{source} {train.get('pairs', card.get('train_rows', '?')):,}"


def _dev_auc(card: dict) -> str:
    pair = card.get("dev_metrics", {}).get("pair_level", {})
    if "auc" in pair:
        return f"{pair['auc']:.3f} ({pair['n']:,} pairs)"
    if "dev_accuracy_per_epoch" in card:
        return f"3-way accuracy {card['dev_accuracy_per_epoch'][-1]:.3f}"
    return "–"


def _time(card: dict) -> str:
    seconds = card.get("training_time_s", card.get("train_s"))
    steps = card.get("steps")
    took = f"{seconds:,.0f} s" if seconds is not None else "–"
    return f"{took}, {steps} steps" if steps else took


def table(rows: list[tuple[str, Path, Path | None]], within: tuple[str, ...] = ()) -> str:
    """The markdown table of the given (label, signal_steps.json, card or None) rows, then untrained cosine;
    ``within``: sets whose AUC within claims is added (steps a, b, d)."""
    header = ["model", "base", "trained on (train pairs)", "training time, steps", "own dev AUC"]
    header += [f"{s}: {step}" for s in SETS for step in ("a", "d")]
    header += [f"{s} within claims: {step.removesuffix('_min')}" for s in within for step in WITHIN_STEPS]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    cosine_rows: list[dict] | None = None
    for label, steps_path, card_path in rows:
        data = json.loads(steps_path.read_text())
        scorer = data["scorers"][0]
        cosine_rows = cosine_rows or [r for r in data["rows"] if r["scorer"].startswith("cosine")]
        card = json.loads(card_path.read_text()) if card_path else {}
        base = str(card.get("base", "–")).replace("sentence-transformers/", "")
        cells = [label, base, _sources(card) if card else "–", _time(card) if card else "–", _dev_auc(card)]
        cells += [_auc(data["rows"], s, step, scorer) for s in SETS for step, _ in STEPS]
        cells += [_within(data["rows"], s, step, scorer) for s in within for step in WITHIN_STEPS]
        lines.append("| " + " | ".join(cells) + " |")
    if cosine_rows:
        cells = ["cosine (untrained)", "all-MiniLM-L6-v2", "–", "–", "–"]
        cells += [_auc(cosine_rows, s, step, cosine_rows[0]["scorer"]) for s in SETS for step, _ in STEPS]
        cells += [_within(cosine_rows, s, step, cosine_rows[0]["scorer"]) for s in within for step in WITHIN_STEPS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    """Print (or write) the ablation table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--row", nargs=3, action="append", required=True, metavar=("LABEL", "STEPS_JSON", "CARD"),
                        help="a model: its label, its signal_steps.json and its card ('-' for none)")
    parser.add_argument("--within", nargs="+", default=[], choices=SETS, metavar="SET",
                        help="add the AUC within claims (steps a, b, d) of these sets")
    parser.add_argument("--out", type=Path, help="write the table here as well")
    args = parser.parse_args()
    rows = [(label, Path(steps), None if card == "-" else Path(card)) for label, steps, card in args.row]
    text = table(rows, tuple(args.within))
    print(text, end="")
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
