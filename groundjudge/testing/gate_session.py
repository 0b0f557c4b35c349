"""The judges of one test session: each built once per (spec, settings), one LLM service, one event loop.

A session judges an answer ``repeats`` times (each repeat its own LLM calls and cache keys) and decides the gate:
the answer passes when the share of passing repeats reaches ``pass_rate``. With ``replay`` set, the LLM service
answers only from the calls recorded in that run folder (no network); local judges run again.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from groundjudge.testing.gate_model import GateSettings, GateVerdict


@dataclass(frozen=True)
class Repeated:
    """A judge judged ``repeats`` times by :func:`groundjudge.runs.runner.judge_one` (majority, every verdict)."""

    inner: Any
    repeats: int

    @property
    def name(self) -> str:
        """The inner judge's name."""
        return getattr(self.inner, "name", type(self.inner).__name__)

    async def judge(self, example):
        """One repeat: the inner judge's verdict."""
        return await self.inner.judge(example)


class GateSession:
    """The judges, LLM service and event loop shared by every check of one session."""

    def __init__(self, replay: str | None = None, default_judge: str | None = None):
        self.replay = replay
        self.default_judge = default_judge
        self._service = None
        self._judges: dict[str, tuple[Any, Any]] = {}
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def service(self):
        """The LLM service (made on first use): the call cache, or the replay folder's recorded calls offline."""
        if self._service is None:
            from groundjudge.llm.service_options import LLMOptions, make_service

            if self.replay:
                from groundjudge.runs.replay_cache import recorded_cache

                self._service = make_service(LLMOptions(), offline=True, cache=recorded_cache(self.replay))
            else:
                self._service = make_service(LLMOptions())
        return self._service

    def judge_for(self, judge: Any):
        """(built judge, its header entry) for a judge spec, config or table; built once per session."""
        from groundjudge.api import as_config

        if judge is None:
            judge = self.default_judge
        if judge is None:
            raise ValueError("no judge: pass judge=..., mark the test @pytest.mark.groundjudge(judge=...) "
                             "or set groundjudge_judge in the pytest configuration")
        config = as_config(judge)
        key = json.dumps([config.name, config.kind, config.settings], sort_keys=True, default=str)
        with self._lock:
            if key not in self._judges:
                from groundjudge.runs.execute import build_tasks

                tasks, specs = build_tasks([config], self.service())
                self._judges[key] = (tasks[0].judge, specs[0])
            return self._judges[key]

    def run(self, coro: Coroutine) -> Any:
        """Run a coroutine on the session's event loop (a thread of its own, so async tests can call it too)."""
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=self._loop.run_forever, name="groundjudge-gate",
                                                daemon=True)
                self._thread.start()
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def check(self, test: str, answer: str, context: str | Sequence[str], question: str | None,
              settings: GateSettings) -> GateVerdict:
        """Judge one answer as ``settings`` say and decide the gate (nothing raised for a failing answer)."""
        from groundjudge.runs.runner import judge_one
        from groundjudge.types import Example

        judge, spec = self.judge_for(settings.judge)
        repeats = settings.repeats or max(1, int(getattr(judge, "repeats", 1) or 1))
        example = Example(id=test, question=question, answer=answer,
                          context=(context,) if isinstance(context, str) else tuple(context))
        result = self.run(judge_one(Repeated(judge, repeats), example))
        verdicts = result.repeats or (result.verdict,)
        passing = sum(_passes(v, settings.min_score) for v in verdicts)
        verdict = result.verdict
        threshold = settings.min_score if settings.min_score is not None else verdict.threshold
        return GateVerdict(test=test, judge=spec.spec, label=verdict.label, score=verdict.score,
                           threshold=threshold, min_score=settings.min_score, repeats=len(verdicts), passing=passing,
                           pass_rate=settings.pass_rate, passed=passing >= settings.pass_rate * len(verdicts) - 1e-9,
                           spec=spec, example=example, result=result)

    def close(self) -> None:
        """Stop the event loop (the session is over)."""
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is not None:
            try:
                asyncio.run_coroutine_threadsafe(_drain(), loop).result(timeout=10)
            finally:
                loop.call_soon_threadsafe(loop.stop)
                thread.join(timeout=10)
                loop.close()


async def _drain() -> None:
    """Cancel what is left on the loop (a client's background workers) and close its async generators, as
    ``asyncio.run`` does before it closes a loop."""
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.get_running_loop().shutdown_asyncgens()


def _passes(verdict, min_score: float | None) -> bool:
    """Whether one repeat passes: its label is grounded, or (with ``min_score``) its score reaches it."""
    if min_score is None:
        return verdict.label == "grounded"
    return verdict.score is not None and verdict.score >= min_score
