"""``groundjudge serve --engine ray``: the service as a Ray Serve application, each judge a deployment of its own.

The application is an ingress deployment -- the same FastAPI app as the uvicorn service
(:class:`~groundjudge.serve.ray_replicas.Ingress`) -- and one :class:`~groundjudge.serve.ray_replicas.JudgeReplica`
deployment per judge, with its own number of replicas. As in ``run --engine ray``, every LLM judge's replicas share
one rate limiter and one ``--max-cost`` budget (:class:`~groundjudge.runs.ray_engine.SharedLimits`), and the
records folder has one writer, an actor on the driver's node. :class:`RayService` starts it all and takes it down:
the application deleted (requests in flight answered first), the records folder closed (``summary.json``), the
shared actors stopped, and Serve shut down when it was started here.
"""

from __future__ import annotations

import contextlib
import math
import re
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from groundjudge.runs.ray_cluster import connected, forwarded_env
from groundjudge.serve.ray_replicas import Ingress, IngressJudge, JudgeReplica, ReplicaSpec

APP_NAME = "groundjudge"
"""The Ray Serve application's name."""


class RayServeOptions(BaseModel):
    """Where and how the judges run on Ray."""

    address: str | None = Field(default=None, description="A cluster to join (None: RAY_ADDRESS, else a local Ray).")
    replicas: int = Field(default=1, ge=1, description="Replicas of every judge not named in ``judge_replicas``.")
    judge_replicas: dict[str, int] = Field(default_factory=dict, description="Replicas by judge (spec or kind).")
    num_cpus: float = Field(default=1.0, ge=0, description="CPUs a local judge's replica reserves.")
    host: str = "127.0.0.1"
    port: int = 8080


def parse_replicas(values: Sequence[str]) -> tuple[int, dict[str, int]]:
    """``--replicas`` values: ``N`` (every judge) or ``JUDGE=N`` (one judge, by spec or kind); ValueError else."""
    default, by_judge = 1, {}
    for value in values:
        match = re.fullmatch(r"(?:(.+)=)?(\d+)", value.strip())
        if match is None or int(match.group(2)) < 1:
            raise ValueError(f"--replicas {value!r}: give N or JUDGE=N with N >= 1")
        if match.group(1) is None:
            default = int(match.group(2))
        else:
            by_judge[match.group(1)] = int(match.group(2))
    return default, by_judge


def replicas_of(served: Any, options: RayServeOptions) -> int:
    """The replicas of one judge: named by its spec, else by its kind, else the default."""
    for key in (served.name, served.kind):
        if key in options.judge_replicas:
            return options.judge_replicas[key]
    return options.replicas


def ongoing_requests(served: Any, max_batch: int) -> int:
    """Requests one replica holds at once: an LLM judge's concurrency (64 when automatic), two batches of a
    batched local judge, else 4 (more wait in the router, where a free replica takes them)."""
    if served.calls_llm:
        concurrency = getattr(served.judge, "concurrency", None)
        return concurrency if isinstance(concurrency, int) else 64
    return 2 * max_batch if served.batcher is not None else 4


def check_judge_names(judges: Any, options: RayServeOptions) -> None:
    """ValueError when ``--replicas JUDGE=N`` names no loaded judge."""
    known = {name for served in judges.judges for name in (served.name, served.kind)}
    unknown = sorted(set(options.judge_replicas) - known)
    if unknown:
        raise ValueError(f"--replicas names no loaded judge: {', '.join(unknown)}; loaded: {', '.join(judges.names)}")


