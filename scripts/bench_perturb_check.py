"""``groundjudge perturb --check`` with a local judge: the batched check (candidates of many answers in one model
call) against the same judge asked about each candidate alone, as the check worked before; wall time of each, the
same rows asserted (not a test).

    GROUNDJUDGE_THREADS=2 python scripts/bench_perturb_check.py --check "nli:model=models/bench-minilm-nli3" \
        --data datasets/legal_qa/legal_qa.jsonl --json results/perf/perturb_check.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from groundjudge.perturb import JudgeCheck, perturb


def load(path: str) -> list:
    """The grounded answers of a data file (perturb's sources)."""
    from groundjudge.formats.load import load_file

    examples, _, _ = load_file(path)
    return [e for e in examples if e.label == "grounded"]


def main() -> int:
    """Time both checks interleaved, assert the same rows, print (and save) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", required=True, help="a local judge's spec")
    parser.add_argument("--data", default="datasets/legal_qa/legal_qa.jsonl")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--json")
    args = parser.parse_args()
    sources = load(args.data)
    batched = JudgeCheck.build(args.check)
    alone = JudgeCheck.build(args.check, batched=False)
    perturb(sources[:4], check=batched)   # model loading and the dtype check out of the timings
    perturb(sources[:4], check=alone)
    walls: dict[str, list[float]] = {"batched": [], "one_by_one": []}
    rows: dict[str, list[str]] = {}
    judged: dict[str, int] = {}
    for _ in range(args.repeats):
        for name, check in (("batched", batched), ("one_by_one", alone)):
            start, before = time.perf_counter(), check.checked
            result = perturb(sources, check=check)
            judged[name] = check.checked - before
            walls[name].append(round(time.perf_counter() - start, 2))
            rows[name] = [r.answer for r in result.examples]
    assert rows["batched"] == rows["one_by_one"], "the two checks kept different rows"
    assert judged["batched"] == judged["one_by_one"], "the two checks judged different numbers of candidates"
    best = {name: min(w) for name, w in walls.items()}
    figures = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
               "command": "python scripts/bench_perturb_check.py " + " ".join(sys.argv[1:]),
               "check": args.check, "data": args.data, "sources": len(sources), "rows": len(rows["batched"]),
               "candidates_judged": judged["batched"],
               "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                           "threads": os.environ.get("GROUNDJUDGE_THREADS", "default")},
               "wall_s": walls, "best_wall_s": best,
               "speedup": round(best["one_by_one"] / best["batched"], 2)}
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
