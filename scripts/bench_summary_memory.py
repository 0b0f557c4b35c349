"""How does the summary's memory grow with the answers? A run's records replicated to N answers (each copy of an
answer under a new id), then ``summarize_file`` on each size in a fresh process: wall time and peak RSS (not a test).

A run's peak RSS is its judging's (models, caches) plus what its summary holds at the end: every result as a
lean copy (:mod:`groundjudge.runs.lean_records`) and the bootstraps' blocks. This measures the second part alone,
for the records of any judge, in minutes rather than the hours a 50,000-answer run of a model-backed judge takes.
With ``--tree`` the same is measured with another checkout's code (e.g. a ``git worktree`` of an older commit),
interleaved with this one's, so that a change is measured against its parent in one run.

    python scripts/bench_summary_memory.py RUN/records.jsonl --sizes 5000 50000 [--tree ../old] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.bench_scale import timed  # noqa: E402 - the same wall / peak RSS measurement as the run's

SUMMARIZE = """import sys
sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]   # the tree given, not the install
sys.path.insert(0, sys.argv[1])
import groundjudge
assert groundjudge.__file__.startswith(sys.argv[1]), groundjudge.__file__
from groundjudge.runs.summary import summarize_file
summarize_file(sys.argv[2])
"""


def replicate(records: Path, answers: int, out: Path) -> Path:
    """``records`` with its results repeated until they cover ``answers`` answers, each copy's ids suffixed."""
    lines = records.read_text(encoding="utf-8").splitlines()
    header, results = lines[0], [json.loads(line) for line in lines[1:] if line.strip()]
    per_copy = len({r["example"]["id"] for r in results})
    with out.open("w", encoding="utf-8") as handle:
        handle.write(header + "\n")
        for copy in range(max(1, answers // per_copy)):
            for result in results:
                new_id = f"{result['example']['id']}~{copy}"
                result = {**result, "example": {**result["example"], "id": new_id},
                          "result": {**result["result"], "verdict": {**result["result"]["verdict"],
                                                                     "example_id": new_id}}}
                handle.write(json.dumps(result) + "\n")
    return out


def commit(tree: Path) -> str:
    """The commit a checkout is at, with ``+`` when its tracked files differ from it (paths are not recorded)."""
    head = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(tree), "diff", "--quiet", "HEAD"]).returncode != 0
    return head.stdout.strip() + ("+" if dirty else "")


def main() -> int:
    """Replicate, summarise each size with each tree (interleaved), print and save the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("--sizes", nargs="+", type=int, default=[5000, 50000])
    parser.add_argument("--tree", type=Path, help="another checkout to measure beside this one")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    trees = {"this": ROOT, **({"other": args.tree.resolve()} if args.tree else {})}
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1"}
    figures: dict[str, dict[int, dict]] = {name: {} for name in trees}
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            data = replicate(args.records, size, Path(tmp) / f"records-{size}.jsonl")
            for name, tree in trees.items():
                figures[name][size] = timed([sys.executable, "-c", SUMMARIZE, str(tree), str(data)], env, Path(tmp))
                print(f"{name} {size}: {json.dumps(figures[name][size])}", flush=True)
    small, large = args.sizes[0], args.sizes[-1]
    ratios = {name: round(f[large]["peak_rss_gb"] / f[small]["peak_rss_gb"], 2) for name, f in figures.items()}
    for name, ratio in ratios.items():
        print(f"{name}: summarize peak RSS {small} -> {large} answers: {ratio}x")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({
            "date": datetime.now(timezone.utc).date().isoformat(),
            "command": "python scripts/bench_summary_memory.py RECORDS --sizes " + " ".join(map(str, args.sizes))
                       + (" --tree OTHER" if args.tree else ""),
            "records": {"judges": [re.sub(r"(?<=[=,])/[^,]+", lambda m: Path(m.group()).name, j["spec"])
                                   for j in json.loads(args.records.open().readline())["judges"]],   # no paths
                        "results": sum(1 for _ in args.records.open()) - 1},
            "trees": {name: commit(tree) for name, tree in trees.items()},
            "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count()},
            "sizes": args.sizes, "figures": figures, "peak_rss_ratio": ratios}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
