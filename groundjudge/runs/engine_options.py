"""Where a run's judging happens: ``--engine local`` (this process) or ``--engine ray`` (actors on a Ray cluster),
and how many answers a local judge is handed at once (``--local-chunk``).

The options live here and are mixed into the run's options (:class:`~groundjudge.runs.execute.RunOptions`), the
experiment file's ``[run]`` table and the ``groundjudge run`` flags; :func:`runner_for` picks the function that
judges the examples (:func:`~groundjudge.runs.runner.run_judges` or the Ray engine, same signature).
"""

from __future__ import annotations

import argparse
import importlib.util
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

from groundjudge.errors import UsageError
from groundjudge.runs.chunk_option import DEFAULT_LOCAL_CHUNK, LOCAL_CHUNK_FLAG, check_local_chunk
from groundjudge.runs.memory_budget import LOCAL_MEMORY_FLAG, LocalChunks, parse_memory
from groundjudge.runs.ray_cluster import RAY_MISSING

Engine = Literal["local", "ray"]

def ray_installed() -> bool:
    """Whether the ``ray`` package can be imported."""
    return importlib.util.find_spec("ray") is not None


RAY_SETTINGS: dict[str, tuple[type, int, str]] = {
    "ray_batch": (int, 1, "examples per actor task; default 8"),
    "ray_actors": (int, 1, "actors per judge; default: from the cluster's CPUs"),
    "ray_num_cpus": (float, 0, "CPUs each actor reserves; default 1"),
    "ray_num_gpus": (float, 0, "GPUs each local judge's actor reserves; default 0"),
}
"""Each ``--ray-*`` number: its type, its least allowed value, and what it means (for the refusal's one line)."""


def check_ray_setting(name: str, value: Any) -> Any:
    """``value`` when it is allowed for the ``--ray-*`` setting ``name`` (None: not given), else a UsageError
    naming the flag and the allowed values (a UsageError, not a ValueError: it leaves pydantic as the CLI's
    one-line error)."""
    kind, least, meaning = RAY_SETTINGS[name]
    if value is None:
        return value
    number = not isinstance(value, bool) and isinstance(value, (int, float) if kind is float else int)
    if not number or value < least:
        whole = "a whole number" if kind is int else "a number"
        raise UsageError(f"--{name.replace('_', '-')} ({name}) must be {whole} >= {least} ({meaning}); "
                         f"got {value!r}")
    return value


class EngineOptions(BaseModel):
    """The engine options of a run (mixed into ``RunOptions``)."""

    engine: Engine = Field(default="local", description=(
        "local: judge in this process; ray: judge in Ray actors (RAY_ADDRESS names a cluster, else a local Ray)."))
    ray_actors: int | None = Field(default=None, ge=1, description=(
        "Actors per judge (default: the cluster's CPUs / ray_num_cpus for a local judge, one per node for an LLM "
        "judge)."))
    ray_num_cpus: float = Field(default=1.0, ge=0.0, description="CPUs each actor reserves (its torch threads).")
    ray_num_gpus: float = Field(default=0.0, ge=0.0, description="GPUs each local judge's actor reserves.")
    ray_batch: int = Field(default=8, ge=1, description="Examples sent to an actor at once.")
    local_chunk: int = Field(default=DEFAULT_LOCAL_CHUNK, description=(
        "Answers handed at once to a local judge that scores in batches (nli, crossencoder, cosine, views, hhem, "
        "minicheck, spans), grouped by document; 1: one answer at a time. Latency is each answer's share of its "
        "chunk. Not --batch, which sends LLM calls to provider batch APIs."))

    local_memory: str | None = Field(default=None, description=(
        "Memory a chunk's activations may take in a local judge's model (512MB, 2GB, ...): the chunk size is "
        "capped by an estimate per answer (pairs x tokens x hidden size x layers x 4 bytes), re-computed as "
        "answers come; a budget that cannot hold one answer is refused before anything is judged."))

    @field_validator("local_chunk", mode="before")
    @classmethod
    def _chunk_is_usable(cls, value: Any) -> int:
        return check_local_chunk(value)

    @field_validator("local_memory", mode="before")
    @classmethod
    def _memory_is_usable(cls, value: Any) -> str | None:
        parse_memory(value)   # a UsageError (one line) when it is no size
        return None if value is None else str(value)


    @field_validator("ray_batch", "ray_actors", "ray_num_cpus", "ray_num_gpus", mode="before")
    @classmethod
    def _ray_setting_is_usable(cls, value: Any, info: ValidationInfo) -> Any:
        return check_ray_setting(info.field_name, value)

    @model_validator(mode="after")
    def _engine_can_run(self) -> EngineOptions:
        if self.engine != "ray":
            return self
        if getattr(self, "batch", False):
            raise UsageError("--engine ray sends calls online; provider batches (--batch) run on the driver: "
                             "choose one")
        if not ray_installed():
            raise UsageError(RAY_MISSING)
        return self


