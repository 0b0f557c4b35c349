"""What every LLM judge shares: its model settings, the run's LLM service, abstaining on failure, and the screen
for text that addresses the judge (``on_injection``; see ``groundjudge.judges.injection_guard``).

A judge kind implements ``assess(example)``; ``judge(example)`` screens the example first and applies the
``on_injection`` policy around it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, Field

from groundjudge.llm import LLMService, LLMSettings, ProviderError
from groundjudge.llm.templates import PromptLibrary, prompt_library
from groundjudge.llm.token_scores import TokenScore
from groundjudge.judges import SpecError
from groundjudge.judges import injection_guard as guard
from groundjudge.judges.composite import InnerJudge, build_inner
from groundjudge.types import ClaimVerdict, Example, InjectionAction, JudgeResult, LLMCall, Verdict

InjectionDetector = Literal["rules", "embedding"]
"""Detectors of text that addresses the judge: the rule set, and the sentence-embedding check (all-MiniLM-L6-v2)."""

_DEFAULT_SERVICE: LLMService | None = None


def default_service() -> LLMService:
    """The service used when a judge was built without one (no disk cache, no budget)."""
    global _DEFAULT_SERVICE
    if _DEFAULT_SERVICE is None:
        _DEFAULT_SERVICE = LLMService()
    return _DEFAULT_SERVICE


@dataclass(frozen=True)
class LLMJudgeSettings(LLMSettings):
    """Model settings shared by the LLM judges: every field of LLMSettings is a spec setting
    (``direct:model=...,api_base=...``), plus the run's LLM service (not a setting)."""

    max_concurrency: ClassVar[int | None] = None
    TEMPLATES: ClassVar[tuple[str, ...]] = ()
    """The prompts this kind of judge renders (see ``template_names`` for the ones a given judge uses)."""
    model: str = "openai/gpt-4o-mini"
    prompts: str | None = None
    """Folder of templates for this judge: a template found there replaces the built-in one, the rest fall back
    (None: the run's ``--prompts`` folder, else the built-ins)."""
    repeats: Annotated[int, Field(ge=1, le=100)] = 1
    """Judge every answer this many times (each repeat its own cached calls); the majority verdict is scored and
    the flip rate and Fleiss' kappa say how stable the verdicts are."""
    on_injection: InjectionAction = "strip"
    """What to do with an answer (question, document) that addresses the judge: ``strip`` (the default) judges it
    with the suspect spans cut out, ``flag`` judges it as given and marks the verdict (for measuring a judge's own
    defences), ``abstain`` makes no call, ``route`` hands it to the local judge ``route_to``. Findings and the
    action taken are on the verdict in every case; the records header keeps the setting."""
    route_to: InnerJudge | None = None
    """The local judge for ``on_injection=route`` (e.g. ``nli`` or ``quip``)."""
    injection_detectors: tuple[InjectionDetector, ...] = ("rules",)
    """Which detectors screen the texts: ``rules`` (fast, precise), plus ``embedding`` (a sentence-embedding check
    that catches paraphrases the rules miss; loads all-MiniLM-L6-v2)."""
    service: LLMService | None = field(default=None, compare=False, repr=False, metadata={"runtime": True})

    def __post_init__(self) -> None:
        if (self.on_injection == "route") != (self.route_to is not None):
            raise SpecError("on_injection=route needs route_to (a local judge, e.g. route_to=nli), and route_to is "
                            "only used with on_injection=route")
        route = build_inner(self.route_to, self.service) if self.route_to is not None else None
        object.__setattr__(self, "_route", route)

    async def assess(self, example: Example) -> JudgeResult:
        """Judge one example (what each kind of LLM judge implements)."""
        raise NotImplementedError

    async def judge(self, example: Example) -> JudgeResult:
        """Screen the example for text that addresses the judge, then judge it as ``on_injection`` says."""
        findings = guard.screen(example, self.injection_detectors)
        if not findings:
            return await self.assess(example)
        if self.on_injection == "abstain":
            return guard.abstention(example, findings, self.path)
        if self.on_injection == "route":
            return guard.routed(await self._route.judge(example), findings, self.path)
        target = guard.stripped(example, findings) if self.on_injection == "strip" else example
        return guard.flagged(await self.assess(target), findings, self.on_injection)

    def template_names(self) -> tuple[str, ...]:
        """The prompts this judge renders with its settings."""
        return self.TEMPLATES

    @property
    def library(self) -> PromptLibrary:
        """This judge's templates: its own ``prompts`` folder over the built-ins, else the run's."""
        return prompt_library(str(self.prompts)) if self.prompts else self.llm.prompts

    async def ask(self, prompt: str, variables: dict[str, Any], output_model: type[BaseModel],
                  calls: list, settings: LLMSettings | None = None, sample_index: int = 0) -> BaseModel | None:
        """Render one of this judge's prompts and call the model through the run's service (see
        ``LLMService.complete``)."""
        return await self.llm.complete(settings or self.llm_settings(), prompt, variables, output_model, calls,
                                       sample_index=sample_index, prompts=self.library)

    async def ask_yes_no(self, prompt: str, variables: dict[str, Any], calls: list,
                         logprobs: bool) -> TokenScore | None:
        """Render one of this judge's yes/no prompts and score the reply (P(yes) from log-probabilities when
        ``logprobs`` and the provider returns them, else the one-word verdict; see ``LLMService.score_yes_no``)."""
        return await self.llm.score_yes_no(self.llm_settings(), prompt, variables, calls, logprobs,
                                           prompts=self.library)

    def llm_settings(self, **overrides) -> LLMSettings:
        """The plain LLMSettings for calls of this judge (what the cache and the client see)."""
        values = {name: getattr(self, name) for name in LLMSettings.__dataclass_fields__}
        return LLMSettings(**{**values, **overrides})

    @property
    def llm(self) -> LLMService:
        """The run's shared LLM service."""
        return self.service or default_service()

    @property
    def path(self) -> str:
        """What produced the verdicts: ``llm:<model>``."""
        return f"llm:{self.model}"


def abstain(example: Example, reason: str, calls: list[LLMCall], path: str,
            claims: tuple[ClaimVerdict, ...] = ()) -> JudgeResult:
    """An abstention with its reason, keeping every call that was made."""
    verdict = Verdict(example_id=example.id, label="abstain", abstain_reason=reason, claims=claims, path=path)
    return JudgeResult(verdict=verdict, calls=tuple(calls))


def provider_abstention(example: Example, err: ProviderError, calls: list[LLMCall], path: str) -> JudgeResult:
    """The abstention for a provider that could not answer (reason first, then the redacted message)."""
    return abstain(example, f"{err.reason}: {err}"[:500], calls, path)
