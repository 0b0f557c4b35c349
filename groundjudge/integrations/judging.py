"""Judge one answer from inside another tool's event loop (Inspect scorers, RAGAS metrics are async).

``groundjudge.judge`` runs its own loop (``asyncio.run``), which cannot be called from a running one; the
adapters await :meth:`LoopJudge.judge` instead. The judge is built once per event loop (an LLM judge's client and
its limits belong to the loop that made them) and shared by every answer judged in it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from groundjudge.integrations.verdicts import VerdictView, view_of
from groundjudge.types import Example, JudgeSpec


@dataclass
class LoopJudge:
    """A groundjudge judge (spec text and settings) built on first use in each event loop that awaits it."""

    judge: str = "quip"
    settings: dict[str, Any] = field(default_factory=dict)
    _built: dict[int, tuple[Any, JudgeSpec]] = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        """The judge's name (its spec text with the settings given as keywords)."""
        return self._config().name

    def _config(self) -> Any:
        from groundjudge.api import as_config

        return as_config(self.judge, **self.settings)

    def _for_this_loop(self) -> tuple[Any, JudgeSpec]:
        """The judge built for the running loop (built now if this loop has none), with its header entry."""
        key = id(asyncio.get_running_loop())
        if key not in self._built:
            from groundjudge.judges import judge_settings
            from groundjudge.llm.service_options import LLMOptions, make_service

            config = self._config()
            built = config.build(service=make_service(LLMOptions()))
            self._built = {key: (built, JudgeSpec(spec=config.name, name=config.kind,
                                                  settings=judge_settings(built)))}
        return self._built[key]

    async def judge_answer(self, answer: str, context: Sequence[str], question: str | None = None,
                           example_id: str = "answer", meta: dict[str, Any] | None = None) -> VerdictView:
        """Judge ``answer`` against the documents ``context``: the verdict as the adapters report it."""
        from groundjudge.runs.runner import judge_one

        built, spec = self._for_this_loop()
        example = Example(id=example_id, question=question, context=tuple(context), answer=answer,
                          meta=dict(meta or {}))
        result = await judge_one(built, example)
        return view_of(result, judge=spec.spec, spec=spec, meta=example.meta)


def documents_of(value: Any) -> list[str]:
    """Non-blank documents from one text or a list of texts (other items: their ``str``)."""
    items = [value] if isinstance(value, str) else list(value or [])
    texts = [item if isinstance(item, str) else str(item) for item in items]
    return [text for text in texts if text.strip()]
