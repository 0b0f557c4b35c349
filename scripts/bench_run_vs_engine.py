"""`groundjudge run` against the engine's one call on the same pairs, round by round (issue 42's first goal; not a
test).

``scripts/bench_perf.py`` compares the run's lower-median rate over the answers after its first chunk with the
engine's fastest call over every answer's pairs: two different sets of pairs, and a best case against a middle
one. This script measures the goal as it is written: in each round, one ``groundjudge run`` subprocess (chunked,
the default ``--local-chunk``) and then, in a fresh process, the engine's one call on exactly the pairs the run's
measured answers made (those after its first chunk, whose start-up and warm-up the run's figure leaves out),
after a warm-up call on the first chunk's pairs. The ratio is taken per round (run and engine back to back, under
the same load) and the median of the rounds is reported with every round.

    python scripts/bench_run_vs_engine.py --judge nli:model=models/shape-deberta-v3-base,threshold=0.5 \
        --rounds 3 --json results/perf/run_vs_engine/nli_default_shape_1thread.json

``GROUNDJUDGE_THREADS`` sets the torch threads of both (recorded).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench_chunk_cost import code_version  # noqa: E402  (scripts/ is on the path)
from bench_local_chunks import DATA, run_once  # noqa: E402


def measured_pairs(spec: str, chunk: int) -> tuple[object, list, list, int]:
    """(the judge's engine, warm-up pairs, measured pairs, measured answers): the pairs the judge makes for the
    run's first chunk and for the chunks after it, recorded chunk by chunk as the run hands them over (the pairs
    depend on evidence selection only, so they are recorded without scoring them)."""
    from groundjudge.formats.load import load_examples
    from groundjudge.judges import build_judge
    from groundjudge.local_nli.nli_model import NLIModel
    from groundjudge.runs.local_chunks import chunks

    judge, _ = build_judge(spec)
    seen: dict = {"pairs": []}
    score_pairs = NLIModel.score_pairs

    def recorder(self, premises, hypotheses, **kw):
        seen["pairs"] += list(zip(premises, hypotheses))
        seen["engine"] = self
        return np.full((len(premises), 3), 1 / 3, dtype=np.float32)   # only the pairs are wanted here

    warm, measured, answers = [], [], 0
    NLIModel.score_pairs = recorder
    try:
        for index, part in enumerate(chunks(list(load_examples([DATA]).examples), chunk)):
            seen["pairs"] = []
            judge.score_batch(part)
            if index == 0:
                warm = seen["pairs"]
            else:
                measured += seen["pairs"]
                answers += len(part)
    finally:
        NLIModel.score_pairs = score_pairs
    return seen["engine"], warm, measured, answers


def engine_once(spec: str, chunk: int) -> dict:
    """The engine's one call on the measured pairs (run in a fresh process), after one warm-up call."""
    engine, warm, pairs, answers = measured_pairs(spec, chunk)
    engine.score_pairs([p for p, _ in warm], [h for _, h in warm])
    start = time.perf_counter()
    engine.score_pairs([p for p, _ in pairs], [h for _, h in pairs])
    seconds = time.perf_counter() - start
    return {"pairs": len(pairs), "distinct_pairs": len(set(pairs)), "answers": answers, "seconds": seconds,
            "pairs_per_s": len(pairs) / seconds, "placement": engine.placement.describe()}


def main() -> None:
    """Interleave the rounds, print them, optionally write JSON."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judge", default="nli:model=models/shape-deberta-v3-base,threshold=0.5")
    parser.add_argument("--chunk", type=int, default=32, help="the run's --local-chunk (default 32, the default)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json")
    parser.add_argument("--engine-once", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.engine_once:
        print(json.dumps(engine_once(args.judge, args.chunk)))
        return
    load_before = os.getloadavg()[0]
    rounds = []
    with tempfile.TemporaryDirectory(prefix="bench-run-vs-engine-") as tmp:
        for i in range(args.rounds):
            run = run_once(args.judge, "nli", args.chunk, Path(tmp) / f"run-{i}")
            done = subprocess.run([sys.executable, __file__, "--engine-once", "--judge", args.judge, "--chunk",
                                   str(args.chunk)], cwd=ROOT, check=True, capture_output=True, text=True)
            engine = json.loads(done.stdout.strip().splitlines()[-1])
            ratio = run["units_per_s"] / engine["pairs_per_s"]
            rounds.append({"run": run, "engine": engine, "run_over_engine": round(ratio, 3)})
            print(f"round {i + 1}: run {run['units_per_s']:.1f} pairs/s over {run['answers_measured']} answers; "
                  f"engine {engine['pairs_per_s']:.1f} pairs/s on the same {engine['pairs']} pairs "
                  f"({engine['answers']} answers); run / engine {ratio:.3f}", flush=True)
    median = statistics.median(r["run_over_engine"] for r in rounds)
    print(f"median run / engine over {args.rounds} rounds: {median:.3f}")
    if args.json:
        from bench_perf import environment

        record = {"environment": environment(), "code": code_version(), "judge": args.judge, "chunk": args.chunk,
                  "load_average_before": load_before, "load_average_after": os.getloadavg()[0],
                  "rounds": rounds, "median_run_over_engine": median}
        Path(args.json).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
