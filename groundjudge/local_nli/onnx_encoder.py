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

from groundjudge.local_nli.onnx_backend import INPUTS, cached_export, open_session

log = logging.getLogger(__name__)

OUTPUT = "last_hidden_state"


def export_encoder(path: str, int8: bool = False) -> Path:
    """The ONNX file of the transformer at ``path`` (exported, and quantised, on first use)."""
    return cached_export(path, int8, "encoder", _export_fp32)


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

        self.file = export_encoder(path, int8)
        self.config = AutoConfig.from_pretrained(path)
        self.session = open_session(self.file)
        self.inputs = [i.name for i in self.session.get_inputs()]

    def forward(self, input_ids: Any = None, attention_mask: Any = None, token_type_ids: Any = None) -> SimpleNamespace:
        """Token vectors (a torch tensor) for a padded batch of token ids."""
        import torch

        batch = {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids}
        feed = {name: batch[name].cpu().numpy() for name in self.inputs}
        return SimpleNamespace(last_hidden_state=torch.from_numpy(self.session.run([OUTPUT], feed)[0]))

    __call__ = forward
