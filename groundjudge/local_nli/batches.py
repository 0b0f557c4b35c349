"""Batched inference shared by the local models: length-sorted batches, padding, counts, OOM back-off.

Rows (token ids per input) are sorted by length and cut into batches where the lengths jump
(:func:`length_batches`: at most ``batch_size`` rows each, the cut points that cost the fewest padded tokens plus
a fixed cost per forward call), so batches carry little padding even when one call mixes short claims and long
windows;
a row repeated in one call (the same claim against the same evidence window, which real data is full of: a
fifth of 1,000 SummEdits window x summary pairs) is run once and its result given to every copy; each batch is
padded on the tokenizer's side, moved to the device and handed to the model's ``forward``; results come back
in input order. A batch that runs out of memory is halved and retried
(:func:`groundjudge.local_nli.devices.run_in_batches`).

On CPU the linear layers of a float32 model can be run through oneDNN with pre-packed weights
(:func:`pack_linear_layers`): the bias is added inside the matrix product instead of being broadcast-copied
into the output first (a fifth of a MiniLM forward pass on CPU), and a BERT-style intermediate layer's GELU
is fused into its matrix product. Same module tree, same parameters, results equal up to float rounding.
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
    duplicates: int = 0
    """Rows identical to an earlier row of the same call: not run again, given that row's result."""

    def add(self, other: ScoreStats) -> None:
        """Accumulate another call's counts into this one."""
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_timings(self) -> dict[str, float]:
        """The counts as floats, for ``JudgeResult.timings``."""
        return {"pairs_scored": float(self.pairs_scored), "pairs_truncated": float(self.pairs_truncated),
                "claims_truncated": float(self.claims_truncated), "batches": float(self.batches),
                "duplicate_pairs": float(self.duplicates)}


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


PACKED_ATTR = "_groundjudge_packed"
"""Attribute of an ``nn.Linear`` holding its oneDNN-packed weight (see :func:`pack_linear_layers`)."""


class _PackedWeight:
    """The oneDNN-packed copy of one layer's weight and the weight version it was packed from. A copy or a
    pickle of the model carries an empty one (oneDNN tensors cannot be copied): it is packed again on use."""

    __slots__ = ("tensor", "version")

    def __init__(self, tensor: Any = None, version: int = -1):
        self.tensor, self.version = tensor, version

    def __deepcopy__(self, memo: dict) -> _PackedWeight:
        return _PackedWeight()

    def __reduce__(self) -> tuple:
        return _PackedWeight, ()


def _packed_weight(linear: Any, x: Any) -> Any:
    """The layer's packed weight when it applies to input ``x`` (CPU, float32, no gradient wanted), packed
    again if the weight changed since; else None (the plain path)."""
    import torch

    weight = linear.weight
    if (x.device.type != "cpu" or x.dtype != torch.float32 or weight.dtype != torch.float32
            or weight.device.type != "cpu" or (torch.is_grad_enabled() and weight.requires_grad)):
        return None
    packed = getattr(linear, PACKED_ATTR)
    version = _weight_version(weight)
    if packed.tensor is None or packed.version != version:
        with torch.no_grad():
            packed.tensor, packed.version = torch.ops.mkldnn._reorder_linear_weight(weight.detach()), version
    return packed.tensor


def _weight_version(weight: Any) -> int:
    """The weight's in-place change counter. A weight made under ``torch.inference_mode`` (a model loaded or
    copied there) has none: it counts as never changed, so its packed copy is made once."""
    return -2 if weight.is_inference() else weight._version


def _linear_forward(self: Any, x: Any) -> Any:
    """``nn.Linear.forward`` with the bias added inside oneDNN's product on the packed weight where it applies."""
    import torch
    import torch.nn.functional as F

    packed = _packed_weight(self, x)
    if packed is None:
        return F.linear(x, self.weight, self.bias)
    return torch.ops.mkldnn._linear_pointwise(x, packed, self.bias, "none", [], "")


