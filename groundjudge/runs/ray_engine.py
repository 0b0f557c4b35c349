"""``--engine ray``: judge a run's examples in Ray actors; the driver stays the only writer of records.jsonl.

Judges run one after another, as in process. For each, a pool of actors (:mod:`groundjudge.runs.ray_pool`)
builds the judge once (:mod:`groundjudge.runs.ray_actors`); the driver cuts the examples still to do into
batches of ``ray_batch``, keeps every live actor busy and collects finished batches with ``ray.wait``. An actor of a
local judge with a batch path judges its batch in chunks of ``local_chunk`` (at most ``ray_batch`` answers, then),
as an in-process run does.

* **One writer, data order.** Results are written by the driver in the examples' order, each as soon as every
  earlier one is written (:class:`OrderedCommit`), so records.jsonl -- and summary.json, whose bootstrap
  intervals depend on that order -- are the same as an in-process run's. A result already written is never
  written again.
* **Lost workers.** A batch whose actor died (its process or its node) goes back to the front of the queue and is
  judged again by a live actor; a fresh actor replaces the lost one. A batch is tried :data:`MAX_BATCH_TRIES`
  times at most.
* **LLM limits.** Every actor's LLM service shares one rate limiter and one ``--max-cost`` budget
  (:mod:`groundjudge.llm.shared_limits`), two named actors on the driver's node.
* ``--resume`` works as in process: the pairs already recorded are skipped before any batch is cut.
"""

from __future__ import annotations

import math
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from groundjudge.consoles import console
from groundjudge.judges.composite import judge_parts
from groundjudge.runs.chunk_option import DEFAULT_LOCAL_CHUNK
from groundjudge.runs.ray_actors import LLMJudgeWorker, LocalJudgeWorker, ServiceSpec, WorkerSpec
from groundjudge.runs.ray_cluster import cluster_shape, connected, default_actors, forwarded_env
from groundjudge.runs.ray_pool import ActorPool
from groundjudge.runs.records import RecordWriter
from groundjudge.runs.task import JudgeTask, progress_bar
from groundjudge.types import Example, JudgeResult, ResultRecord

MAX_BATCH_TRIES = 4
"""Times one batch is sent to an actor before the run stops (its actors keep dying on it)."""

WAIT_S = 1.0
"""The longest ``ray.wait`` between two looks at the pool (signals are handled in between)."""

LOCAL_DEPTH = 2
"""Batches queued per local judge's actor: one judged, one waiting (no idle gap between batches)."""


class OrderedCommit:
    """Writes one judge's results in its examples' order: a result is held until every earlier one is written;
    a position already written or held is ignored (a batch judged twice is written once)."""

    def __init__(self, write: Callable[[int, JudgeResult], None]):
        self.write = write
        self.next = 0
        self.held: dict[int, JudgeResult] = {}

    def accept(self, position: int, result: JudgeResult) -> bool:
        """Take a result; returns False for a duplicate. Writes every result now in order."""
        if position < self.next or position in self.held:
            return False
        self.held[position] = result
        while self.next in self.held:
            self.write(self.next, self.held.pop(self.next))
            self.next += 1
        return True


@dataclass
class Batch:
    """Consecutive positions in a judge's examples to do, and how often they were sent."""

    positions: list[int]
    tries: int = 0


