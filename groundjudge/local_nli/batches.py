"""Batched inference shared by the local models: length-sorted batches, padding, counts, OOM back-off.

Rows (token ids per input) are sorted by length and cut into batches, so batches carry little padding;
each batch is padded on the tokenizer's side, moved to the device and handed to the model's ``forward``;
results come back in input order. A batch that runs out of memory is halved and retried
(:func:`groundjudge.local_nli.devices.run_in_batches`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from groundjudge.local_nli.devices import run_in_batches


@dataclass
class ScoreStats:
    """What the scorer did: pairs scored, pairs whose premise was cut to fit, pairs whose claim was cut too."""

    pairs_scored: int = 0
    pairs_truncated: int = 0
    claims_truncated: int = 0
    """Pairs whose hypothesis alone did not fit, so it was cut as well (longest_first)."""
    batches: int = 0
    padded_tokens: int = 0
    """Tokens fed to the model, padding included (a measure of wasted work)."""
    real_tokens: int = 0

    def add(self, other: ScoreStats) -> None:
        """Accumulate another call's counts into this one."""
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_timings(self) -> dict[str, float]:
        """The counts as floats, for ``JudgeResult.timings``."""
        return {"pairs_scored": float(self.pairs_scored), "pairs_truncated": float(self.pairs_truncated),
                "claims_truncated": float(self.claims_truncated), "batches": float(self.batches)}


Row = dict[str, list[int]]
"""One input: ``input_ids`` and, as the tokenizer gives them, ``attention_mask`` / ``token_type_ids``."""
ROW_KEYS = ("input_ids", "attention_mask", "token_type_ids")


def accepted_inputs(model: Any) -> tuple[str, ...]:
    """The row keys the model's forward takes (a tokenizer may give token_type_ids to a model without them)."""
    import inspect

    params = inspect.signature(model.forward).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return ROW_KEYS
    return tuple(k for k in ROW_KEYS if k in params)


def to_row(encoded: Any, keys: Sequence[str], index: int | None = None) -> Row:
    """One row from a tokenizer's output (of one text, or item ``index`` of a batch), only the ``keys`` given."""
    return {k: list(encoded[k] if index is None else encoded[k][index]) for k in keys if k in encoded}


def pad_rows(rows: Sequence[Row], pad_id: int | None, left: bool = False) -> dict[str, Any]:
    """One batch as long tensors, padded to its longest row (on the left when ``left``)."""
    import torch

    width = max(len(r["input_ids"]) for r in rows)
    pad_values = {"input_ids": pad_id or 0, "token_type_ids": 0, "attention_mask": 0}
    batch = {}
    for key in rows[0]:
        fill = pad_values.get(key, 0)
        filled = [([fill] * (width - len(r[key])) + r[key]) if left else (r[key] + [fill] * (width - len(r[key])))
                  for r in rows]
        batch[key] = torch.tensor(filled, dtype=torch.long)
    return batch


def run_sorted(rows: Sequence[Row], batch_size: int, device: str, pad_id: int | None, left: bool,
               forward: Callable[[dict[str, Any]], Sequence[Any]], stats: ScoreStats,
               sort_by_length: bool = True) -> tuple[list[Any], int]:
    """``forward`` over length-sorted, padded batches on ``device``; its per-row results in input order.

    Returns (results, the batch size that worked last: smaller than asked after an out-of-memory retry).
    """
    import torch

    n = len(rows)
    results: list[Any] = [None] * n
    if not n:
        return results, batch_size
    lengths = np.array([len(r["input_ids"]) for r in rows])
    order = [int(i) for i in (np.argsort(lengths, kind="stable") if sort_by_length else np.arange(n))]

    def run(index: Sequence[int]) -> None:
        batch = {k: v.to(device) for k, v in pad_rows([rows[i] for i in index], pad_id, left).items()}
        with torch.inference_mode():
            out = forward(batch)
        for i, value in zip(index, out):
            results[i] = value
        stats.batches += 1
        stats.padded_tokens += int(batch["input_ids"].numel())
        stats.real_tokens += int(lengths[list(index)].sum())

    used = run_in_batches(order, batch_size, run, device)
    return results, used