def _intermediate_forward(self: Any, hidden_states: Any) -> Any:
    """A transformers ``XxxIntermediate.forward`` (``act(dense(x))``) with the exact GELU fused into the product."""
    import torch

    packed = _packed_weight(self.dense, hidden_states) if _is_exact_gelu(self.intermediate_act_fn) else None
    if packed is None:
        return self.intermediate_act_fn(self.dense(hidden_states))
    return torch.ops.mkldnn._linear_pointwise(hidden_states, packed, self.dense.bias, "gelu", [], "none")


# a pickled model records a bound method by its name: "forward" unpickles as the class's own forward
_linear_forward.__name__ = _intermediate_forward.__name__ = "forward"


def _mkldnn_linear_works() -> bool:
    """Whether this torch build runs oneDNN's pre-packed linear (and gets it right) on this CPU."""
    import torch

    try:
        weight, bias, x = torch.randn(8, 16), torch.randn(8), torch.randn(2, 3, 16)
        packed = torch.ops.mkldnn._reorder_linear_weight(weight)
        out = torch.ops.mkldnn._linear_pointwise(x, packed, bias, "none", [], "")
        fused = torch.ops.mkldnn._linear_pointwise(x, packed, bias, "gelu", [], "none")
        reference = torch.nn.functional.linear(x, weight, bias)
        return bool(torch.allclose(out, reference, atol=1e-4)
                    and torch.allclose(fused, torch.nn.functional.gelu(reference), atol=1e-4))
    except (AttributeError, RuntimeError, NotImplementedError):
        return False


def _is_exact_gelu(act: Any) -> bool:
    """transformers' GELUActivation with torch's exact (erf) GELU, or ``nn.GELU()``."""
    import torch

    if type(act).__name__ == "GELUActivation":
        return getattr(act, "act", None) is torch.nn.functional.gelu
    return isinstance(act, torch.nn.GELU) and act.approximate == "none"


def pack_linear_layers(model: Any) -> int:
    """Run every float32 ``nn.Linear`` of a CPU model on a oneDNN-packed copy of its weight whenever no gradient
    is needed (the bias is then added inside the product), and a transformers BERT-style intermediate layer
    (``act(dense(x))``, exact GELU) as one fused product. Only the layers' ``forward`` changes: module tree,
    parameters and state dict stay as they were, results equal up to float rounding, and a copy or pickle of
    the model computes the same (a copy packs again on use, a pickle gets the plain forward back).
    Returns the number of layers newly packed (0 where oneDNN is missing, the model is not on CPU or float32).
    Idempotent: a model shared by several judges is packed once. Costs a second copy of the linear weights in
    memory (the packed one), about 40 MB for MiniLM-L6."""
    import types

    import torch

    if not torch.backends.mkldnn.is_available() or not _mkldnn_linear_works():
        return 0
    linears = [m for m in model.modules() if type(m) is torch.nn.Linear and m.weight.device.type == "cpu"
               and m.weight.dtype == torch.float32 and not hasattr(m, PACKED_ATTR)]
    for linear in linears:
        setattr(linear, PACKED_ATTR, _PackedWeight())
        linear.forward = types.MethodType(_linear_forward, linear)
    for module in model.modules():   # transformers' own XxxIntermediate: act(dense(x)), nothing between
        if (type(module).__module__.startswith("transformers.models.") and type(module).__name__.endswith(
                "Intermediate") and hasattr(getattr(module, "dense", None), PACKED_ATTR)
                and _is_exact_gelu(getattr(module, "intermediate_act_fn", None))):
            module.forward = types.MethodType(_intermediate_forward, module)
    return len(linears)


BATCH_OVERHEAD_TOKENS = 64
"""What one forward call costs besides its tokens, in tokens: a MiniLM-L6 forward pass of one 16-token row takes as
long as ~60 tokens in a large batch on this project's 2-core CPU (fixed per-call work: dispatch, small matrix
products, pooling). :func:`length_batches` cuts a batch where that is cheaper than the padding it saves."""


