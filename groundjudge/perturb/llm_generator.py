"""The LLM generator: asks a model for one minimal edit of a named error type (or a meaning-preserving paraphrase)
through groundjudge's LLM layer (templates, cache, retries, budget), and turns the reply into a candidate.

One template, ``perturb_edit``, serves all six types: it is given the type's name and definition from the
taxonomy file (the same text ``error_types_classify`` labels errors with), plus a one-line example per legal type
kept in the template. Six near-identical templates would drift apart, and a taxonomy of one's own
(``taxonomy=PATH``) would need templates of its own; one template keeps generation and classification speaking of
a type in the same words. ``perturb_paraphrase`` asks for a grounded rewrite. Both frame the documents and the
answer with the shared ``_blocks.j2`` blocks.

The model's reply names the span it changed (``before``, copied from the answer) and its replacement (``after``);
a span that is not in the answer, an unchanged or empty one, or one that is not minimal (it crosses a sentence, runs
over :data:`MAX_EDIT_WORDS` words, or its replacement adds a sentence or joins two) is rejected with that reason.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from groundjudge.judges import SpecError
from groundjudge.llm import LLMService, LLMSettings, ProviderError
from groundjudge.perturb.spans import diff_edit, replace
from groundjudge.perturb.types import Candidate
from groundjudge.text import sentence_spans
from groundjudge.types import Example, LLMCall

MAX_EDIT_WORDS = 25
"""An edit that changes more words than this (before or after) is not minimal."""


class EditReply(BaseModel):
    """The ``perturb_edit`` reply: the span changed, its replacement, and why the answer is now wrong."""

    before: str = Field(max_length=2000)
    after: str = Field(max_length=2000)
    reason: str = Field(default="", max_length=500)


class ParaphraseReply(BaseModel):
    """The ``perturb_paraphrase`` reply: the rewritten answer."""

    paraphrase: str = Field(max_length=20_000)


def parse_llm_spec(text: str) -> LLMSettings:
    """LLM settings from ``model=...,api_base=...,temperature=...`` (any LLMSettings field), or a bare model name."""
    from groundjudge.judges.config import parse_spec

    body = text.strip()
    if body.startswith("llm:"):
        body = body[4:]
    if "=" not in body:
        body = f"model={body}"
    _, raw = parse_spec(f"llm:{body}")
    known = {f.name for f in dataclasses.fields(LLMSettings)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise SpecError(f"generator spec {text!r}: no setting {unknown[0]!r}; settings: {', '.join(sorted(known))}")
    if "model" not in raw:
        raise SpecError(f"generator spec {text!r}: model=... is required")
    values = {k: (None if isinstance(v, str) and v.lower() in ("none", "null") else v) for k, v in raw.items()}
    try:
        return TypeAdapter(LLMSettings).validate_python(values)
    except ValidationError as err:
        first = err.errors()[0]
        raise SpecError(f"generator spec {text!r}: setting {first['loc'][0]!r}: {first['msg']}, "
                        f"got {first.get('input')!r}") from None


def _locate(answer: str, span: str) -> tuple[int, int] | None:
    """Where the model's quoted span is in the answer: exactly, else ignoring case and runs of spaces."""
    at = answer.find(span)
    if at >= 0:
        return at, at + len(span)
    words = span.split()
    if not words:
        return None
    found = re.search(r"\s+".join(map(re.escape, words)), answer, re.IGNORECASE)
    return found.span() if found else None


def _crosses_sentences(text: str, start: int, end: int) -> bool:
    return not any(s <= start and end <= e for s, e in sentence_spans(text)) and end > start


@dataclass
class LLMGenerator:
    """Edits and paraphrases asked of one model through the run's LLM service."""

    settings: LLMSettings
    service: LLMService = field(default_factory=LLMService)
    only: bool = False
    """Write every variant and paraphrase with the model, no rule's (``--generator-only``); by default the
    model is asked only for the types and answers no rule fills."""
    calls: list[LLMCall] = field(default_factory=list, repr=False)

    @classmethod
    def from_spec(cls, spec: str, service: LLMService | None = None, *, only: bool = False) -> LLMGenerator:
        """The generator of ``--generator SPEC`` (``only``: of ``--generator-only``)."""
        return cls(settings=parse_llm_spec(spec), service=service or LLMService(), only=only)

    @property
    def name(self) -> str:
        """How rows name this generator: ``llm:<model>``."""
        return f"llm:{self.settings.model}"

    async def _ask(self, prompt: str, variables: dict[str, Any], reply: type[BaseModel],
                   sample: int) -> tuple[BaseModel | None, str | None]:
        try:
            parsed = await self.service.complete(self.settings, prompt, variables, reply, self.calls,
                                                 sample_index=sample)
        except ProviderError as err:
            return None, f"llm:provider_error:{err.reason}"
        return (parsed, None) if parsed is not None else (None, "llm:invalid_reply")

    async def edit(self, source: Example, error_type: str, definition: str,
                   sample: int = 0) -> tuple[Candidate | None, str | None, str | None]:
        """One edit of ``error_type``: (candidate, None, None), or (None, reason, detail) when it is unusable."""
        variables = {"context": list(source.context), "question": source.question, "answer": source.answer,
                     "taxonomy": [{"name": error_type, "definition": definition}]}
        parsed, reason = await self._ask("perturb_edit", variables, EditReply, sample)
        if parsed is None:
            return None, reason, None
        answer = source.answer
        if not parsed.before.strip():
            return None, "llm:empty_span", parsed.reason or None
        located = _locate(answer, parsed.before)
        if located is None:
            return None, "llm:span_not_found", f"{parsed.before!r} is not in the answer"
        start, end = located
        candidate = replace(answer, start, end, parsed.after, "llm", self.name, parsed.reason or None)
        if candidate is None:
            return None, "unchanged", f"{parsed.before!r} -> {parsed.after!r}"
        edit = candidate.edit
        if (max(len(edit.before.split()), len(edit.after.split())) > MAX_EDIT_WORDS
                or _crosses_sentences(answer, edit.before_start, edit.before_end)
                or len(sentence_spans(candidate.text)) != len(sentence_spans(answer))):
            return None, "llm:not_minimal", f"{edit.before!r} -> {edit.after!r}"
        return candidate, None, None

    async def paraphrase(self, source: Example, sample: int = 0) -> tuple[Candidate | None, str | None, str | None]:
        """One paraphrase of the answer: (candidate, None, None), or (None, reason, detail)."""
        variables = {"context": list(source.context), "question": source.question, "answer": source.answer}
        parsed, reason = await self._ask("perturb_paraphrase", variables, ParaphraseReply, sample)
        if parsed is None:
            return None, reason, None
        text = parsed.paraphrase.strip()
        if not text:
            return None, "llm:empty_span", None
        if text == source.answer:
            return None, "unchanged", None
        return Candidate(text=text, edit=diff_edit(source.answer, text), rule="llm", generator=self.name), None, None
