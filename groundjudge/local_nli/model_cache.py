"""One load per process of every local model: judges naming the same model, device and dtype share it.

``shared(key, load)`` is the cache: the first caller of a key loads (under a lock, so two threads never load
the same model twice), every later caller gets the same object; inside ``unshared()`` (the dtype=auto check) a
model not yet loaded is loaded privately, neither kept nor counted: the check leaves nothing in memory. ``load_count(path)`` says how many times a
model was really loaded (tests check it stays 1). ``load_pretrained`` is the one loader of transformers
models for the local judges: tokenizer + model from a resolved path, on the judge's placement (a float32 model
on CPU with its linear layers on oneDNN-packed weights, :func:`groundjudge.local_nli.batches.pack_linear_layers`;
a BERT / RoBERTa classifier with its last layer computed for [CLS] only, :mod:`groundjudge.local_nli.cls_only`).
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from groundjudge.local_nli.batches import pack_linear_layers
from groundjudge.local_nli.cls_only import cls_only_last_layer
from groundjudge.local_nli.devices import Placement, torch_dtype
from groundjudge.local_nli.model import torch_threads

log = logging.getLogger(__name__)

T = TypeVar("T")

_LOADED: dict[Hashable, Any] = {}
_LOADS: Counter = Counter()
_LOCK = threading.RLock()
_SCOPE = threading.local()


@contextmanager
def unshared() -> Iterator[None]:
    """Loads in this thread, inside the block, are private: not kept in the cache, not counted."""
    before = getattr(_SCOPE, "private", False)
    _SCOPE.private = True
    try:
        yield
    finally:
        _SCOPE.private = before


def shared(key: Hashable, load: Callable[[], T]) -> T:
    """The object cached under ``key``, loaded by ``load()`` on first use (once per process); inside
    :func:`unshared`, the cached one if there is one, else a private load."""
    if getattr(_SCOPE, "private", False):
        with _LOCK:
            if key in _LOADED:
                return _LOADED[key]
        return load()
    with _LOCK:
        if key not in _LOADED:
            _LOADED[key] = load()
            _LOADS[key] += 1
        return _LOADED[key]


def load_count(path: str | None = None) -> int:
    """How many loads happened (of keys naming ``path``, when given): one per distinct model and placement."""
    with _LOCK:
        return sum(n for key, n in _LOADS.items() if path is None or (isinstance(key, tuple) and path in key))


def clear() -> None:
    """Forget every shared model (their memory is freed once no judge holds them)."""
    with _LOCK:
        _LOADED.clear()
        _LOADS.clear()


@dataclass(frozen=True)
class Loaded:
    """A tokenizer and model on a device, shared by every judge that names them; ``lock`` serialises use."""

    tokenizer: Any
    model: Any
    placement: Placement
    path: str
    lock: threading.Lock = field(default_factory=threading.Lock, compare=False)

    @property
    def device(self) -> str:
        """Where the model runs."""
        return self.placement.device


def load_tokenizer(path: str, fallback: str | None = None) -> Any:
    """The tokenizer saved with a model, else the one at ``fallback`` (a model without its own tokenizer)."""
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(path)
    except (OSError, ValueError, TypeError) as err:
        if not fallback:
            raise
        log.info("no usable tokenizer in %s (%s); using %s", path, type(err).__name__, fallback)
        return AutoTokenizer.from_pretrained(fallback)


def load_pretrained(auto_class: str, path: str, where: Placement, *, tokenizer: str | None = None,
                    trust_remote_code: bool = False, **kwargs: Any) -> Loaded:
    """A transformers model (``AutoModelFor...`` named by ``auto_class``) and its tokenizer, in eval mode on
    ``where``, shared per (class, path, placement, remote code, kwargs)."""
    key = (auto_class, path, where.device, where.dtype, trust_remote_code, repr(sorted(kwargs.items())))

    def load() -> Loaded:
        import torch
        import transformers

        torch.set_num_threads(torch_threads())
        log.info("loading %s from %s on %s (%s)", auto_class, path, where.device, where.dtype)
        cls = getattr(transformers, auto_class)
        model = cls.from_pretrained(path, dtype=torch_dtype(where.dtype), trust_remote_code=trust_remote_code,
                                    **kwargs)
        tok = load_tokenizer(tokenizer or path)
        model = model.to(where.device).eval()
        pack_linear_layers(model)   # CPU float32 only: oneDNN-packed linear layers (a no-op elsewhere)
        cls_only_last_layer(model)   # sequence classifiers reading [CLS] only (a no-op for other models)
        return Loaded(tokenizer=tok, model=model, placement=where, path=path)

    return shared(key, load)
