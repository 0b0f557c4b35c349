"""The classes Ray Serve runs for ``groundjudge serve --engine ray`` (plain Python; :mod:`~groundjudge.serve.ray_app`
wraps them as deployments):

* :class:`JudgeReplica` -- one judge, built once per replica (its model loaded and warmed, its micro-batcher on
  the replica's event loop); judges one example per call, as the in-process service does
  (:meth:`~groundjudge.serve.judging.Judging.judge_example`). An LLM judge's service paces its calls with the
  cluster-wide rate limiter and budget (:class:`~groundjudge.runs.ray_actors.ServiceSpec`);
* :class:`Ingress` -- the service's FastAPI app itself (:func:`~groundjudge.serve.app.create_app`: same routes,
  schemas, errors, limits and metrics), whose judges are :class:`RemoteJudge` handles to the judge deployments and
  whose records folder is :class:`RemoteRecords`, the one writer actor on the driver's node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from groundjudge.runs.ray_actors import ServiceSpec
from groundjudge.types import Example, JudgeResult, JudgeSpec


class ReplicaSpec(BaseModel):
    """What a judge replica needs to build its judge as ``groundjudge serve`` does."""

    model_config = ConfigDict(frozen=True)
    spec: str = Field(description="The judge's spec, as given to --judge.")
    service: ServiceSpec | None = Field(default=None, description="The LLM service of a judge that calls models.")
    batch_wait_s: float | None = Field(default=0.002, description="Micro-batch wait (None: batching off).")
    max_batch: int = Field(default=32, ge=1)
    warmup: bool = True
    timeout_s: float = Field(default=60.0, gt=0)


class JudgeReplica:
    """One judge in a Ray Serve replica: built and warmed once, then judging one example per call."""

    async def __init__(self, replica: ReplicaSpec):
        from groundjudge.llm.service_options import LLMOptions
        from groundjudge.serve.app import ROUTES, WARMUP
        from groundjudge.runs.micro_batches import BatchSettings
        from groundjudge.serve.judging import Judging
        from groundjudge.serve.loading import import_llm_client, load_judges
        from groundjudge.serve.metrics import ServiceMetrics

        batching = None if replica.batch_wait_s is None else BatchSettings(replica.batch_wait_s, replica.max_batch)
        service = replica.service.build() if replica.service is not None else None
        judges = load_judges([replica.spec], LLMOptions(), batching, service=service)
        self.served = judges.judges[0]
        self.judging = Judging(judges=judges, metrics=ServiceMetrics(ROUTES), timeout_s=replica.timeout_s)
        if self.served.calls_llm:
            import_llm_client()
        if self.served.batcher is not None:
            self.served.batcher.start()
            if replica.warmup:
                await self.served.batcher.submit(WARMUP)

    async def ready(self) -> str:
        """The judge's name, once it is built and warmed (the ingress waits for every judge)."""
        return self.served.name

    async def judge(self, example: Example) -> JudgeResult:
        """The judge's result on one example (an error in the judge is an abstention, as in process)."""
        return await self.judging.judge_example(self.served, example)


@dataclass(frozen=True)
class RemoteJudge:
    """A judge deployment seen from the ingress: ``judge`` sends the example to one of its replicas."""

    name: str
    handle: Any
    """The deployment's ``DeploymentHandle``."""

    async def judge(self, example: Example) -> JudgeResult:
        """The verdict of a replica of the judge."""
        return await self.handle.judge.remote(example)


class RemoteRecords:
    """The records folder seen from the ingress: every verdict goes to the one writer actor (a
    :class:`~groundjudge.runs.live_records.LiveRecords` on the driver's node), which syncs each line to disk."""

    def __init__(self, writer: Any):
        self.writer = writer

    def write(self, judge: str, example: Example, result: JudgeResult) -> None:
        """Append one verdict (blocking until it is on disk; the app calls this in a worker thread)."""
        import ray

        ray.get(self.writer.write.remote(judge, example, result))

    def close(self) -> None:
        """Nothing: the driver closes the folder (and writes summary.json) once the application is deleted."""


@dataclass(frozen=True)
class IngressJudge:
    """What the ingress knows of one judge: its names, its header entry."""

    name: str
    kind: str
    spec: JudgeSpec
    calls_llm: bool


class Ingress:
    """The service's FastAPI app in a Ray Serve replica, its judges behind deployment handles. The replica is
    ready once every judge answered ``ready``; Ray Serve then calls ``__serve_build_asgi_app__`` and runs the app's
    lifespan."""

    async def __init__(self, judges: list[IngressJudge], settings: Any, writer: Any, *handles: Any):
        import asyncio

        from groundjudge.serve.loading import JudgeSet, ServedJudge

        # one call to each judge deployment: the ingress is ready once every judge is, its routers started
        await asyncio.gather(*(handle.ready.remote() for handle in handles))

        self.settings = settings
        self.records = RemoteRecords(writer) if writer is not None else None
        # calls_llm is False here: the ingress calls no model (its judges' replicas do), so it skips that import
        self.judges = JudgeSet([ServedJudge(name=j.name, kind=j.kind, judge=RemoteJudge(j.name, handle), spec=j.spec)
                                for j, handle in zip(judges, handles)])

    def __serve_build_asgi_app__(self) -> Any:
        """The app: :func:`~groundjudge.serve.app.create_app` over the remote judges."""
        from groundjudge.serve.app import create_app

        return create_app(self.judges, self.settings, self.records)