class SharedLimits:
    """The run's RateBuckets and BudgetLedger actors (named, on the driver's node, no CPUs reserved)."""

    def __init__(self, ray: Any, spent: float = 0.0):
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from groundjudge.llm.shared_limits import BudgetLedger, RateBuckets

        self.ray = ray
        token = uuid.uuid4().hex[:12]
        here = NodeAffinitySchedulingStrategy(node_id=ray.get_runtime_context().get_node_id(), soft=True)
        options = {"num_cpus": 0, "scheduling_strategy": here, "max_restarts": 0}
        self.buckets = ray.remote(RateBuckets).options(name=f"groundjudge-rate-{token}", **options).remote()
        self.ledger = ray.remote(BudgetLedger).options(name=f"groundjudge-budget-{token}", **options).remote(spent)

    def stop(self) -> None:
        """Kill both actors."""
        for handle in (self.buckets, self.ledger):
            try:
                self.ray.kill(handle, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone
                pass


def _service_of(tasks: Sequence[JudgeTask]) -> Any:
    """The driver's LLM service (held by the LLM judges), for what calibration already spent."""
    for task in tasks:
        for part in judge_parts(task.judge):
            if getattr(part, "service", None) is not None:
                return part.service
    return None


def service_spec(options: Any, limits: SharedLimits) -> ServiceSpec:
    """What a Ray worker needs to rebuild the driver's LLM service (prompts, cache, cost cap) and share its limits
    (rate buckets, the spending ledger): used by ``run --engine ray`` and ``serve --engine ray``."""
    from groundjudge.llm.service_options import default_cache_dir

    no_cache = bool(getattr(options, "no_cache", False))
    cache_dir = None if no_cache else str(getattr(options, "cache_dir", None) or default_cache_dir())
    return ServiceSpec(prompts=getattr(options, "prompts", None), cache_dir=cache_dir, cache_enabled=not no_cache,
                       max_cost=getattr(options, "max_cost", None), buckets=limits.buckets, ledger=limits.ledger)


def _pool(ray: Any, worker: WorkerSpec, llm: bool, options: Any) -> ActorPool:
    """The actors of one judge, spread over the nodes."""
    cpus = float(options.ray_num_cpus)
    gpus = 0.0 if llm else float(options.ray_num_gpus)
    size = options.ray_actors or default_actors(llm, cluster_shape(cpus), cpus, gpus)
    depth = math.ceil(worker.concurrency / options.ray_batch) + 1 if llm else LOCAL_DEPTH
    env = {**forwarded_env(), "GROUNDJUDGE_THREADS": str(max(1, math.ceil(cpus)))}
    actor_options: dict[str, Any] = {"num_cpus": cpus, "num_gpus": gpus, "max_restarts": 0, "max_task_retries": 0,
                                     "scheduling_strategy": "SPREAD", "runtime_env": {"env_vars": env}}
    remote = ray.remote(LLMJudgeWorker if llm else LocalJudgeWorker).options(**actor_options)
    return ActorPool(ray, lambda: remote.remote(worker), size, depth)


def _lost_errors(ray: Any) -> tuple[type[BaseException], ...]:
    """The errors that mean a batch's actor or its node went away (the batch is judged again elsewhere)."""
    ex = ray.exceptions
    return (ex.RayActorError, ex.WorkerCrashedError, ex.ObjectLostError, ex.OwnerDiedError, ex.NodeDiedError)


def _judge_task(ray: Any, pool: ActorPool, todo: Sequence[Example], batch_size: int, commit: OrderedCommit) -> None:
    """Judge ``todo`` in batches on the pool until every position is committed."""
    pending = deque(Batch(list(range(start, min(start + batch_size, len(todo)))))
                    for start in range(0, len(todo), batch_size))
    in_flight: dict[Any, tuple[Any, Batch]] = {}
    lost = _lost_errors(ray)
    while pending or in_flight:
        while pending and (member := pool.free()) is not None:
            batch = pending.popleft()
            batch.tries += 1
            ref = member.handle.judge_batch.remote([todo[p] for p in batch.positions])
            in_flight[ref] = (member, batch)
            member.load += 1
        ready, _ = ray.wait([*in_flight, *pool.starting_refs()], num_returns=1, timeout=WAIT_S)
        if not ready:
            pool.check_stalled()
            continue
        for ref in ready:
            if pool.is_starting(ref):
                pool.on_ready(ref)
                continue
            member, batch = in_flight.pop(ref)
            member.load -= 1
            try:
                results = ray.get(ref)
            except ray.exceptions.RayTaskError as err:   # a fatal judge error (model, template): stop the run
                raise (err.cause if isinstance(err.cause, Exception) else err) from None
            except lost as err:
                if member in pool.live:
                    console.print(f"[yellow]a judge actor was lost ({type(err).__name__}, node "
                                  f"{member.where.get('node_id', '?')[:12]}): its unfinished examples go to the "
                                  "others", soft_wrap=True)
                pool.retire(member, err)
                if batch.tries >= MAX_BATCH_TRIES:
                    ids = [todo[p].id for p in batch.positions]
                    raise RuntimeError(f"examples {ids} were sent {batch.tries} times and their actor died each "
                                       f"time (last: {type(err).__name__}: {err})") from None
                pending.appendleft(batch)
                continue
            for position, result in zip(batch.positions, results):
                commit.accept(position, result)
        pool.check_stalled()


def run_judges_ray(tasks: Sequence[JudgeTask], examples: Sequence[Example], writer: RecordWriter, options: Any,
                   done: set[tuple[str, str]] = frozenset(), concurrency: int = 8,
                   show_progress: bool = True) -> int:
    """Judge every example with every judge in Ray actors, skipping pairs already done; returns results written.

    ``options`` are the run's options (``RunOptions``: the judges' configs, the ``ray_*`` settings, the LLM
    service's prompts, cache and ``max_cost``). Records are written here, in the examples' order.
    """
    from groundjudge.judges import uses_llm

    configs = {config.name: config for config in options.judges}
    llm = {task.spec: uses_llm(configs[task.spec].kind) for task in tasks}
    written = 0
    with connected() as ray, progress_bar(disable=not show_progress) as progress:
        service = _service_of(tasks)
        limits = SharedLimits(ray, service.budget.spent if service is not None else 0.0) if any(llm.values()) \
            else None
        try:
            for task in tasks:
                todo = [ex for ex in examples if (task.spec, ex.id) not in done]
                bar = progress.add_task(task.spec, total=len(examples), completed=len(examples) - len(todo))
                if not todo:
                    continue

                def write(position: int, result: JudgeResult, spec=task.spec, todo=todo, bar=bar) -> None:
                    nonlocal written
                    writer.write(ResultRecord(judge=spec, example=todo[position], result=result))
                    written += 1
                    progress.advance(bar)

                worker = WorkerSpec(spec=task.spec, config=configs[task.spec],
                                    threshold=getattr(task.judge, "threshold", None),
                                    concurrency=task.judge.max_concurrency or concurrency,
                                    local_chunk=getattr(options, "local_chunk", DEFAULT_LOCAL_CHUNK),
                                    service=service_spec(options, limits) if llm[task.spec] else None)
                pool = _pool(ray, worker, llm[task.spec], options)
                try:
                    _judge_task(ray, pool, todo, options.ray_batch, OrderedCommit(write))
                finally:
                    pool.shutdown()
        finally:
            if limits is not None:
                limits.stop()
    return written


def ray_runner(options: Any) -> Callable[..., int]:
    """``run_judges``'s signature, judging in Ray with the run's ``options`` (provider batches are refused)."""
    def run(tasks: Sequence[JudgeTask], examples: Sequence[Example], writer: RecordWriter,
            done: set[tuple[str, str]] = frozenset(), concurrency: int = 8, show_progress: bool = True,
            batches: Any = None) -> int:
        if batches is not None:
            from groundjudge.errors import UsageError

            raise UsageError("--engine ray sends calls online; provider batches (--batch) run on the driver")
        return run_judges_ray(tasks, examples, writer, options, done, concurrency, show_progress)

    return run
