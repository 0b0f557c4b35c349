"""Each local judge kind's speed beside its limits, on one machine in one run (not a test): issue 42's tables.

For every kind asked (``--kinds``), on the bundled legal QA sample (112 answers over 28 documents):

- **run, one at a time / chunked**: ``groundjudge run --local-chunk 1`` and the default chunks, as subprocesses,
  interleaved ``--repeats`` times (median); the rate is read from the run's own records over the time from the end
  of its first scoring call to the end of its last (model loading and start-up left out), as
  ``scripts/bench_local_chunks.py`` measures it.
- **engine, one call**: the model inputs the judge makes for all 112 answers (recorded from a ``score_batch`` over
  all of them: the (evidence, claim) pairs for the cross-encoder kinds, the distinct answer and context sentences
  for ``cosine``), timed as one engine call at the placement the judge chose (``dtype=auto``) and in float32 and
  bfloat16 explicitly: the best case of sorting and batching. Fastest of ``--repeats`` (after a warm-up call).
- **sentence-transformers**: ``CrossEncoder.predict`` / ``SentenceTransformer.encode`` (float32) on the same inputs.
- **arithmetic limit**: the inputs' forward FLOPs (per token, per layer: 8 d^2 for the attention projections,
  4 d f for the feed-forward, 4 n d for the attention over an input of n tokens; padding not counted) over the rate
  this CPU multiplies a (2048 x d) by (d x f) matrix at, per dtype, with the same threads: the rate no backend of
  this model can pass on this machine.

``nli-default-shape`` is the ``nli`` judge on a randomly initialised model of its default's shape
(DeBERTa-v3-base, its real tokenizer; ``scripts/make_shape_model.py``): its verdicts mean nothing, its times are
those of the default model, beside the same MiniLM evidence embedder. Kinds without a model (``quip``, ``span``)
get the run figures only; ``hhem`` and ``minicheck`` need weights that
cannot be fetched here. ``--onednn`` adds the cost of the oneDNN shape-cache bound
(groundjudge/local_nli/onednn_caches.py): the engine call of ``nli`` and ``cosine`` with the caches held to one
entry (the default), to 16 and 64, and at the libraries' 1,024, each in a fresh process, with its peak RSS.

    python scripts/bench_perf.py --out results/perf [--repeats 3] [--onednn]

Threads: ``GROUNDJUDGE_THREADS`` (default: all cores), recorded with the date, CPU, versions and load average.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench_local_chunks import run_once  # noqa: E402  (scripts/ is on the path)

DATA = ROOT / "datasets" / "legal_qa" / "legal_qa.jsonl"
NLI_MODEL = "models/bench-minilm-nli3"
TRAINED_MODEL = "models/gj-minilm"
SHAPE_MODEL = "models/shape-deberta-v3-base"
"""Random weights in the shape of the `nli` judge's default model (scripts/make_shape_model.py): timing only."""
SPECS = {
    "nli": f"nli:model={NLI_MODEL},threshold=0.5",
    "nli-default-shape": f"nli:model={SHAPE_MODEL},threshold=0.5",
    "nli-tfidf": f"nli:model={NLI_MODEL},evidence=tfidf,threshold=0.5",
    "crossencoder": f"crossencoder:model={TRAINED_MODEL},threshold=0.5",
    "views": f"views:model={NLI_MODEL},threshold=0.5",
    "cosine": "cosine:threshold=0.5",
    "quip": "quip:n=21,threshold=0.5",
    "span": "span:threshold=0.5",
}
"""The judge each kind is measured as (a threshold given, so nothing is calibrated)."""
MODEL_KINDS = ("nli", "nli-default-shape", "nli-tfidf", "crossencoder", "views", "cosine")
UNIT = {"cosine": "sentences", "quip": "answers", "span": "answers"}
"""What a kind's rate counts (pairs for the cross-encoder kinds)."""


def unit_of(kind: str) -> str:
    """sentences / answers / pairs."""
    return UNIT.get(kind, "pairs")


# ---------------------------------------------------------------- the engine part, in a fresh process per kind

