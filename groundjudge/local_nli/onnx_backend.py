"""ONNX Runtime backend for the NLI engine: the same model exported once, optionally int8-quantised.

``export(path, int8)`` writes ``model.onnx`` (and ``model.int8.onnx``) into a
cache folder keyed by the model's files, so a model is exported once per
machine; :class:`OnnxClassifier` then stands in for the transformers model
(``model(**batch).logits``), so batching, label mapping and truncation
counting stay in :mod:`groundjudge.local_nli.nli_model`.

Dynamic int8 quantisation of the weights (``onnxruntime.quantization``, one
scale per output channel) is the usual CPU speed-up for BERT-sized encoders; the benchmark script reports
how far it moves the probabilities.

The model is exported with transformers' *eager* attention where the
architecture has it: the SDPA path traces into a masked-softmax with
``IsNaN`` / ``Where`` guards on every (batch, head, token, token) score, which
took a quarter of ONNX Runtime's time on MiniLM, while the eager graph is plain
MatMul / Softmax that ORT fuses (scripts/bench_nli_engine.py, results/engine).
"""

from __future__ import annotations

import hashlib
import logging
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from groundjudge.local_nli.cls_only import cls_only_last_layer
from groundjudge.local_nli.model import torch_threads

log = logging.getLogger(__name__)

INPUTS = ("input_ids", "attention_mask", "token_type_ids")

EXPORT_VERSION = "eager-attention, per-channel int8, cls-only last layer"
"""Part of the cache key: exports made by an older exporter (SDPA attention, per-tensor int8, a full last layer)
are not reused."""


class OnnxUnavailable(RuntimeError):
    """onnxruntime (or onnx) is not installed."""


def cache_root() -> Path:
    """Where exported models live (``GROUNDJUDGE_ONNX_CACHE``, else ~/.cache/groundjudge/onnx)."""
    return Path(os.environ.get("GROUNDJUDGE_ONNX_CACHE", Path.home() / ".cache" / "groundjudge" / "onnx"))


def model_key(path: str) -> str:
    """A content key of a model directory: names, sizes and modification times of its files."""
    digest = hashlib.sha256(f"{Path(path).resolve()}\x1e{EXPORT_VERSION}".encode())
    for file in sorted(Path(path).rglob("*")):
        if file.is_file() and "checkpoints" not in file.parts:
            stat = file.stat()
            digest.update(f"{file.relative_to(path)}\x1f{stat.st_size}\x1f{int(stat.st_mtime)}".encode())
    return digest.hexdigest()[:16]


def require_onnxruntime() -> Any:
    """The onnxruntime module, or :class:`OnnxUnavailable` saying what to install."""
    try:
        import onnxruntime
    except ImportError as err:   # pragma: no cover - depends on the installation
        raise OnnxUnavailable("backend=onnx needs onnxruntime and onnx: pip install onnxruntime onnx") from err
    return onnxruntime


def export(path: str, int8: bool = False) -> Path:
    """The ONNX file of a sequence-classification model (exported, and quantised, on first use)."""
    return cached_export(path, int8, "model", export_fp32)


def cached_export(path: str, int8: bool, stem: str, export_float: Callable[[str, Path], None]) -> Path:
    """``STEM.onnx`` (or ``STEM.int8.onnx``) of the model at ``path`` in the export cache: ``export_float(path,
    target)`` writes the float32 file on first use, and the int8 copy is quantised from it on first use."""
    require_onnxruntime()
    folder = cache_root() / model_key(path)
    fp32, quantised = folder / f"{stem}.onnx", folder / f"{stem}.int8.onnx"
    if not fp32.exists():
        export_float(path, fp32)
    if int8 and not quantised.exists():
        from onnxruntime.quantization import QuantType, quantize_dynamic

        log.info("quantising %s to int8", fp32)
        partial = quantised.with_suffix(".part")
        # one scale per output channel: as fast as one per tensor, and on a fine-tuned MiniLM it moved the
        # probabilities half as far (mean |dp| 0.014 instead of 0.032; scripts/bench_nli_engine.py)
        quantize_dynamic(str(fp32), str(partial), weight_type=QuantType.QInt8, per_channel=True)
        partial.rename(quantised)
    return quantised if int8 else fp32


def export_fp32(path: str, target: Path, *, eager_attention: bool = True, cls_only: bool = True) -> None:
    """torch.onnx export with dynamic batch and sequence axes (TorchScript exporter: no extra packages).

    ``eager_attention=False`` / ``cls_only=False`` export the model's default attention / its full last layer
    (what older exporters made; the benchmark's ablations time them)."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    log.info("exporting %s to ONNX (once per model)", path)
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = None
    if eager_attention:
        try:   # eager attention exports to a plain MatMul/Softmax graph (see the module notes)
            model = AutoModelForSequenceClassification.from_pretrained(path, attn_implementation="eager").eval()
        except (ValueError, TypeError, ImportError) as err:
            log.info("no eager attention for %s (%s); exporting its default attention", path, err)
    if model is None:
        model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    if cls_only:   # the graph computes the last layer for [CLS] only where the head reads only that
        cls_only_last_layer(model)
    sample = tokenizer(["A premise."], ["A claim."], return_tensors="pt")
    names = [name for name in INPUTS if name in sample]
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".part")
    with torch.inference_mode(), warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the TorchScript exporter's notes on traced control flow
        torch.onnx.export(model, tuple(sample[n] for n in names), str(partial), input_names=names,
                          output_names=["logits"], dynamic_axes={n: {0: "batch", 1: "tokens"} for n in names},
                          opset_version=17, dynamo=False)
    partial.rename(target)


def open_session(file: Path) -> Any:
    """An ONNX Runtime CPU session of ``file``: the engine's thread count, every graph optimisation, and idle
    worker threads that sleep."""
    onnxruntime = require_onnxruntime()
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = torch_threads()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    # idle worker threads sleep instead of spinning: on a CPU shared with other work (an LLM server, other
    # judges) spinning threads take cores from the ones doing the work (10-20% in scripts/bench_nli_engine.py)
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(str(file), options, providers=["CPUExecutionProvider"])


class OnnxClassifier:
    """An ONNX Runtime session that answers like a transformers classifier: ``model(**batch).logits``."""

    def __init__(self, path: str, int8: bool = False):
        """Export (once) and open the model at ``path``; ``config`` is the transformers config."""
        from transformers import AutoConfig

        self.file = export(path, int8)
        self.config = AutoConfig.from_pretrained(path)
        self.session = open_session(self.file)
        self.inputs = [i.name for i in self.session.get_inputs()]

    def __call__(self, **batch: Any) -> SimpleNamespace:
        """Logits (a torch tensor) for a padded batch of token ids."""
        import torch

        feed = {name: batch[name].cpu().numpy() for name in self.inputs}
        return SimpleNamespace(logits=torch.from_numpy(self.session.run(["logits"], feed)[0]))
