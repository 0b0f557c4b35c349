"""How a local model is run, whatever it scores: the checkpoint's label order, device, precision and batch size.

One frozen, hashable object, so the cached loaders (``load_nli_model``, ``load_hhem_model``,
``load_minicheck_model``, ``load_tagger``) key on it; every local judge's settings extend it
(:class:`groundjudge.judges.local_settings.LocalModelSettings`) and hand the loader their
:meth:`~ModelSettings.model_settings`.
"""

from __future__ import annotations

from dataclasses import dataclass

from groundjudge.local_nli.devices import Device, DType


@dataclass(frozen=True)
class ModelSettings:
    """The settings of a local model that any scorer takes: label order, device, precision, batch size."""

    labels: tuple[str, ...] = ()
    """The checkpoint's label names in index order, when its config says only LABEL_0 / LABEL_1 or does not
    say which label is 'supported': e.g. ``labels=[not_supported, supported]`` (FactKB-style binary),
    ``[contradiction, entailment]``, or ``[supported, hallucinated]`` for a token tagger."""
    device: Device = "auto"
    """``auto`` (cuda, else mps, else cpu), ``cpu``, ``cuda`` or ``mps``."""
    dtype: DType = "auto"
    """``auto`` (bfloat16 where the CPU has AMX / AVX512-BF16 or the GPU computes it, and the model's verdicts on
    the shipped check set agree with float32's on >= 99%, checked once per machine and model; else float32),
    ``float32``, ``bfloat16`` (only where native) or ``float16`` (GPU only)."""
    batch_size: int = 8
    """Inputs per forward pass (halved and retried when the device runs out of memory)."""

    def model_settings(self) -> ModelSettings:
        """These four settings alone, labels as a tuple: the loaders' cache key (a judge extending this class
        hands over only what the model needs, so judges differing in other settings share one scorer)."""
        return ModelSettings(labels=tuple(self.labels), device=self.device, dtype=self.dtype,
                             batch_size=self.batch_size)