class RayService:
    """The service on Ray Serve: :meth:`start` deploys it (HTTP on ``host:port``), :meth:`stop` takes it down."""

    def __init__(self, judges: Any, settings: Any, options: RayServeOptions, llm: Any, records: Any = None):
        """``judges``: the judge set as loaded in the driver (specs, kinds, settings; models stay unloaded);
        ``settings``: the app's :class:`~groundjudge.serve.app.ServeSettings`; ``llm``: the LLM options;
        ``records``: ``(folder, header, command)`` for ``--record``, or None."""
        check_judge_names(judges, options)
        self.judges, self.settings, self.options, self.llm, self.records = judges, settings, options, llm, records
        self._exit = contextlib.ExitStack()
        self.ray: Any = None
        self.limits: Any = None
        self.writer: Any = None
        self.serve_started_here = False

    def _replica_spec(self, served: Any, batching: Any) -> ReplicaSpec:
        from groundjudge.runs.ray_engine import service_spec

        # the replicas' working directory is not this one: folders given relative to it are made absolute
        absolute = {key: str(Path(value).resolve()) for key in ("prompts", "cache_dir")
                    if (value := getattr(self.llm, key, None))}
        service = service_spec(self.llm.model_copy(update=absolute), self.limits) if served.calls_llm else None
        return ReplicaSpec(spec=served.name, service=service, timeout_s=self.settings.timeout_s,
                           warmup=self.settings.warmup, batch_wait_s=None if batching is None else batching.max_wait_s,
                           max_batch=batching.max_batch if batching is not None else 32)

    def _judge_app(self, serve: Any, served: Any, batching: Any, index: int) -> Any:
        """One judge's deployment, bound."""
        cpus = 0.0 if served.calls_llm else self.options.num_cpus
        env = {**forwarded_env(), "GROUNDJUDGE_THREADS": str(max(1, math.ceil(cpus)))}
        deployment = serve.deployment(
            JudgeReplica, name=f"judge-{index}-{served.kind}", num_replicas=replicas_of(served, self.options),
            max_ongoing_requests=ongoing_requests(served, batching.max_batch if batching else 32),
            ray_actor_options={"num_cpus": cpus, "runtime_env": {"env_vars": env}})
        return deployment.bind(self._replica_spec(served, batching))

    def _start_writer(self) -> None:
        """The records folder's one writer: a LiveRecords actor on the driver's node."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from groundjudge.errors import UsageError
        from groundjudge.runs.live_records import LiveRecords

        folder, header, command = self.records
        here = NodeAffinitySchedulingStrategy(node_id=self.ray.get_runtime_context().get_node_id(), soft=False)
        self.writer = self.ray.remote(LiveRecords).options(
            num_cpus=0, max_restarts=0, scheduling_strategy=here, name=f"groundjudge-records-{uuid.uuid4().hex[:12]}",
        ).remote(str(folder), header, list(command))
        try:
            self.ray.get(self.writer.__ray_ready__.remote())
        except self.ray.exceptions.RayActorError as err:
            self.writer = None
            lines = [line for line in str(getattr(err, "error_msg", err)).splitlines() if line.strip()]
            raise UsageError(f"--record {folder}: {lines[-1].strip() if lines else err}") from None

    def start(self, batching: Any) -> RayService:
        """Join or start Ray, start the shared limits and the records writer, and deploy the application."""
        from ray import serve

        from groundjudge.runs.ray_engine import SharedLimits

        self.ray = self._exit.enter_context(connected(address=self.options.address))
        try:
            self.serve_started_here = not _serve_running(self.ray)
            if self.judges.calls_llm:
                self.limits = SharedLimits(self.ray)
            if self.records is not None:
                self._start_writer()
            judge_apps = [self._judge_app(serve, served, batching, i) for i, served in enumerate(self.judges.judges)]
            meta = [IngressJudge(name=s.name, kind=s.kind, spec=s.spec, calls_llm=s.calls_llm)
                    for s in self.judges.judges]
            ingress = serve.deployment(serve.ingress()(Ingress), name="ingress", num_replicas=1,
                                       max_ongoing_requests=self.settings.max_queue + 16,
                                       ray_actor_options={"num_cpus": 0,
                                                          "runtime_env": {"env_vars": forwarded_env()}})
            serve.start(http_options={"host": self.options.host, "port": self.options.port},
                        proxy_location="HeadOnly")
            serve.run(ingress.bind(meta, self.settings, self.writer, *judge_apps), name=APP_NAME, route_prefix="/",
                      blocking=False)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Delete the application, close the records folder, stop the shared actors, leave Ray."""
        if self.ray is None:
            return
        from ray import serve

        try:
            try:
                serve.delete(APP_NAME)
            except Exception:  # noqa: BLE001 - never deployed
                pass
            if self.writer is not None:
                self.ray.get(self.writer.close.remote())
                self.ray.kill(self.writer)
                self.writer = None
            if self.limits is not None:
                self.limits.stop()
                self.limits = None
            if self.serve_started_here:
                serve.shutdown()
        finally:
            self.ray = None
            self._exit.close()


def _serve_running(ray: Any) -> bool:
    """Whether Ray Serve already runs on the cluster (its controller actor exists)."""
    from ray.serve._private.constants import SERVE_CONTROLLER_NAME, SERVE_NAMESPACE

    try:
        ray.get_actor(SERVE_CONTROLLER_NAME, namespace=SERVE_NAMESPACE)
    except ValueError:
        return False
    return True
