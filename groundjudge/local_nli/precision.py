"""Whether this machine has native bfloat16 matrix units, so ``dtype=auto`` may propose bfloat16.

On a CPU, bfloat16 is fast only where the cores multiply bf16 matrices in hardware: Intel AMX (``amx_bf16``)
or AVX512-BF16 (``avx512_bf16``), read from the ``flags`` line of /proc/cpuinfo on Linux, else from torch's
own CPU capability query (``torch.cpu._is_avx512_bf16_supported`` / ``_is_amx_tile_supported``, private in
torch 2.13, so used only where /proc/cpuinfo cannot be read). Elsewhere bf16 is emulated and slower than
float32. On CUDA, bfloat16 needs a GPU that computes it (Ampere or newer, ``torch.cuda.is_bf16_supported``).
Apple MPS is left at float32.

Every reader is injectable: ``machine_flags`` is the one place the running machine is asked, and the
resolution functions take ``flags`` so tests decide what the CPU has.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
"""Where Linux lists the CPU's feature flags."""
BF16_FLAGS: tuple[str, ...] = ("amx_bf16", "avx512_bf16")
"""CPU flags that mean native bfloat16 matrix units (Intel AMX, AVX512-BF16; AMD Zen 4+ has the latter)."""


def read_cpuinfo() -> str:
    """The text of /proc/cpuinfo ("" where there is none: macOS, Windows)."""
    try:
        return CPUINFO.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def parse_flags(text: str) -> frozenset[str]:
    """The feature flags of a /proc/cpuinfo text (x86 ``flags``, Arm ``Features``), lower case."""
    found: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() in ("flags", "features"):
            found.update(value.lower().split())
    return frozenset(found)


def torch_flags() -> frozenset[str]:
    """The bf16 flags torch's CPU capability query reports (for machines without /proc/cpuinfo)."""
    try:
        import torch
    except ImportError:
        return frozenset()
    asks = {"avx512_bf16": "_is_avx512_bf16_supported", "amx_bf16": "_is_amx_tile_supported"}
    return frozenset(flag for flag, name in asks.items() if getattr(torch.cpu, name, lambda: False)())


def cpu_flags(read: Callable[[], str] = read_cpuinfo) -> frozenset[str]:
    """This CPU's feature flags from ``read()`` (a /proc/cpuinfo text), else torch's bf16 query."""
    return parse_flags(read()) or torch_flags()


@lru_cache(maxsize=1)
def machine_flags() -> frozenset[str]:
    """The running machine's CPU flags (read once per process)."""
    return cpu_flags()


def cpu_model(read: Callable[[], str] = read_cpuinfo) -> str:
    """The CPU's model name from ``read()`` (a /proc/cpuinfo text; x86 ``model name``), else the platform's."""
    import platform

    for line in read().splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() in ("model name", "cpu model", "hardware") and value.strip():
            return value.strip()
    return platform.processor() or platform.machine()


def cpu_description(read: Callable[[], str] = read_cpuinfo) -> str:
    """What a benchmark records about the CPU: its model name and which bf16 matrix units it has (or none)."""
    return f"{cpu_model(read)} (bf16 units: {bf16_flags_seen(cpu_flags(read))})"


def native_bf16_cpu(flags: frozenset[str] | None = None) -> bool:
    """Whether a CPU with these flags (default: this one) multiplies bfloat16 matrices in hardware."""
    have = machine_flags() if flags is None else flags
    return any(flag in have for flag in BF16_FLAGS)


def native_bf16(device: str, flags: frozenset[str] | None = None) -> bool:
    """Whether ``device`` (resolved: cpu, cuda, mps) computes bfloat16 natively here."""
    if device == "cpu":
        return native_bf16_cpu(flags)
    if device.startswith("cuda"):
        import torch

        return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
    return False


def bf16_flags_seen(flags: frozenset[str] | None = None) -> str:
    """The bf16 flags present, for messages ("none" when there are none)."""
    have = machine_flags() if flags is None else flags
    return ", ".join(flag for flag in BF16_FLAGS if flag in have) or "none"