def record_inputs(kind: str, spec: str, examples: list) -> tuple[object, dict]:
    """The judge of ``spec`` and the model inputs its ``score_batch`` makes for ``examples`` (all in one chunk)."""
    from groundjudge.judges import build_judge
    from groundjudge.local_nli.embedder import SentenceEmbedder
    from groundjudge.local_nli.nli_model import NLIModel

    judge, _ = build_judge(spec)
    seen: dict = {"premises": [], "hypotheses": [], "texts": []}
    score_pairs, compute = NLIModel.score_pairs, SentenceEmbedder._compute

    def pairs_recorder(self, premises, hypotheses, **kw):
        seen["premises"] += list(premises)
        seen["hypotheses"] += list(hypotheses)
        seen["engine"] = self
        return score_pairs(self, premises, hypotheses, **kw)

    def texts_recorder(self, texts):
        seen["texts"] += list(texts)
        seen["embedder"] = self
        return compute(self, texts)

    NLIModel.score_pairs, SentenceEmbedder._compute = pairs_recorder, texts_recorder
    try:
        judge.score_batch(examples)
    finally:
        NLIModel.score_pairs, SentenceEmbedder._compute = score_pairs, compute
    return judge, seen


def fastest(call, repeats: int) -> float:
    """Seconds of the fastest of ``repeats`` calls, after one untimed warm-up call."""
    call()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def gemm_rate(d: int, f: int, dtype: str, repeats: int = 5) -> float:
    """The best FLOP/s of this CPU, at torch's threads, over the shapes of an encoder's linear layers in ``dtype``:
    2048 tokens times (d -> f), (f -> d) and (d -> d), through ``torch.nn.functional.linear`` and, in float32,
    oneDNN's pre-packed linear (the engine's own path, groundjudge.local_nli.batches)."""
    import torch

    kind = getattr(torch, dtype)
    best = 0.0
    for rows, cols in ((d, f), (f, d), (d, d)):
        x, w = torch.randn(2048, rows, dtype=kind), torch.randn(cols, rows, dtype=kind)
        calls = [lambda x=x, w=w: torch.nn.functional.linear(x, w)]
        if dtype == "float32" and torch.backends.mkldnn.is_available():
            packed = torch.ops.mkldnn._reorder_linear_weight(w)
            calls.append(lambda x=x, p=packed: torch.ops.mkldnn._linear_pointwise(x, p, None, "none", [], ""))
        with torch.inference_mode():
            for call in calls:
                seconds = fastest(lambda c=call: [c() for _ in range(20)], repeats) / 20
                best = max(best, 2 * 2048 * rows * cols / seconds)
    return best


def forward_flops(config, lengths: list[int]) -> float:
    """Forward FLOPs of a BERT-style encoder over inputs of these token lengths (no padding)."""
    d, f, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    return float(sum(n * layers * (8 * d * d + 4 * d * f + 4 * n * d) for n in lengths))


