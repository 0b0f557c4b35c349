"""Where and in what precision a local model runs, and how a batch too big for the device is retried.

One rule for every local judge (``nli``, ``crossencoder``, ``hhem``, ``minicheck``, ``spans``):

* ``device``: ``auto`` (CUDA if torch sees a GPU, else Apple MPS, else CPU), or ``cpu`` / ``cuda`` / ``mps``,
  an error when this machine cannot give it (never a silent fall-back to CPU).
* ``dtype``: ``auto`` (default), ``float32``, ``bfloat16`` or ``float16``. ``auto`` proposes bfloat16 where the
  device computes it natively (a CPU with AMX or AVX512-BF16, a CUDA GPU that supports it; see
  :mod:`~groundjudge.local_nli.precision`), else float32; the proposal is then checked against float32 on the
  shipped check set when the model loads (:mod:`~groundjudge.local_nli.backend_check`). A forced bfloat16 on a
  CPU or GPU without native bf16 is refused (it would be emulated, slower than float32); float16 is refused on
  CPU, where half precision matmuls are missing or far slower than float32.
* Out of GPU memory, a batch is halved and retried, down to one pair at a time; the size that worked is
  kept for the next calls.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from groundjudge.local_nli.precision import bf16_flags_seen, native_bf16

log = logging.getLogger(__name__)

Device = Literal["auto", "cpu", "cuda", "mps"]
"""The device setting of a local judge."""
DType = Literal["auto", "float32", "bfloat16", "float16"]
"""The precision setting of a local judge."""
DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda", "mps")
DTYPES: tuple[str, ...] = ("auto", "float32", "bfloat16", "float16")


class DeviceError(ValueError):
    """A device or precision that this machine (or this torch build) cannot give."""


def best_device() -> str:
    """cuda if available, then mps, else cpu."""
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def resolve_device(device: str = "auto") -> str:
    """The device to load on: ``auto`` picks the best one here; an explicit one must exist (else DeviceError)."""
    if device not in DEVICES:
        raise DeviceError(f"unknown device {device!r}; use one of: {', '.join(DEVICES)}")
    if device == "auto":
        return best_device()
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        build = "a CPU-only build" if "+cpu" in torch.__version__ or torch.version.cuda is None else "a CUDA build"
        raise DeviceError(f"device=cuda was asked for, but torch {torch.__version__} ({build}) sees no CUDA GPU; "
                          "use device=auto or device=cpu, or install a CUDA build of torch on a machine with a GPU")
    if device == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise DeviceError("device=mps was asked for, but torch sees no Apple Metal (MPS) device; "
                          "use device=auto or device=cpu")
    return device


def resolve_dtype(dtype: str, device: str, bf16: bool = False, flags: frozenset[str] | None = None) -> str:
    """The precision name for a resolved device; ``bf16=True`` (the older setting) means ``bfloat16``.

    ``auto`` gives ``bfloat16`` where ``device`` computes it natively (``flags``: the CPU's feature flags,
    default this machine's), else ``float32``; the caller then checks a bfloat16 proposal against float32
    (:func:`groundjudge.local_nli.backend_check.settle`). A forced bfloat16 where it is not native is refused.
    """
    allowed = ", ".join(DTYPES)
    if dtype not in DTYPES:
        raise DeviceError(f"unknown dtype {dtype!r}; use one of: {allowed}")
    if bf16 and dtype == "float16":
        raise DeviceError("bf16=true and dtype=float16 contradict each other; give one of them")
    name = "bfloat16" if bf16 else dtype
    if name == "auto":
        return "bfloat16" if native_bf16(device, flags) else "float32"
    if name == "float16" and device == "cpu":
        raise DeviceError("dtype=float16 is not supported on CPU (half-precision kernels are missing or much slower "
                          "than float32 there); use dtype=auto or dtype=float32 on CPU (or bfloat16 where the CPU has "
                          "AMX / AVX512-BF16), or device=cuda / mps")
    if name == "bfloat16" and device in ("cpu", "cuda") and not native_bf16(device, flags):
        setting = "bf16=true" if bf16 else "dtype=bfloat16"
        lacks = (f"this CPU has no native bf16 matrix units (AMX or AVX512-BF16; bf16 flags: {bf16_flags_seen(flags)})"
                 if device == "cpu" else "this CUDA GPU does not compute bfloat16")
        raise DeviceError(f"{setting} was asked for, but {lacks}, so it would be slower than float32; use "
                          f"dtype=auto or dtype=float32 (dtype: one of {allowed})")
    return name


def torch_dtype(name: str) -> Any:
    """The torch dtype of a precision name."""
    import torch

    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]


@dataclass(frozen=True)
class Placement:
    """A resolved (device, dtype): what a model is loaded on, and part of the key it is shared under."""

    device: str
    dtype: str
    auto: bool = field(default=False, compare=False)
    """The dtype is ``dtype=auto``'s choice (a bfloat16 proposal still to be checked until ``note`` says how it
    went), not a forced one."""
    note: str = field(default="", compare=False)
    """How the dtype was chosen, for the run header and ``groundjudge judges`` ("" when it was given)."""

    def describe(self) -> str:
        """``cpu bfloat16``, followed by how ``auto`` chose it when it did."""
        return f"{self.device} {self.dtype}" + (f" ({self.note})" if self.note else "")


def placement(device: str = "auto", dtype: str = "auto", bf16: bool = False) -> Placement:
    """Resolve a judge's device and dtype settings (errors name the setting to change)."""
    resolved = resolve_device(device)
    return Placement(device=resolved, dtype=resolve_dtype(dtype, resolved, bf16), auto=dtype == "auto" and not bf16)


