"""What ``dtype=auto`` costs and gives for one NLI model on this machine (not a test).

1. The check, as a user's first run pays it: the check cache is pointed at an empty temporary folder and the
   model is loaded with ``dtype=auto``; printed: the check's own time (both private loads and both scorings of
   the 300-pair check set, as recorded in its cache entry), the whole load's wall time, the agreement and the
   precision chosen.
2. bfloat16 against float32 on the check set: both models loaded once, the 300 pairs scored by each in turn
   (interleaved, ``--repeats`` times, after one warm-up call each); printed: the median pairs/s of each, their
   ratio (also per round, and in process CPU time: steadier on a shared machine; the load average is printed),
   and the verdict agreement both as the check reads it (argmax label) and as the nli judge's claim rule
   reads it (supported / contradicted / unverifiable at tau = 0.5).

Threads: ``GROUNDJUDGE_THREADS`` (the engine's torch threads). The default model is the one the engine
benchmarks use: ``models/bench-minilm-nli3`` (scripts/make_bench_nli_model.py; a fine-tuned MiniLM-L6).

    GROUNDJUDGE_THREADS=2 python scripts/bench_auto_dtype.py --model models/bench-minilm-nli3 [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

from groundjudge.local_nli.precision import cpu_description


def claim_rule(probs, tau: float = 0.5) -> list[str]:
    """The nli judge's claim label per row of [entailment, neutral, contradiction] probabilities."""
    out = []
    for entail, _, contradict in probs:
        if entail >= tau and entail > contradict:
            out.append("supported")
        elif contradict >= tau and contradict > entail:
            out.append("contradicted")
        else:
            out.append("unverifiable")
    return out


def main() -> None:
    """Measure and print (and optionally save) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="models/bench-minilm-nli3")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        os.environ["GROUNDJUDGE_BACKEND_CACHE"] = cache
        import torch

        from groundjudge.local_nli import backend_cache
        from groundjudge.local_nli.backend_check import check_pairs
        from groundjudge.local_nli.nli_model import NLIModel
        from groundjudge.local_nli.precision import bf16_flags_seen

        start = time.perf_counter()
        auto = NLIModel(args.model, dtype="auto")
        load_s = time.perf_counter() - start
        records = backend_cache.entries()
        premises, hypotheses = check_pairs()
        models = {"float32": NLIModel(args.model, dtype="float32"), "bfloat16": NLIModel(args.model, dtype="bfloat16")}
        probs = {name: m.score_pairs(premises, hypotheses) for name, m in models.items()}   # warm-up, and verdicts
        times: dict[str, list[float]] = {name: [] for name in models}
        cpu: dict[str, list[float]] = {name: [] for name in models}
        for _ in range(args.repeats):
            for name, model in models.items():
                start, start_cpu = time.perf_counter(), time.process_time()
                model.score_pairs(premises, hypotheses)
                times[name].append(time.perf_counter() - start)
                cpu[name].append(time.process_time() - start_cpu)
    n = len(premises)
    rate = {name: n / statistics.median(seconds) for name, seconds in times.items()}
    argmax = {name: p.argmax(axis=1) for name, p in probs.items()}
    rules = {name: claim_rule(p) for name, p in probs.items()}
    figures = {
        "model": args.model, "pairs": n, "threads": torch.get_num_threads(), "torch": torch.__version__,
        "cpu": cpu_description(), "bf16_flags": bf16_flags_seen(),
        "auto_chose": auto.placement.dtype, "auto_note": auto.placement.note,
        "check_seconds": records[0].seconds if records else None, "auto_load_wall_s": round(load_s, 3),
        "agreement_argmax": float((argmax["float32"] == argmax["bfloat16"]).mean()),
        "agreement_claim_rule": sum(a == b for a, b in zip(rules["float32"], rules["bfloat16"])) / n,
        "max_abs_prob_diff": float(abs(probs["float32"] - probs["bfloat16"]).max()),
        "pairs_per_s": {name: round(r, 1) for name, r in rate.items()},
        "bf16_over_fp32": round(rate["bfloat16"] / rate["float32"], 2), "repeats": args.repeats,
        "bf16_over_fp32_per_round": sorted(round(a / b, 2) for a, b in zip(times["float32"], times["bfloat16"])),
        "bf16_over_fp32_cpu_time": round(statistics.median(cpu["float32"]) / statistics.median(cpu["bfloat16"]), 2),
        "load_average": os.getloadavg(),
        "date": time.strftime("%Y-%m-%d"),
    }
    print(json.dumps(figures, indent=2))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(figures, out, indent=2)


if __name__ == "__main__":
    main()