def length_batches(lengths: Sequence[int], max_rows: int, overhead: int = BATCH_OVERHEAD_TOKENS) -> list[int]:
    """Sizes of consecutive batches over rows sorted by ascending length (each at most ``max_rows`` rows) that
    minimise the tokens the model is fed, padding included, plus ``overhead`` per batch.

    A batch costs its rows times its longest row's length: one call's 20 short claims and 30 long windows sorted
    into one batch of 50 cost 50 long rows; two batches cost 20 short rows, 30 long ones and one more call.
    Exact (dynamic programming over the cut points, O(n x max_rows)).
    """
    n, cap = len(lengths), max(int(max_rows), 1)
    if n == 0:
        return []
    longest = np.asarray(lengths, dtype=np.float64)
    best = np.zeros(n + 1)
    start_of = np.zeros(n + 1, dtype=np.int64)
    for end in range(1, n + 1):
        starts = np.arange(max(0, end - cap), end)
        cost = best[starts] + (end - starts) * longest[end - 1] + overhead
        pick = int(np.argmin(cost))
        best[end], start_of[end] = cost[pick], starts[pick]
    sizes, end = [], n
    while end > 0:
        sizes.append(end - int(start_of[end]))
        end = int(start_of[end])
    return sizes[::-1]


@dataclass(frozen=True)
class BatchPlan:
    """How :func:`run_sorted` batches rows: how many per batch, on which device, padded how, in what order."""

    batch_size: int
    device: str
    pad_id: int | None = None
    """The tokenizer's padding token id (None: 0)."""
    left: bool = False
    """Pad on the left (the tokenizer's ``padding_side``)."""
    sort_by_length: bool = True
    """Batch rows in length order, cut where the lengths jump (:func:`length_batches`), so batches carry little
    padding (False: input order in slices of ``batch_size``, for comparison)."""
    deduplicate: bool = True
    """Run a row equal to an earlier one once (False: every row runs, for comparison)."""

    @classmethod
    def for_tokenizer(cls, tokenizer: Any, batch_size: int, device: str, *, sort_by_length: bool = True,
                      deduplicate: bool = True) -> BatchPlan:
        """The plan for rows from ``tokenizer``: padded with its pad token on its padding side."""
        return cls(batch_size=batch_size, device=device, pad_id=tokenizer.pad_token_id,
                   left=tokenizer.padding_side == "left", sort_by_length=sort_by_length, deduplicate=deduplicate)


def run_sorted(rows: Sequence[Row], forward: Callable[[dict[str, Any]], Sequence[Any]], plan: BatchPlan,
               stats: ScoreStats) -> tuple[list[Any], int]:
    """``forward`` over length-sorted, padded batches on ``plan.device``; its per-row results in input order.

    A row equal to an earlier one (same token ids, same segment ids) is not run: it gets the earlier row's result
    (the very object) and is counted in ``stats.duplicates`` (``plan.deduplicate=False``: every row runs, for
    comparison).
    Returns (results, the batch size that worked last: smaller than asked after an out-of-memory retry).
    """
    import torch

    n = len(rows)
    results: list[Any] = [None] * n
    if not n:
        return results, plan.batch_size
    lengths = np.array([len(r["input_ids"]) for r in rows])
    first_of: dict[tuple, int] = {}
    copy_of = [first_of.setdefault(_row_key(row), i) if plan.deduplicate else i for i, row in enumerate(rows)]
    unique = np.array([i for i in range(n) if copy_of[i] == i])
    stats.duplicates += n - len(unique)
    order = [int(i) for i in (unique[np.argsort(lengths[unique], kind="stable")] if plan.sort_by_length
                              else unique)]
    sizes = length_batches(lengths[order], plan.batch_size) if plan.sort_by_length else None

    def run(index: Sequence[int]) -> None:
        batch = {k: v.to(plan.device) for k, v in pad_rows([rows[i] for i in index], plan.pad_id, plan.left).items()}
        with torch.inference_mode():
            out = forward(batch)
        for i, value in zip(index, out):
            results[i] = value
        stats.batches += 1
        stats.padded_tokens += int(batch["input_ids"].numel())
        stats.real_tokens += int(lengths[list(index)].sum())

    used = run_in_batches(order, plan.batch_size, run, plan.device, sizes)
    for i, first in enumerate(copy_of):
        if first != i:
            results[i] = results[first]
    return results, used


def _row_key(row: Row) -> tuple:
    """What makes two rows the same input to a model: every id sequence it is given."""
    return tuple(tuple(row[k]) for k in ROW_KEYS if k in row)