def is_out_of_memory(err: BaseException) -> bool:
    """torch's OutOfMemoryError, or a RuntimeError saying 'out of memory' (MPS, older CUDA builds)."""
    import torch

    if isinstance(err, torch.OutOfMemoryError):
        return True
    return isinstance(err, RuntimeError) and "out of memory" in str(err).lower()


def free_memory(device: str) -> None:
    """Return cached allocator blocks after an OOM, so the smaller retry can use them."""
    import torch

    if device.startswith("cuda") and torch.cuda.is_available():
        torch.cuda.empty_cache()
    elif device == "mps" and hasattr(torch, "mps"):
        torch.mps.empty_cache()


def run_in_batches(order: Sequence[int], batch_size: int, run: Callable[[Sequence[int]], None],
                   device: str = "cpu", sizes: Sequence[int] | None = None) -> int:
    """Call ``run`` on consecutive slices of ``order`` of at most ``batch_size`` items.

    ``sizes``, when given, is the planned length of each slice (summing to ``len(order)``, each at most
    ``batch_size``: :func:`~groundjudge.local_nli.batches.length_batches`); else every slice is ``batch_size`` long.
    A batch that runs out of memory is halved and retried (down to one item; an OOM at one item is raised), and
    no later slice is longer than the size that worked.
    Returns the batch size that worked last, for the caller to start from next time.
    """
    size, start = max(int(batch_size), 1), 0
    planned = itertools.accumulate(sizes or ())   # where each planned slice ends
    end = next(planned, len(order))
    while start < len(order):
        while end <= start:
            end = next(planned, len(order))
        index = order[start:min(start + size, end)]
        try:
            run(index)
        except Exception as err:  # noqa: BLE001 - only out-of-memory is handled; the rest is re-raised
            if not is_out_of_memory(err) or len(index) == 1:
                raise
            free_memory(device)
            size = max(size // 2, 1)
            while size >= len(index) > 1:   # a planned slice shorter than the size: halve the slice itself
                size //= 2
            log.warning("out of memory on %s with a batch of %d; retrying with %d", device, len(index), size)
            continue
        start += len(index)
    return size
