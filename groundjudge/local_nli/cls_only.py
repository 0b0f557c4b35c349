"""The last encoder layer of a BERT-style classifier computed for the [CLS] position only.

A sequence classifier's head reads one vector: the last layer's output at position 0. Every other position of
that layer is computed and thrown away: its query projection, attention output, residual, layer norm and
feed-forward block, five sixths of the layer's matrix products; on MiniLM-L6, 14% of the linear layers' FLOPs
and 1.15x the engine's fp32 speed (scripts/bench_nli_engine.py, results/engine/bench_peers.json). :func:`cls_only_last_layer` makes that layer compute position 0 alone: keys and values from every
token, as before, and the rest for [CLS]. The logits are the same up to float rounding.

It applies to BERT, RoBERTa and XLM-RoBERTa sequence classifiers (their heads read ``[:, 0]``; the NLI
cross-encoders people deploy are these), with eager or SDPA attention, when no gradient is wanted: training, a
model whose config asks for more than logits, other attention kernels and other architectures keep the layer's
own forward.
"""

from __future__ import annotations

import types
from typing import Any

HEADS_READING_CLS = ("BertForSequenceClassification", "RobertaForSequenceClassification",
                     "XLMRobertaForSequenceClassification")
"""Classifiers whose head reads only the last layer's position 0 (BERT's pooler, RoBERTa's classification head)."""

CLS_ONLY_ATTR = "_groundjudge_cls_only"
"""Set on a layer whose forward was replaced (so doing it twice is a no-op)."""


def cls_only_last_layer(model: Any) -> bool:
    """Make the last encoder layer of a BERT / RoBERTa / XLM-RoBERTa sequence classifier compute [CLS] only, when
    run without gradients. Returns whether it was done (False for other models: they are left as they were)."""
    if type(model).__name__ not in HEADS_READING_CLS:
        return False
    config = model.config
    if (getattr(config, "is_decoder", False) or getattr(config, "add_cross_attention", False)
            or getattr(config, "position_embedding_type", "absolute") != "absolute"
            or getattr(config, "_attn_implementation", None) not in ("eager", "sdpa")):
        return False
    layers = getattr(getattr(model.base_model, "encoder", None), "layer", None)
    if not layers:
        return False
    last = layers[-1]
    if getattr(last, CLS_ONLY_ATTR, False):
        return True
    attention = getattr(getattr(last, "attention", None), "self", None)
    if not all(hasattr(attention, name) for name in ("query", "key", "value", "scaling", "attention_head_size")):
        return False
    setattr(last, CLS_ONLY_ATTR, True)
    last.forward = types.MethodType(_cls_only_forward, last)
    return True


def _wants_more_than_logits(config: Any) -> bool:
    """A config asking for every layer's hidden states or attentions (which the shortcut does not make)."""
    return bool(getattr(config, "output_hidden_states", False) or getattr(config, "output_attentions", False))


def _cls_only_forward(self: Any, hidden_states: Any, attention_mask: Any = None, *args: Any, **kwargs: Any) -> Any:
    """The layer for position 0: attention of [CLS] over every token, then the output block and feed-forward on
    [CLS]. Returns (batch, 1, hidden). Falls back to the layer's own forward while a gradient is wanted."""
    import torch
    import torch.nn.functional as F

    if (torch.is_grad_enabled() or self.training or any(a is not None for a in args)
            or any(v is not None and v is not False for v in kwargs.values())
            or _wants_more_than_logits(self.attention.self.config)):
        return type(self).forward(self, hidden_states, attention_mask, *args, **kwargs)
    attention = self.attention.self
    batch, tokens, _ = hidden_states.shape
    head = attention.attention_head_size
    cls = hidden_states[:, :1]
    query = attention.query(cls).view(batch, 1, -1, head).transpose(1, 2)
    key = attention.key(hidden_states).view(batch, tokens, -1, head).transpose(1, 2)
    value = attention.value(hidden_states).view(batch, tokens, -1, head).transpose(1, 2)
    mask = attention_mask
    if mask is not None:
        if mask.dim() == 2:   # (batch, tokens) of 1 / 0
            mask = mask[:, None, None, :].bool()
        elif mask.shape[-2] != 1:   # (batch, 1, query, key): the row of the [CLS] query
            mask = mask[..., :1, :]
    context = F.scaled_dot_product_attention(query, key, value, attn_mask=mask, scale=attention.scaling)
    context = context.transpose(1, 2).reshape(batch, 1, -1)
    attended = self.attention.output(context, cls)
    return self.output(self.intermediate(attended), attended)
