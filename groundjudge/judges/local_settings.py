"""Settings every local-model judge shares (nli, crossencoder, spans, hhem, minicheck): label order, device,
precision, batch size; and the check, when the judge is created, that this machine can place the model so."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import ClassVar

from groundjudge.judges import SpecError
from groundjudge.local_nli.devices import DeviceError, placement
from groundjudge.local_nli.settings import ModelSettings


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
class LocalModelSettings(ModelSettings):
    """The settings of a judge that runs a local model (labels, device, dtype, batch_size: see
    :class:`~groundjudge.local_nli.settings.ModelSettings`); a judge dataclass takes them by subclassing this,
    and its placement is checked when it is created."""

    name: ClassVar[str] = "local"

    def __post_init__(self) -> None:
        check_placement(self.name, self.device, self.dtype)

    def runs_on(self) -> str:
        """Where and in what precision this judge's model runs here, and how ``dtype=auto`` chose it (loads
        the model, which runs the check once per machine and model when it is not cached)."""
        engine = getattr(self, "engine", None)
        where = getattr(engine(), "placement", None) if engine is not None else None
        return where.describe() if where is not None else ""