def engine_figures(kind: str, repeats: int, peers: bool = True) -> dict:
    """The one-call, peer and limit figures of one kind (run in its own process); ``peers=False``: the engine at
    the judge's placement only."""
    import torch

    from groundjudge.formats.load import load_examples
    from groundjudge.local_nli.embedder import SentenceEmbedder
    from groundjudge.local_nli.nli_model import NLIModel
    from groundjudge.local_nli.precision import native_bf16_cpu

    examples = list(load_examples([DATA]).examples)
    judge, seen = record_inputs(kind, SPECS[kind], examples)
    out: dict = {"kind": kind, "spec": SPECS[kind], "answers": len(examples), "threads": torch.get_num_threads()}
    dtypes = (["float32", "bfloat16"] if native_bf16_cpu() else ["float32"]) if peers else []
    if kind == "cosine":
        texts = list(dict.fromkeys(seen["texts"]))
        used: SentenceEmbedder = seen["embedder"]
        out["inputs"], out["placement"] = len(texts), used.placement.describe()
        engines = {"auto": SentenceEmbedder(name=used.path, cache=None, batch_size=used.batch_size)}
        for dtype in dtypes:
            engines[dtype] = SentenceEmbedder(name=used.path, cache=None, dtype=dtype, batch_size=used.batch_size)
        timed = {name: (engine.embed, texts) for name, engine in engines.items()}
        lengths = [len(ids) for ids in used.tokenizer(texts, truncation=True, max_length=used.max_length)["input_ids"]]
        if peers:
            from sentence_transformers import SentenceTransformer

            peer = SentenceTransformer(used.path, device="cpu")
            timed["sentence_transformers"] = (
                lambda inputs: peer.encode(inputs, batch_size=64, normalize_embeddings=True), texts)
    else:
        premises, hypotheses = seen["premises"], seen["hypotheses"]
        used: NLIModel = seen["engine"]
        pairs = list(zip(premises, hypotheses))
        distinct = list(dict.fromkeys(pairs))
        out["inputs"], out["distinct_inputs"], out["placement"] = len(pairs), len(distinct), used.placement.describe()
        engines = {"auto": used}
        for dtype in dtypes:
            engines[dtype] = NLIModel(name=used.name, batch_size=used.batch_size, max_length=used.max_length,
                                      device="cpu", dtype=dtype, labels=used.labels)
        timed = {name: (lambda inputs, e=engine: e.score_pairs([p for p, _ in inputs], [h for _, h in inputs]), pairs)
                 for name, engine in engines.items()}
        rows = used.encode([p for p, _ in distinct], [h for _, h in distinct], type(used.stats)())
        lengths = [len(row["input_ids"]) for row in rows]
        if peers:
            from sentence_transformers import CrossEncoder

            peer = CrossEncoder(used.name, device="cpu", max_length=used.max_length)

            def predict(inputs: list) -> object:
                return peer.predict(inputs, batch_size=32, show_progress_bar=False)

            timed["sentence_transformers"] = (predict, pairs)
            timed["sentence_transformers_distinct"] = (predict, distinct)
    from groundjudge.local_nli.vector_cache import SENTENCE_VECTORS

    def whole_judge(inputs: list) -> object:
        SENTENCE_VECTORS.clear()   # as a fresh run: every window, sentence and claim embedded again
        return judge.score_batch(inputs)

    timed["judge"] = (whole_judge, examples)
    for call, inputs in timed.values():
        call(inputs[:64])   # warm-up, each on a slice
    rounds: dict[str, list[float]] = {name: [] for name in timed}
    for _ in range(repeats):   # interleaved, so that a change in the machine's load hits every mode alike
        for name, (call, inputs) in timed.items():
            start = time.perf_counter()
            call(inputs)
            rounds[name].append(time.perf_counter() - start)
    out["seconds"] = {name: min(times) for name, times in rounds.items()}
    out["rounds"] = rounds
    config = used.model.config
    out["tokens"] = sum(lengths)
    out["flops"] = flops = forward_flops(config, lengths)
    out["gemm_flops_per_s"] = {dtype: gemm_rate(config.hidden_size, config.intermediate_size, dtype)
                               for dtype in dtypes}
    out["limit_seconds"] = {dtype: flops / rate for dtype, rate in out["gemm_flops_per_s"].items()}
    out["peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    return out


def engine_in_subprocess(kind: str, repeats: int, env: dict | None = None, peers: bool = True) -> dict:
    """:func:`engine_figures` of ``kind`` in a fresh process (``env`` added to this one's environment)."""
    done = subprocess.run([sys.executable, __file__, "--engine-only", kind, "--repeats", str(repeats),
                           *([] if peers else ["--no-peers"])], cwd=ROOT,
                          check=True, capture_output=True, text=True, env={**os.environ, **(env or {})})
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- the run part and the tables

def run_figures(kinds: list[str], repeats: int, tmp: Path) -> dict:
    """Median run figures per (kind, chunking): one at a time (chunk 1) and the default chunks (of an even number
    of repeats, the lower middle one: the figure never flatters the run)."""
    runs: dict = {(kind, chunk): [] for kind in kinds for chunk in (1, None)}
    for i in range(repeats):
        for (kind, chunk), done in runs.items():
            measured_as = "nli" if unit_of(kind) == "pairs" else "cosine"
            done.append(run_once(SPECS[kind], measured_as, chunk, tmp / f"{kind}-{chunk}-{i}"))
    figures = {}
    for (kind, chunk), done in runs.items():
        middle = sorted(done, key=lambda r: r["answers_per_s"] or 0)[(len(done) - 1) // 2]   # the lower of two
        figures.setdefault(kind, {})["one_at_a_time" if chunk == 1 else "chunked"] = {
            "answers_per_s": middle["answers_per_s"], "pairs_per_s": middle["units_per_s"],
            "chunk": middle["chunk"], "answers_measured": middle["answers_measured"],
            "all": [r["answers_per_s"] for r in done]}
    return figures


def table(kind: str, run: dict, engine: dict | None) -> list[str]:
    """The markdown table of one kind: answers/s and units/s of each way, and each over the run's chunked rate."""
    unit = unit_of(kind)
    lines = [f"### {kind} — `{SPECS[kind]}`", ""]
    if engine:
        per_answer = engine["inputs"] / engine["answers"]
        lines += [(f"{engine['answers']} answers, {engine['inputs']:,} {unit} to the model "
                   f"({per_answer:.1f} per answer, {engine['tokens']:,} tokens); the judge's placement: "
                   f"{engine['placement']}; {engine['threads']} torch threads."), ""]
    else:
        per_answer = 1.0
    chunked = run["chunked"]["answers_per_s"]
    lines += [f"| way | answers/s | {unit}/s | over run, chunked |", "|---|---:|---:|---:|"]

    def row(name: str, answers_per_s: float) -> str:
        return f"| {name} | {answers_per_s:.1f} | {answers_per_s * per_answer:.1f} | {answers_per_s / chunked:.2f}× |"

    lines.append(row("`run`, one answer at a time (`--local-chunk 1`)", run["one_at_a_time"]["answers_per_s"]))
    size = run["chunked"]["chunk"]
    lines.append(row(f"`run`, chunks of {size} (default)" if size > 1 else
                     "`run`, default (no batch path: one answer at a time)", chunked))
    if engine:
        n = engine["answers"]
        names = {"judge": "the judge's `score_batch`, one call over all answers (evidence selection included)",
                 "auto": "engine, one call, the judge's placement", "float32": "engine, one call, float32",
                 "bfloat16": "engine, one call, bfloat16",
                 "sentence_transformers": "sentence-transformers, float32 (`" +
                 ("SentenceTransformer.encode" if kind == "cosine" else "CrossEncoder.predict") + "`)",
                 "sentence_transformers_distinct": "sentence-transformers, float32, each distinct pair once"}
        for name in names:
            if name in engine["seconds"]:
                lines.append(row(names[name], n / engine["seconds"][name]))
        for dtype, seconds in engine["limit_seconds"].items():
            rate = engine["gemm_flops_per_s"][dtype] / 1e9
            lines.append(row(f"arithmetic limit, {dtype} ({rate:.0f} GFLOP/s GEMM)", n / seconds))
    return lines + [""]


def onednn_sweep(repeats: int) -> list[dict]:
    """The engine call of nli and cosine with the oneDNN shape caches at 1 (default), 64 and 1,024 entries."""
    rows = []
    for kind in ("nli", "cosine"):
        for capacity in ("bound", "16", "64", "1024"):
            env = {} if capacity == "bound" else {"ONEDNN_PRIMITIVE_CACHE_CAPACITY": capacity,
                                                   "LRU_CACHE_CAPACITY": capacity}
            figures = engine_in_subprocess(kind, repeats, env, peers=False)
            rows.append({"kind": kind, "capacity": capacity, "seconds": figures["seconds"]["auto"],
                         "peak_rss_gb": figures["peak_rss_gb"], "inputs": figures["inputs"]})
    return rows


def environment() -> dict:
    """Date, CPU, threads, versions and load, for the record."""
    import sentence_transformers
    import torch
    import transformers

    from groundjudge.local_nli.model import torch_threads
    from groundjudge.local_nli.precision import cpu_description

    return {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "cpu": cpu_description(),
            "cores": os.cpu_count(), "threads": torch_threads(), "python": sys.version.split()[0],
            "torch": torch.__version__, "transformers": transformers.__version__,
            "sentence_transformers": sentence_transformers.__version__, "load_average": os.getloadavg()[0],
            "data": str(DATA.relative_to(ROOT))}


def main() -> None:
    """Run every part asked, write perf.json and tables.md under --out."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kinds", nargs="+", default=list(SPECS), choices=list(SPECS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--onednn", action="store_true", help="also time the oneDNN cache bounds")
    parser.add_argument("--out", default="results/perf")
    parser.add_argument("--merge", action="store_true",
                        help="add these kinds to an existing perf.json under --out (its other kinds kept)")
    parser.add_argument("--engine-only", choices=MODEL_KINDS, help=argparse.SUPPRESS)
    parser.add_argument("--no-peers", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.engine_only:
        print(json.dumps(engine_figures(args.engine_only, args.repeats, peers=not args.no_peers)))
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    record = {"environment": environment(), "kinds": {}}
    if args.merge and (out / "perf.json").exists():
        record = json.loads((out / "perf.json").read_text(encoding="utf-8"))
        record.setdefault("environment_merged", []).append(environment())
    with tempfile.TemporaryDirectory(prefix="bench-perf-") as tmp:
        runs = run_figures(args.kinds, args.repeats, Path(tmp))
    for kind in args.kinds:
        engine = engine_in_subprocess(kind, args.repeats) if kind in MODEL_KINDS else None
        record["kinds"][kind] = {"run": runs[kind], "engine": engine}
        print("\n".join(table(kind, runs[kind], engine)), flush=True)
    if args.onednn:
        record["onednn"] = onednn_sweep(args.repeats)
        for row in record["onednn"]:
            print(f"oneDNN caches {row['capacity']:>5}: {row['kind']} one call {row['seconds']:.2f} s, "
                  f"peak RSS {row['peak_rss_gb']:.2f} GB", flush=True)
    record["environment"]["load_average_after"] = os.getloadavg()[0]
    (out / "perf.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    tables = [line for kind, done in record["kinds"].items() for line in table(kind, done["run"], done["engine"])]
    (out / "tables.md").write_text("\n".join(tables), encoding="utf-8")


if __name__ == "__main__":
    main()