class EngineSection(BaseModel):
    """The engine keys of an experiment file's ``[run]`` table (each overridden by its flag)."""

    engine: Engine | None = Field(default=None, description="local or ray (see docs/scaling.md).")
    ray_actors: int | None = Field(default=None, ge=1, description="Actors per judge.")
    ray_num_cpus: float | None = Field(default=None, ge=0.0, description="CPUs per actor.")
    ray_num_gpus: float | None = Field(default=None, ge=0.0, description="GPUs per local judge's actor.")
    ray_batch: int | None = Field(default=None, ge=1, description="Examples per actor task.")
    local_chunk: int | None = Field(default=None, ge=1, description=(
        "Answers handed at once to a local judge that scores in batches (default 32; 1: one at a time)."))
    local_memory: str | None = Field(default=None, description=(
        "Memory a chunk's activations may take in a local judge's model (512MB, 2GB): caps the chunk size."))


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--engine`` and the ``--ray-*`` flags to the ``run`` verb (defaults None: an experiment file's win)."""
    parser.add_argument("--engine", choices=("local", "ray"),
                        help="local: judge in this process (default); ray: in Ray actors on the cluster named by "
                             "RAY_ADDRESS, else on a local Ray (see docs/scaling.md)")
    parser.add_argument("--ray-actors", type=int, metavar="N",
                        help="actors per judge (default: cluster CPUs / --ray-num-cpus for a local judge, one per "
                             "node for an LLM judge)")
    parser.add_argument("--ray-num-cpus", type=float, metavar="N", help="CPUs each actor reserves (default 1)")
    parser.add_argument("--ray-num-gpus", type=float, metavar="N",
                        help="GPUs each local judge's actor reserves (default 0)")
    parser.add_argument("--ray-batch", type=int, metavar="N", help="examples per actor task (default 8)")
    parser.add_argument(LOCAL_CHUNK_FLAG, type=int, metavar="N",
                        help=f"answers handed at once to a local judge that scores in batches (nli, crossencoder, "
                             f"cosine, views, hhem, minicheck, spans), grouped by document; latency is each "
                             f"answer's share of its chunk (default {DEFAULT_LOCAL_CHUNK}; 1: one at a time)")
    parser.add_argument(LOCAL_MEMORY_FLAG, metavar="SIZE",
                        help="memory a chunk's activations may take in a local judge's model (e.g. 512MB, 2GB): "
                             "caps the chunk size by an estimate per answer (pairs x tokens x hidden size x layers x "
                             "4 bytes); refused before anything is judged when it cannot hold one answer")


def local_chunks_of(options: Any) -> int | LocalChunks:
    """How a run sizes local judges' chunks: its ``local_chunk`` (a number), or with ``local_memory`` set a
    :class:`~groundjudge.runs.memory_budget.LocalChunks` that caps it by the budget."""
    size = getattr(options, "local_chunk", DEFAULT_LOCAL_CHUNK)
    memory = parse_memory(getattr(options, "local_memory", None))
    return size if memory is None else LocalChunks(size=size, memory=memory)


def runner_for(options: Any):
    """The function that judges a run's examples: ``run_judges`` (in process), or the Ray engine bound to the
    run's options (same signature)."""
    if getattr(options, "engine", "local") != "ray":
        from functools import partial

        from groundjudge.runs.runner import run_judges

        return partial(run_judges, local_chunk=local_chunks_of(options))
    from groundjudge.runs.ray_engine import ray_runner

    return ray_runner(options)
