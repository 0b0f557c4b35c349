"""The served judges: built once from their specs, each with its batcher when it has a batch path (the one a
run's chunks go through, :func:`~groundjudge.runs.local_chunks.batch_scorer`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from groundjudge.judges import uses_llm
from groundjudge.judges.config import JudgeConfig
from groundjudge.llm.service_options import LLMOptions, make_service
from groundjudge.runs.local_chunks import batch_scorer
from groundjudge.runs.micro_batches import BatchSettings, MicroBatcher
from groundjudge.types import JudgeSpec


class UnknownJudge(LookupError):
    """A request named a judge the service has not loaded."""


@dataclass
class ServedJudge:
    """One loaded judge: the name requests and records use, the judge, its header entry and its batcher."""

    name: str
    kind: str
    judge: Any
    spec: JudgeSpec
    batcher: MicroBatcher | None = None
    """Set when the judge has a batch path and batching is on."""
    calls_llm: bool = False
    """Whether the judge (or one inside it) calls a language model."""


@dataclass
class JudgeSet:
    """The judges a service loaded, in the order given (the first is the default)."""

    judges: list[ServedJudge]

    @property
    def names(self) -> list[str]:
        """The judges' names (their specs as given)."""
        return [j.name for j in self.judges]

    @property
    def calls_llm(self) -> bool:
        """Whether any judge calls a language model."""
        return any(j.calls_llm for j in self.judges)

    @property
    def specs(self) -> list[JudgeSpec]:
        """The judges' header entries, for a records folder."""
        return [j.spec for j in self.judges]

    def pick(self, name: str | None) -> ServedJudge:
        """The judge a request names (its spec, or a kind only one judge has); the first when None."""
        if name is None:
            return self.judges[0]
        for served in self.judges:
            if served.name == name:
                return served
        of_kind = [served for served in self.judges if served.kind == name]
        if len(of_kind) == 1:
            return of_kind[0]
        raise UnknownJudge(f"no judge {name!r} is loaded; loaded: {', '.join(self.names)}")


def load_judges(specs: Sequence[str], llm: LLMOptions, batching: BatchSettings | None, service: Any = None
                ) -> JudgeSet:
    """Build every judge once (the LLM service only when one of them calls a model); ``batching`` None turns
    micro-batching off (every request judged on its own). ``service`` replaces the LLM service ``llm`` would
    make (a Ray Serve replica's, whose limits and budget are shared)."""
    from groundjudge.runs.execute import build_tasks

    if not specs:
        raise ValueError("serve needs at least one judge")
    configs = [JudgeConfig.from_spec(spec) for spec in specs]
    if service is None and any(uses_llm(c.kind) for c in configs):
        service = make_service(llm)
    tasks, header_specs = build_tasks(configs, service)
    served = []
    for config, task, spec in zip(configs, tasks, header_specs):
        scorer = batch_scorer(task.judge) if batching is not None else None   # the run's batch path
        batcher = MicroBatcher(task.judge, scorer, batching) if scorer is not None else None
        served.append(ServedJudge(name=config.name, kind=config.kind, judge=task.judge, spec=spec, batcher=batcher,
                                  calls_llm=uses_llm(config.kind)))
    return JudgeSet(served)


def import_llm_client() -> None:
    """Import the LLM client library now (seconds of work), so that the first request to an LLM judge does not
    do it on the event loop while every other request waits."""
    try:
        from groundjudge.llm.litellm_module import litellm_module
    except ImportError:   # a checkout where the client imports litellm itself
        import litellm  # noqa: F401
    else:
        litellm_module()


def set_torch_threads(threads: int | None) -> None:
    """Run local models on ``threads`` intra-op threads (None: torch's default, one per core). On a machine
    whose cores other processes share, 1 is often several times faster: a parallel region waits for its
    slowest thread, and a thread that lost its core holds every call up."""
    if threads is None:
        return
    import os

    import torch

    # every model loader sets torch's threads to torch_threads() when it loads (lazily, at warm-up): tell it too,
    # or the first model loaded would put them back to one per core
    os.environ["GROUNDJUDGE_THREADS"] = str(threads)
    torch.set_num_threads(threads)
