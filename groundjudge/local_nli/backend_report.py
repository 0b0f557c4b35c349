"""What ``dtype=auto`` gives on this machine, in words: for ``groundjudge judges`` (no model is loaded)."""

from __future__ import annotations

import importlib.util

from groundjudge.local_nli import backend_cache
from groundjudge.local_nli.backend_check import min_agreement
from groundjudge.local_nli.check_set import check_set
from groundjudge.local_nli.devices import DeviceError, resolve_device, resolve_dtype
from groundjudge.local_nli.precision import bf16_flags_seen


def auto_summary() -> list[str]:
    """Lines saying what precision a local model gets here by default and why, then every check measured on
    this machine with this torch and check set (from the cache)."""
    if importlib.util.find_spec("torch") is None:
        return ["local models: torch is not installed (pip install 'groundjudge[local]')"]
    import torch

    try:
        minimum = min_agreement()
    except DeviceError as err:
        return [str(err)]
    device = resolve_device("auto")
    proposal = resolve_dtype("auto", device)
    if proposal == "float32":
        why = (f"no native bfloat16 matrix units on this CPU (AMX / AVX512-BF16; bf16 flags: {bf16_flags_seen()})"
               if device == "cpu" else f"no native bfloat16 on {device}")
        lines = [f"dtype=auto here: {device} float32 ({why})"]
    else:
        native = f"bf16 flags: {bf16_flags_seen()}" if device == "cpu" else "the GPU computes bfloat16"
        lines = [f"dtype=auto here: {device} bfloat16 ({native}) for a model whose verdicts on the "
                 f"{len(check_set())}-pair check set agree with float32 on >= {minimum:.1%} (checked once per "
                 f"model on first use, cached in {backend_cache.cache_dir()}); float32 for the others, int8 / onnx "
                 "only when asked"]
    machine = backend_cache.machine_identity(device)
    for record in backend_cache.entries():
        if (record.machine, record.torch, record.check_set) != (machine, str(torch.__version__),
                                                                 check_set().digest):
            continue
        chosen = record.dtype if record.agreement >= minimum else "float32"
        lines.append(f"  {record.model.rsplit('@', 1)[0]} [{record.rule}]: {record.dtype} agrees with float32 on "
                     f"{record.agreement:.1%} of {record.pairs} -> {chosen} (measured {record.measured_at[:10]}, "
                     f"{record.seconds:.1f} s)")
    return lines
