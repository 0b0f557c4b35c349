"""What cutting a run into chunks costs a local judge: its ``score_batch`` over N answers in one call against the
same answers in consecutive chunks (as ``groundjudge run`` hands them over), in one process, interleaved (not a
test).

Both ways start from an empty shared vector cache, so each embeds the documents' windows afresh; the judge's model
is loaded and warmed on 8 answers first. Also counted: the tokens the evidence embedder was fed with padding and
without, which is where chunks used to lose (a chunk's short claims and long windows padded into the same batch).

    python scripts/bench_chunk_cost.py FILES... [--judge SPEC] [--limit 400] [--chunk 32] [--repeats 2] [--json OUT]

``GROUNDJUDGE_THREADS`` sets the torch threads (recorded). To time another checkout's code with this script, run it
with that checkout first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def embedder_counts() -> tuple[int, int]:
    """(padded, real) tokens fed so far to every engine embedder of this process."""
    from groundjudge.local_nli.embedder import SentenceEmbedder

    found = [o for o in gc.get_objects() if isinstance(o, SentenceEmbedder)]
    return sum(e.stats.padded_tokens for e in found), sum(e.stats.real_tokens for e in found)


def timed(judge, examples: list, chunk: int) -> dict:
    """One pass: seconds and the embedder's token counts, with the vector cache emptied first."""
    from groundjudge.local_nli import vector_cache

    vector_cache.SENTENCE_VECTORS.clear()
    padded, real = embedder_counts()
    start = time.perf_counter()
    for i in range(0, len(examples), chunk):
        judge.score_batch(examples[i:i + chunk])
    seconds = time.perf_counter() - start
    padded_after, real_after = embedder_counts()
    return {"seconds": round(seconds, 3), "embedder_padded_tokens": padded_after - padded,
            "embedder_real_tokens": real_after - real}


def code_version() -> str:
    """The commit of the code being timed (the first ``groundjudge`` on the path)."""
    import groundjudge

    folder = Path(groundjudge.__file__).resolve().parents[1]
    done = subprocess.run(["git", "-C", str(folder), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(folder), "status", "--porcelain", "groundjudge"], capture_output=True,
                           text=True).stdout.strip()
    return (done.stdout.strip() or "unknown") + (" + uncommitted changes" if dirty else "")


def main() -> None:
    """Time both ways, print them, optionally write JSON."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--judge", default="nli:model=models/bench-minilm-nli3,threshold=0.5")
    parser.add_argument("--limit", type=int, default=400, help="first N answers of the files")
    parser.add_argument("--chunk", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--json")
    args = parser.parse_args()
    from groundjudge.formats.load import load_examples
    from groundjudge.judges import build_judge

    examples = list(load_examples(args.files).examples)[:args.limit]
    judge, _ = build_judge(args.judge)
    judge.score_batch(examples[:8])
    passes: dict[str, list[dict]] = {"one call": [], f"chunks of {args.chunk}": []}
    for _ in range(args.repeats):
        passes["one call"].append(timed(judge, examples, len(examples)))
        passes[f"chunks of {args.chunk}"].append(timed(judge, examples, args.chunk))
    median = {way: statistics.median(p["seconds"] for p in done) for way, done in passes.items()}
    one, chunked = median.values()
    files = [os.path.relpath(Path(f).resolve(), ROOT) for f in args.files]
    record = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "code": code_version(),
              "judge": args.judge, "files": files, "answers": len(examples), "chunk": args.chunk,
              "threads": os.environ.get("GROUNDJUDGE_THREADS", "all cores"), "load_average": os.getloadavg()[0],
              "passes": passes, "median_seconds": median, "one_call_over_chunks": round(one / chunked, 3)}
    for way, done in passes.items():
        print(f"{way:>14}: median {median[way]:.2f} s; embedder tokens padded/real "
              f"{done[0]['embedder_padded_tokens']:,}/{done[0]['embedder_real_tokens']:,}")
    print(f"chunks reach {one / chunked:.2f}x the one call's speed ({record['code']})")
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
