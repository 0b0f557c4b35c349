"""ONNX Runtime backend of the engine embedder: a transformer's token vectors, exported once, optionally int8.

The same export as the cross-encoders' (:mod:`groundjudge.local_nli.onnx_backend`: eager attention, dynamic
batch and sequence axes, a cache folder keyed by the model's files, onnxruntime's per-channel dynamic int8), but
of the bare transformer (``AutoModel``) with its ``last_hidden_state`` as output: pooling stays in
:mod:`groundjudge.local_nli.pooling`, so every backend pools the same way.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from groundjudge.local_nli.model import torch_threads
from groundjudge.local_nli.onnx_backend import INPUTS, OnnxUnavailable, cache_root, model_key

log = logging.getLogger(__name__)

OUTPUT = "last_hidden_state"


def _require() -> Any:
    try:
        import onnxruntime
    except ImportError as err:   # pragma: no cover - depends on the installation
        raise OnnxUnavailable("backend=onnx needs onnxruntime and onnx: pip install onnxruntime onnx") from err
    return onnxruntime


def export_encoder(path: str, int8: bool = False) -> Path:
    """The ONNX file of the transformer at ``path`` (exported, and quantised, on first use)."""
    _require()
    folder = cache_root() / model_key(path)
    fp32, quantised = folder / "encoder.onnx", folder / "encoder.int8.onnx"
    if not fp32.exists():
        _export_fp32(path, fp32)
    if int8 and not quantised.exists():
        from onnxruntime.quantization import QuantType, quantize_dynamic

        log.info("quantising %s to int8", fp32)
        partial = quantised.with_suffix(".part")
        quantize_dynamic(str(fp32), str(partial), weight_type=QuantType.QInt8, per_channel=True)
        partial.rename(quantised)
    return quantised if int8 else fp32


def _export_fp32(path: str, target: Path) -> None:
    """torch.onnx export of ``AutoModel`` (eager attention where the architecture has it) to ``target``."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    log.info("exporting %s to ONNX (once per model)", path)
    tokenizer = AutoTokenizer.from_pretrained(path)
    try:
        model = AutoModel.from_pretrained(path, attn_implementation="eager").eval()
    except (ValueError, TypeError, ImportError) as err:
        log.info("no eager attention for %s (%s); exporting its default attention", path, err)
        model = AutoModel.from_pretrained(path).eval()
    sample = tokenizer(["A sentence to trace."], return_tensors="pt")
    names = [name for name in INPUTS if name in sample]

    class Tokens(torch.nn.Module):
        """The transformer answering its last hidden state alone (what the graph outputs)."""

        def __init__(self) -> None:
            super().__init__()
            self.inner = model

        def forward(self, *inputs: Any) -> Any:
            return self.inner(**dict(zip(names, inputs))).last_hidden_state

    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".part")
    with torch.inference_mode(), warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the TorchScript exporter's notes on traced control flow
        torch.onnx.export(Tokens().eval(), tuple(sample[n] for n in names), str(partial), input_names=names,
                          output_names=[OUTPUT], dynamic_axes={n: {0: "batch", 1: "tokens"} for n in names},
                          opset_version=17, dynamo=False)
    partial.rename(target)


class OnnxEncoder:
    """An ONNX Runtime session that answers like a transformers encoder: ``model(**batch).last_hidden_state``."""

    def __init__(self, path: str, int8: bool = False):
        """Export (once) and open the transformer at ``path``; ``config`` is its transformers config."""
        from transformers import AutoConfig

        onnxruntime = _require()
        self.file = export_encoder(path, int8)
        self.config = AutoConfig.from_pretrained(path)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = torch_threads()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")   # as the cross-encoders' session
        self.session = onnxruntime.InferenceSession(str(self.file), options, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]

    def forward(self, input_ids: Any = None, attention_mask: Any = None, token_type_ids: Any = None) -> SimpleNamespace:
        """Token vectors (a torch tensor) for a padded batch of token ids."""
        import torch

        batch = {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids}
        feed = {name: batch[name].cpu().numpy() for name in self.inputs}
        return SimpleNamespace(last_hidden_state=torch.from_numpy(self.session.run([OUTPUT], feed)[0]))

    __call__ = forward
