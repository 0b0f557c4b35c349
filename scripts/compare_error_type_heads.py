"""Two recipes of the local error-type head compared on the same items, with a paired bootstrap (issue 44, item 5).

Rebuilds of one recipe differ by more than recipes do (0.086-0.203 macro-F1 on the 51 hand-written answers), so a
recipe is given as one or more ``eval_error_types_local.py`` outputs (one per seed) and scored by the mean of its
builds' macro-F1. Each bootstrap draw resamples the items of a set once and scores every build of both recipes on
that draw, so the interval of the difference is paired: items hard for both recipes cancel.

    python scripts/compare_error_type_heads.py --a rules_s0.json rules_s1.json --b mix_s0.json mix_s1.json \\
        --json results/legal_types/reworded/compare.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from eval_error_types_local import macro_f1    # scripts/ is on the path when this runs as a script


def set_items(evaluation: dict) -> dict[str, list]:
    """Every scored set of one evaluation file: its name -> [[id, gold, predicted], ...]."""
    found = {}
    for name in ("oracle", "diagnostic_original_sentence"):
        if "items" in evaluation.get(name, {}):
            found[name] = evaluation[name]["items"]
    for key, extra in evaluation.get("extra", {}).items():
        if "items" in extra:
            found[key] = extra["items"]
        if "items" in extra.get("diagnostic_source_sentence", {}):
            found[key + " (source sentence)"] = extra["diagnostic_source_sentence"]["items"]
    return found


def paired(a: list[list], b: list[list], n_boot: int, seed: int) -> dict:
    """Mean macro-F1 of the builds of A and of B on one set, and B - A with a paired bootstrap 95% interval.

    ``a`` and ``b``: per build, that build's items ([id, gold, predicted]) in the same order for every build."""
    ids = [i for i, _, _ in a[0]]
    for build in a + b:
        if [i for i, _, _ in build] != ids:
            raise ValueError("the builds were scored on different items: evaluate them with the same --extra sets")
    gold = [g for _, g, _ in a[0]]
    preds_a = [[p or "(none)" for _, _, p in build] for build in a]
    preds_b = [[p or "(none)" for _, _, p in build] for build in b]

    def means(idx: list[int]) -> tuple[float, float]:
        g = [gold[i] for i in idx]
        fa = sum(macro_f1(g, [p[i] for i in idx]) for p in preds_a) / len(preds_a)
        fb = sum(macro_f1(g, [p[i] for i in idx]) for p in preds_b) / len(preds_b)
        return fa, fb

    everything = list(range(len(gold)))
    fa, fb = means(everything)
    rng = random.Random(seed)
    diffs = []
    for _ in range(n_boot):
        da, db = means([rng.randrange(len(gold)) for _ in gold])
        diffs.append(db - da)
    diffs.sort()
    return {"n": len(gold), "a": round(fa, 4), "b": round(fb, 4), "b_minus_a": round(fb - fa, 4),
            "ci95": [round(diffs[int(0.025 * n_boot)], 4), round(diffs[int(0.975 * n_boot) - 1], 4)],
            "share_of_draws_b_not_above": round(sum(d <= 0 for d in diffs) / n_boot, 4),
            "a_builds": [round(macro_f1(gold, p), 4) for p in preds_a],
            "b_builds": [round(macro_f1(gold, p), 4) for p in preds_b]}


def main(argv: list[str] | None = None) -> int:
    """Print one line per set the two recipes share, and write them as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", nargs="+", type=Path, required=True, help="evaluations of recipe A, one per build")
    parser.add_argument("--b", nargs="+", type=Path, required=True, help="evaluations of recipe B, one per build")
    parser.add_argument("--n-boot", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    loaded = {}
    for path in args.a + args.b:
        try:
            loaded[path] = set_items(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError) as error:
            print(f"{path}: not an evaluation file ({error})", file=sys.stderr)
            return 2
    names = [n for n in loaded[args.a[0]] if all(n in sets for sets in loaded.values())]
    if not names:
        print("no set with items in every file: rerun eval_error_types_local.py (it writes them since this script)",
              file=sys.stderr)
        return 2
    out = {"a": [str(p) for p in args.a], "b": [str(p) for p in args.b], "n_boot": args.n_boot, "sets": {}}
    for name in names:
        out["sets"][name] = result = paired([loaded[p][name] for p in args.a], [loaded[p][name] for p in args.b],
                                            args.n_boot, args.seed)
        print(f"{name}: n={result['n']} A {result['a']:.3f} B {result['b']:.3f} B-A {result['b_minus_a']:+.3f} "
              f"{result['ci95']}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
