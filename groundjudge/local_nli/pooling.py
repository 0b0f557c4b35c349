"""How a sentence-transformers model turns token vectors into one sentence vector, read from its own folder.

A sentence-transformers model folder lists its modules in ``modules.json`` (a Transformer, then a Pooling, often a
Normalize); the Pooling module's ``config.json`` names the pooling modes (all-MiniLM-L6-v2: mean over the real
tokens) and ``sentence_bert_config.json`` the longest input (256 tokens for all-MiniLM-L6-v2). The engine embedder
(:mod:`groundjudge.local_nli.embedder`) reads them here and pools as sentence-transformers does, so its vectors are
the model's own. A folder without ``modules.json`` (a plain transformers model) gets what sentence-transformers
gives it: mean pooling, no Normalize. Modules the engine does not run (Dense, LayerNorm, custom ones) and pooling
modes it does not know are refused with the model's name, instead of giving other vectors than the model's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MODES = ("cls_token", "max_tokens", "mean_tokens", "mean_sqrt_len_tokens")
"""Pooling modes the engine computes, in the order sentence-transformers concatenates them."""
_RUN_HERE = ("Transformer", "Pooling", "Normalize")


class PoolingUnsupported(ValueError):
    """A model whose modules or pooling the engine embedder cannot reproduce."""


@dataclass(frozen=True)
class PoolingConfig:
    """What a sentence-transformers model does after its transformer: pooling modes, normalisation, input limit."""

    modes: tuple[str, ...] = ("mean_tokens",)
    normalize: bool = False
    """The model ends in a Normalize module (unit-length vectors)."""
    max_seq_length: int | None = None
    """The longest input in tokens the model was set up for (None: the tokenizer's limit)."""


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def read_pooling(folder: str) -> PoolingConfig:
    """The pooling of the sentence-transformers model in ``folder`` (mean, no Normalize, without modules.json)."""
    root = Path(folder)
    limit = None
    if (root / "sentence_bert_config.json").is_file():
        limit = _read(root / "sentence_bert_config.json").get("max_seq_length")
    if not (root / "modules.json").is_file():
        return PoolingConfig(max_seq_length=limit)
    modes: tuple[str, ...] = ()
    normalize = False
    for module in sorted(_read(root / "modules.json"), key=lambda m: m.get("idx", 0)):
        kind = str(module.get("type", "")).rsplit(".", 1)[-1]
        if kind not in _RUN_HERE:
            raise PoolingUnsupported(f"embedder {folder}: its module {module.get('type')!r} is not run by the engine "
                                     f"(it runs {', '.join(_RUN_HERE)}); use a model made of those")
        if kind == "Pooling":
            modes = _modes(root / module.get("path", ""), folder)
        normalize = normalize or kind == "Normalize"
    return PoolingConfig(modes=modes or ("mean_tokens",), normalize=normalize, max_seq_length=limit)


def _modes(pooling_folder: Path, model: str) -> tuple[str, ...]:
    """The pooling modes switched on in a Pooling module's config, refusing any the engine does not compute."""
    config = _read(pooling_folder / "config.json") if (pooling_folder / "config.json").is_file() else {}
    on = [key.removeprefix("pooling_mode_") for key, value in config.items()
          if key.startswith("pooling_mode_") and value is True]
    unknown = [mode for mode in on if mode not in MODES]
    if unknown:
        raise PoolingUnsupported(f"embedder {model}: pooling {', '.join(unknown)} is not computed by the engine "
                                 f"(it computes {', '.join(MODES)})")
    return tuple(mode for mode in MODES if mode in on)


def pool(hidden: Any, mask: Any, config: PoolingConfig) -> Any:
    """Sentence vectors (batch, dim x modes) from token vectors (batch, tokens, dim) and the attention mask,
    computed in float32 whatever the model's precision; unit length when the model normalises."""
    import torch

    hidden = hidden.float()
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    parts = []
    for mode in config.modes:
        if mode == "cls_token":
            parts.append(hidden[:, 0])
        elif mode == "max_tokens":
            parts.append(hidden.masked_fill(weights == 0, -1e9).max(dim=1).values)
        else:
            total = (hidden * weights).sum(dim=1)
            count = weights.sum(dim=1).clamp(min=1e-9)
            parts.append(total / (count if mode == "mean_tokens" else count.sqrt()))
    vectors = torch.cat(parts, dim=1) if len(parts) > 1 else parts[0]
    return torch.nn.functional.normalize(vectors, p=2, dim=1) if config.normalize else vectors
