"""Connecting to Ray for a run: the cluster named by ``RAY_ADDRESS``, one already joined, or a local one.

:func:`connected` is a context manager: it joins (or starts) Ray, keeps the run's SIGINT / SIGTERM handlers
(``ray.init`` installs its own), and on leaving shuts down only what it started. :func:`cluster_shape` reads the
live nodes' resources, from which the default number of actors per judge is chosen (:func:`default_actors`).
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass

RAY_MISSING = "--engine ray needs Ray, which is not installed: pip install -e '.[ray]' (or pip install 'ray[default]')"
"""The error when Ray is asked for and cannot be imported."""

FORWARDED_ENV_PREFIXES = ("GROUNDJUDGE_", "HF_", "TRANSFORMERS_", "LITELLM_LOCAL_MODEL_COST_MAP")
"""Environment variables the driver hands its actors (offline model hub, local price table, caches); names that
look like secrets (KEY, TOKEN, SECRET, PASSWORD) are never forwarded: provider keys belong in the cluster's
environment (see docs/scaling.md)."""

SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD")


def import_ray():
    """The ``ray`` module, or a UsageError saying how to install it."""
    try:
        import ray
    except ImportError:
        from groundjudge.errors import UsageError

        raise UsageError(RAY_MISSING) from None
    return ray


def forwarded_env() -> dict[str, str]:
    """The driver's environment variables that actors get too (see :data:`FORWARDED_ENV_PREFIXES`)."""
    return {name: value for name, value in os.environ.items()
            if name.startswith(FORWARDED_ENV_PREFIXES) and not any(m in name.upper() for m in SECRET_MARKERS)}


@contextlib.contextmanager
def _signal_handlers_kept() -> Iterator[None]:
    """Restore SIGINT / SIGTERM handlers after the block (``ray.init`` replaces the run's SIGTERM handler)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    kept = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in kept.items():
            if handler is not None:
                signal.signal(sig, handler)


@contextlib.contextmanager
def connected(num_cpus: int | None = None, address: str | None = None) -> Iterator[object]:
    """Ray, joined for the block: as already initialised in this process, else the cluster at ``address`` (or
    ``RAY_ADDRESS``), else a new local Ray (``num_cpus``: default all cores). Only a Ray started or joined here is
    shut down."""
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    address = address or os.environ.get("RAY_ADDRESS") or None
    settings = {"address": address, "ignore_reinit_error": True, "log_to_driver": True}
    if address is None:
        settings.update(num_cpus=num_cpus, include_dashboard=False)
    with _signal_handlers_kept():
        ray.init(**settings)
    try:
        yield ray
    finally:
        ray.shutdown()


@dataclass(frozen=True)
class ClusterShape:
    """The live nodes' resources, as the defaults see them."""

    cpus: float
    gpus: float
    nodes_with_cpus: int
    """Nodes that can host one actor of ``num_cpus`` CPUs."""


def cluster_shape(num_cpus: float) -> ClusterShape:
    """CPUs and GPUs of the live nodes, and how many of them fit an actor of ``num_cpus`` CPUs."""
    ray = import_ray()
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    cpus = sum(n["Resources"].get("CPU", 0.0) for n in nodes)
    gpus = sum(n["Resources"].get("GPU", 0.0) for n in nodes)
    fitting = sum(1 for n in nodes if n["Resources"].get("CPU", 0.0) >= max(num_cpus, 1e-9))
    return ClusterShape(cpus=cpus, gpus=gpus, nodes_with_cpus=fitting)


def default_actors(uses_llm: bool, shape: ClusterShape, num_cpus: float, num_gpus: float) -> int:
    """Actors for one judge when ``ray_actors`` is not given: one per node for an LLM judge (its calls are
    I/O: each actor keeps many in flight), else as many as the cluster's CPUs (and GPUs) hold; at least one."""
    if uses_llm:
        return max(1, shape.nodes_with_cpus)
    fits = math.floor(shape.cpus / num_cpus) if num_cpus > 0 else max(1, shape.nodes_with_cpus)
    if num_gpus > 0:
        fits = min(fits, math.floor(shape.gpus / num_gpus))
    return max(1, fits)
