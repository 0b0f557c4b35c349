"""Benchmark: the claims chain against the scripted server with a fixed latency per call.

Measures, in one run, (1) how close the runner gets to the ideal wall time for
the chosen concurrency when every call takes a fixed latency, and (2) how many
calls the shared context-fact extraction saves when answers share a context.
Nothing here is a test: it prints a table and writes JSON.

    python scripts/bench_llm_chain.py --examples 300 --latency 0.2 --concurrency 16 --out bench.json
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from groundjudge.judges import build_judge  # noqa: E402
from groundjudge.llm import LLMService  # noqa: E402
from groundjudge.runs.records import RecordWriter  # noqa: E402
from groundjudge.runs.runner import JudgeTask, run_judges  # noqa: E402
from groundjudge.testing.oracle import oracle_responder  # noqa: E402
from groundjudge.testing.scripted_server import Reply, ScriptedLLMServer  # noqa: E402
from groundjudge.types import Example  # noqa: E402


def examples(n: int, answers_per_context: int) -> list[Example]:
    """n examples; every context is shared by ``answers_per_context`` answers."""
    out = []
    for i in range(n):
        c = i // answers_per_context
        context = (f"Clause {c}. The supplier must deliver within {10 + c} days of the order. "
                   f"Late delivery gives the buyer a credit of {c % 7 + 1} percent.")
        answer = (f"Under clause {c} the supplier must deliver within {10 + c} days of the order." if i % 2 == 0 else
                  f"Under clause {c} the supplier must deliver within {40 + c} days of the order.")
        out.append(Example(id=f"b{i}", context=[context], answer=answer,
                           label="grounded" if i % 2 == 0 else "ungrounded"))
    return out


def serve(latency: float, ports, stop) -> None:
    """The scripted server in its own process (so it does not share the client's GIL), answering after latency."""
    server = ScriptedLLMServer(lambda r: Reply(content=oracle_responder(r).content, delay=latency)).start()
    ports.put(server.openai_base)
    stop.wait(3600)
    server.stop()


def run_once(base: str, data: list[Example], concurrency: int, share: bool, out: str) -> dict:
    """Judge the data with the claims chain; wall time and calls made."""
    spec = (f"claims:model=openai/bench-model,api_base={base},concurrency={concurrency},"
            f"threshold=1.0,share_facts={str(share).lower()}")
    judge, _ = build_judge(spec, service=LLMService())
    if os.path.exists(out):
        os.remove(out)
    start = time.perf_counter()
    with RecordWriter(out) as writer:
        run_judges([JudgeTask(spec=spec, judge=judge)], data, writer, concurrency=concurrency, show_progress=False)
    wall = time.perf_counter() - start
    with open(out, encoding="utf-8") as handle:
        results = [json.loads(line) for line in handle if line.strip()]
    return {"wall_s": wall, "requests": sum(len(r["result"]["calls"]) for r in results), "judged": len(results)}


def main() -> None:
    """Run the benchmark and print its table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per call at the server")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--answers-per-context", type=int, default=2)
    parser.add_argument("--out", default="bench_llm_chain.json")
    args = parser.parse_args()

    context = multiprocessing.get_context("spawn")   # a clean interpreter: no threads inherited
    ports = context.Queue()
    stop = context.Event()
    process = context.Process(target=serve, args=(args.latency, ports, stop), daemon=True)
    process.start()
    try:
        base = ports.get(timeout=60)
        data = examples(args.examples, args.answers_per_context)
        shared = run_once(base, data, args.concurrency, True, "/tmp/bench_shared.jsonl")
        unshared = run_once(base, data, args.concurrency, False, "/tmp/bench_unshared.jsonl")
    finally:
        stop.set()
        process.join(timeout=10)
    # ideal: every example needs three sequential calls (claims, facts, verify) of fixed latency,
    # and `concurrency` examples are in flight at once
    ideal = math.ceil(args.examples / args.concurrency) * 3 * args.latency
    result = {
        "examples": args.examples, "latency_s": args.latency, "concurrency": args.concurrency,
        "answers_per_context": args.answers_per_context, "ideal_wall_s": ideal,
        "shared_facts": {**shared, "ratio_to_ideal": shared["wall_s"] / ideal},
        "unshared_facts": {**unshared, "ratio_to_ideal": unshared["wall_s"] / ideal},
        "calls_saved_by_fact_sharing": unshared["requests"] - shared["requests"],
    }
    print(f"{'run':<16}{'wall s':>9}{'ideal s':>9}{'ratio':>8}{'calls':>8}")
    for name in ("shared_facts", "unshared_facts"):
        r = result[name]
        print(f"{name:<16}{r['wall_s']:>9.2f}{ideal:>9.2f}{r['ratio_to_ideal']:>8.2f}{r['requests']:>8}")
    print(f"calls saved by sharing context facts: {result['calls_saved_by_fact_sharing']}")
    with open(args.out, "w") as handle:
        json.dump(result, handle, indent=2)


if __name__ == "__main__":
    main()
