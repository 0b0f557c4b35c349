"""Settings every local-model judge shares (nli, crossencoder, spans, hhem, minicheck): label order, device,
precision, batch size; and the check, when the judge is created, that this machine can place the model so."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import ClassVar

from groundjudge.judges import SpecError
from groundjudge.local_nli.devices import DeviceError, Device, DType, placement


def check_placement(kind: str, device: str, dtype: str, bf16: bool = False) -> None:
    """Refuse, when the judge is created, a device or dtype this machine cannot give (a SpecError naming the
    setting), instead of failing every example later. Without torch installed, loading reports it instead."""
    if importlib.util.find_spec("torch") is None:
        return
    try:
        placement(device, dtype, bf16)
    except DeviceError as err:
        raise SpecError(f"judge {kind!r}: {err}") from None


@dataclass(frozen=True)
class LocalModelSettings:
    """The settings of a judge that runs a local model; a judge dataclass takes them by subclassing this."""

    name: ClassVar[str] = "local"
    labels: tuple[str, ...] = ()
    """The checkpoint's label names in index order, when its config says only LABEL_0 / LABEL_1 or does not
    say which label is 'supported': e.g. ``labels=[not_supported, supported]`` (FactKB-style binary),
    ``[contradiction, entailment]``, or ``[supported, hallucinated]`` for a token tagger."""
    device: Device = "auto"
    """``auto`` (cuda, else mps, else cpu), ``cpu``, ``cuda`` or ``mps``."""
    dtype: DType = "float32"
    """``float32``, ``bfloat16`` (fast on CPUs with AMX and on recent GPUs) or ``float16`` (GPU only)."""
    batch_size: int = 8
    """Inputs per forward pass (halved and retried when the device runs out of memory)."""

    def __post_init__(self) -> None:
        check_placement(self.name, self.device, self.dtype)
