"""The judge settings that show demonstrations (``demos=FILE,k=4,demo_strategy=balanced``), as a mixin of an LLM
judge's dataclass: the pool is read, screened and (for a fixed set) selected when the judge is built, so a bad
file, an unknown id or a pool without corrections stops the run before anything is judged."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from groundjudge.judges import SpecError
from groundjudge.judges.demonstrations.leakage import find_leaks
from groundjudge.judges.demonstrations.pool import Demonstration, read_pool
from groundjudge.judges.demonstrations.select import PER_ANSWER, Strategy, select_demonstrations
from groundjudge.judges.demonstrations.shown import screened, template_variables
from groundjudge.llm.templates import TemplateError
from groundjudge.local_nli.model import DEFAULT_EMBEDDER
from groundjudge.types import DemonstrationRef, Example, JudgeResult

LEAK_REASON = "demonstration_leak"
"""The abstain reason of an answer judged by a prompt that would show it (a run refuses such data up front)."""


@dataclass(frozen=True)
class DemonstrationSettings:
    """Labelled examples shown before the answer to judge (few-shot), framed as data like the answer."""

    demos: str | None = None
    """Pool file of labelled examples (JSONL: id, context, answer, label; optional question, note, judge_label),
    or a labelled data file in the native format. None: no demonstrations."""
    k: Annotated[int, Field(ge=1, le=64)] = 4
    """How many demonstrations the prompt shows (fewer when the pool has fewer)."""
    demo_strategy: Strategy | None = None
    """``balanced`` (seeded, as many grounded as ungrounded), ``nearest`` (per answer, by sentence embedding),
    ``corrections`` (the pool's entries a judge got wrong), ``fixed`` (demo_ids); None: fixed when demo_ids are
    given, else balanced."""
    demo_seed: int = 0
    """Seed of the balanced and corrections draws."""
    demo_ids: tuple[str, ...] = ()
    """The pool entries to show, in this order (demo_strategy=fixed)."""
    demo_embedder: str = DEFAULT_EMBEDDER
    """Sentence embedder of demo_strategy=nearest."""

    def __post_init__(self) -> None:
        parent = getattr(super(), "__post_init__", None)
        if parent is not None:
            parent()
        object.__setattr__(self, "_demo_state", self._load_demonstrations())

    @property
    def strategy(self) -> str | None:
        """The strategy in use (None without demonstrations)."""
        if self.demos is None:
            return None
        return self.demo_strategy or ("fixed" if self.demo_ids else "balanced")

    def _load_demonstrations(self) -> dict[str, Any] | None:
        if self.demos is None:
            if self.demo_ids or self.demo_strategy:
                raise SpecError("demo_strategy and demo_ids need demos=FILE (a pool of labelled examples)")
            return None
        strategy = self.strategy
        if (strategy == "fixed") != bool(self.demo_ids):
            raise SpecError("demo_ids go with demo_strategy=fixed (the default when demo_ids are given), and "
                            "demo_strategy=fixed needs demo_ids")
        pool = read_pool(self.demos)
        candidates = pool if strategy in PER_ANSWER else select_demonstrations(
            pool, strategy, self.k, self.demo_seed, ids=self.demo_ids)
        detectors = tuple(getattr(self, "injection_detectors", ("rules",)))
        action = getattr(self, "on_injection", "strip")
        shown, refs = {}, []
        for demo in candidates:
            shown[demo.id], ref = screened(demo, detectors, action)
            refs.append(ref)
        return {"candidates": candidates, "shown": shown, "refs": tuple(refs), "checked": set()}

    def demonstration_candidates(self) -> list[Demonstration]:
        """Every demonstration this judge may show, as in the pool (what the leakage check compares)."""
        state = self._demo_state
        return list(state["candidates"]) if state else []

    def demonstration_refs(self) -> tuple[DemonstrationRef, ...]:
        """The header records of those demonstrations (id, hashes, injection findings)."""
        state = self._demo_state
        return state["refs"] if state else ()

    def demonstrations_for(self, example: Example) -> list[Demonstration]:
        """The demonstrations shown before ``example`` (suspect text already cut out unless on_injection=flag)."""
        state = self._demo_state
        if not state:
            return []
        if self.strategy in PER_ANSWER:
            chosen = select_demonstrations(state["candidates"], self.strategy, self.k, self.demo_seed,
                                           for_example=example, embedder=self.demo_embedder)
        else:
            chosen = state["candidates"]
        return [state["shown"][demo.id] for demo in chosen]

    def demo_variables(self, example: Example, template: str | None = None) -> list[dict[str, Any]]:
        """The ``demos`` template variable for ``example`` (empty without demonstrations); with ``template`` (a
        prompt of the judge's library), a prompt that does not read ``demos`` is a TemplateError, not a silent
        prompt without them."""
        if not self._demo_state:
            return []
        shown = template_variables(self.demonstrations_for(example))
        if template is not None and template not in self._demo_state["checked"]:
            self._check_template(template, example)
        return shown

    def _check_template(self, template: str, example: Example) -> None:
        probe = "demonstration-probe-7f3a"
        demos = template_variables([Demonstration(id=probe, context=[probe], answer=probe, label="grounded")])
        rendered = self.library.render(template, {"question": example.question, "context": list(example.context),
                                                  "answer": example.answer, "demos": demos})
        if not any(probe in message["content"] for message in rendered.messages):
            raise TemplateError(f"prompt {template!r} does not show demonstrations (it never renders the variable "
                                "'demos'; see the built-in _demonstrations.j2), but demos= is set")
        self._demo_state["checked"].add(template)

    async def demo_variables_async(self, example: Example, template: str | None = None) -> list[dict[str, Any]]:
        """:meth:`demo_variables` off the event loop when the choice embeds the answer (``nearest``)."""
        if self.strategy in PER_ANSWER:
            return await asyncio.to_thread(self.demo_variables, example, template)
        return self.demo_variables(example, template)

    async def judge(self, example: Example) -> JudgeResult:
        """Abstain, with no call, on an answer that is one of the demonstrations; else judge as usual."""
        leaks = find_leaks(self.demonstration_candidates(), [example]) if self._demo_state else []
        if leaks:
            from groundjudge.judges.llm_judge import abstain

            return abstain(example, f"{LEAK_REASON}: {leaks[0]}", [], self.path)
        return await super().judge(example)
