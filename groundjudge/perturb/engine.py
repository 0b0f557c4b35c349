"""The driver: for every source answer, its grounded controls (the original and its paraphrases) and, per error
type, up to ``per_answer`` ungrounded variants, each candidate checked before it is kept.

Candidates of one (source, type) are tried in a seeded order: the rule candidates first (all places where a rule of
that type applies, shuffled), then the LLM generator's edits when one is given (or only those when the generator is
``only``). Every answer's work depends only on the seed, its id and the type, so the same input and seed
give the same rows whatever the concurrency, and adding a type changes no other type's rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import random
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from groundjudge.formats._common import short_hash
from groundjudge.llm.concurrency import resolve_concurrency
from groundjudge.perturb.checks import Check, LexicalCheck, differs, fluency_problem
from groundjudge.perturb.llm_generator import LLMGenerator
from groundjudge.perturb.paraphrase import paraphrase_candidates
from groundjudge.perturb.rules_facts import factual_candidates
from groundjudge.perturb.rules_parties import misattribution_candidates
from groundjudge.perturb.rules_terms import (contextual_candidates, procedural_candidates, reasoning_candidates,
                                             terminological_candidates)
from groundjudge.perturb.spans import context_sentence
from groundjudge.perturb.types import ERROR_TYPES, SLUGS, Candidate, CheckVerdict, PerturbationRecord, Rejection
from groundjudge.types import Example

RULES: dict[str, Callable[[str, tuple[str, ...], random.Random], list[Candidate]]] = {
    "factual": factual_candidates, "contextual": contextual_candidates, "procedural": procedural_candidates,
    "reasoning": reasoning_candidates, "misattribution": misattribution_candidates,
    "terminological": terminological_candidates,
}
"""The rule generator of each type slug: (answer, context, rng) -> every candidate edit it can make."""

LLM_TRIES_PER_VARIANT = 2
"""LLM edits asked for per variant wanted (each its own sample, so a repeated reply can be replaced)."""

MAX_CONCURRENT_SOURCES = 8
"""Source answers worked on at once without a generator (with one: as many as its server serves at once)."""

_DETAILS = {"unchanged": "the same answer once case, spacing and punctuation are set aside",
            "duplicate": "the same text as a row already kept for this answer"}


def _verdict_text(verdict: CheckVerdict) -> str:
    score = "" if verdict.score is None else f", score {verdict.score:.3g}"
    return f"{verdict.judge}: {verdict.label}{score}" + (f" ({verdict.reason})" if verdict.reason else "")


def source_group(example: Example) -> str:
    """The split group of a source's rows: its ``meta.group``, else its context (all rows about one document stay
    on one side of a dev/test split)."""
    if "group" in example.meta:
        return str(example.meta["group"])
    return "context:" + short_hash(*example.context)


def seeded(seed: int, *parts: str) -> random.Random:
    """A generator seeded by the run's seed and a name (a source id, a type), independent of everything else."""
    digest = hashlib.sha256("\0".join([str(seed), *parts]).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


@dataclass
class PerturbResult:
    """The rows written (controls and variants, source by source) and every candidate that was rejected."""

    examples: list[Example]
    rejections: list[Rejection]
    sources: int
    types: tuple[str, ...]
    check: str

    def kept_by_type(self) -> Counter:
        """Variants kept per type slug (every slug asked for present, 0 included)."""
        kept = Counter({slug: 0 for slug in self.types})
        kept.update(e.meta["perturbation"]["type_slug"] for e in self.examples
                    if e.meta["perturbation"]["kind"] == "variant")
        return kept

    def controls(self) -> Counter:
        """Grounded controls kept, by kind (original, paraphrase)."""
        return Counter(e.meta["perturbation"]["kind"] for e in self.examples
                       if e.meta["perturbation"]["kind"] != "variant")

    def rejected_by_reason(self) -> Counter:
        """Rejected candidates per reason code."""
        return Counter(r.reason for r in self.rejections)

    def rejections_report(self) -> dict[str, Any]:
        """What ``FILE.rejections.json`` holds: counts by reason and by type, then every rejection."""
        by_type: dict[str, Counter] = {}
        for r in self.rejections:
            by_type.setdefault(r.type_slug or r.kind, Counter())[r.reason] += 1
        return {"sources": self.sources, "check": self.check, "kept": dict(self.kept_by_type()),
                "controls": dict(self.controls()), "rejected": dict(sorted(self.rejected_by_reason().items())),
                "rejected_by_type": {k: dict(sorted(v.items())) for k, v in sorted(by_type.items())},
                "rejections": [r.model_dump(mode="json") for r in self.rejections]}


@dataclass
class _Source:
    """The work on one source answer: what it kept and rejected."""

    example: Example
    rows: list[Example] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    texts: set[str] = field(default_factory=set)


@dataclass
class Perturber:
    """Settings of one run of the perturbation (see :func:`groundjudge.perturb.perturb`)."""

    types: tuple[str, ...] = SLUGS
    per_answer: int = 1
    seed: int = 0
    paraphrases: int = 1
    generator: LLMGenerator | None = None
    check: Check = field(default_factory=LexicalCheck)
    definitions: dict[str, str] = field(default_factory=dict)

    @property
    def rules_apply(self) -> bool:
        """Whether the rules make candidates: unless the generator is to make every one (``only``)."""
        return self.generator is None or not self.generator.only

    def _row(self, work: _Source, row_id: str, text: str, record: PerturbationRecord) -> Example:
        source = work.example
        meta = {**source.meta, "group": source_group(source), "perturbation": record.model_dump(mode="json")}
        variant = record.kind == "variant"
        return source.model_copy(update={
            "id": row_id, "answer": text, "label": "ungrounded" if variant else "grounded",
            "error_types": (record.error_type,) if variant else (), "meta": meta})

    def _reject(self, work: _Source, candidate: Candidate | None, kind: str, slug: str | None, reason: str,
                detail: str | None = None, generator: str = "rule", rule: str = "") -> None:
        if candidate is not None:
            generator, rule = candidate.generator, candidate.rule
        work.rejections.append(Rejection(source_id=work.example.id, kind=kind, type_slug=slug, generator=generator,
                                         rule=rule, reason=reason, detail=detail,
                                         text=candidate.text if candidate is not None else None))

    def _cheap_problem(self, work: _Source, candidate: Candidate) -> str | None:
        if not differs(work.example.answer, candidate.text):
            return "unchanged"
        if candidate.text in work.texts:
            return "duplicate"
        return fluency_problem(work.example.answer, candidate.text)

    async def _candidates(self, work: _Source, slug: str) -> AsyncIterator[tuple[Candidate | None, str | None,
                                                                            str | None]]:
        rng = seeded(self.seed, work.example.id, slug)
        if self.rules_apply:
            found = RULES[slug](work.example.answer, work.example.context, rng)
            rng.shuffle(found)
            for candidate in found:
                yield candidate, None, None
        if self.generator is not None:
            name = ERROR_TYPES[slug]
            for sample in range(LLM_TRIES_PER_VARIANT * self.per_answer):
                yield await self.generator.edit(work.example, name, self.definitions.get(name, ""), sample)

    async def _variants(self, work: _Source, slug: str) -> None:
        async with contextlib.aclosing(self._candidates(work, slug)) as stream:
            await self._fill_variants(work, slug, stream)

    async def _fill_variants(self, work: _Source, slug: str, stream: AsyncIterator) -> None:
        kept = 0
        while kept < self.per_answer:     # pull the next candidate only when one is still wanted (LLM calls)
            item = await anext(stream, None)
            if item is None:
                break
            candidate, reason, detail = item
            if candidate is None:
                self._reject(work, None, "variant", slug, reason or "llm:invalid_reply", detail,
                             self.generator.name if self.generator else "rule", "llm")
                continue
            problem = self._cheap_problem(work, candidate)
            if problem is not None:
                self._reject(work, candidate, "variant", slug, problem, _DETAILS.get(problem))
                continue
            verdict = await self.check.verdict(work.example, candidate)
            if verdict.label != "ungrounded":
                reason = "check_abstained" if verdict.label == "abstain" else \
                    f"supported:{self.check.name.split(':')[0]}"
                self._reject(work, candidate, "variant", slug, reason, _verdict_text(verdict))
                continue
            kept += 1
            work.texts.add(candidate.text)
            record = PerturbationRecord(
                kind="variant", source_id=work.example.id, error_type=ERROR_TYPES[slug], type_slug=slug,
                generator=candidate.generator, rule=candidate.rule,
                edit=candidate.edit, context_sentence=context_sentence(work.example.context, work.example.answer,
                                                                       candidate.edit),
                check=verdict, note=candidate.note)
            work.rows.append(self._row(work, f"{work.example.id}~{slug}~{kept}", candidate.text, record))

    async def _paraphrase_stream(self, work: _Source) -> AsyncIterator[tuple[Candidate | None, str | None,
                                                                           str | None]]:
        if self.rules_apply:
            found = paraphrase_candidates(work.example.answer)
            seeded(self.seed, work.example.id, "paraphrase").shuffle(found)
            for candidate in found:
                yield candidate, None, None
        if self.generator is not None:
            for sample in range(LLM_TRIES_PER_VARIANT * self.paraphrases):
                yield await self.generator.paraphrase(work.example, sample)

    async def _paraphrases(self, work: _Source) -> None:
        async with contextlib.aclosing(self._paraphrase_stream(work)) as stream:
            await self._fill_paraphrases(work, stream)

    async def _fill_paraphrases(self, work: _Source, stream: AsyncIterator) -> None:
        kept = 0
        while kept < self.paraphrases:
            item = await anext(stream, None)
            if item is None:
                break
            candidate, reason, detail = item
            if candidate is None:
                self._reject(work, None, "paraphrase", None, reason or "llm:invalid_reply", detail,
                             self.generator.name if self.generator else "rule", "llm")
                continue
            problem = self._cheap_problem(work, candidate)
            if problem is not None:
                self._reject(work, candidate, "paraphrase", None, problem, _DETAILS.get(problem))
                continue
            verdict: CheckVerdict | None = None
            if candidate.generator != "rule" and not isinstance(self.check, LexicalCheck):
                verdict = await self.check.verdict(work.example, candidate)   # an LLM rewrite must stay grounded
                if verdict.label != "grounded":
                    reason = "check_abstained" if verdict.label == "abstain" else "paraphrase_not_grounded"
                    self._reject(work, candidate, "paraphrase", None, reason, _verdict_text(verdict))
                    continue
            kept += 1
            work.texts.add(candidate.text)
            record = PerturbationRecord(kind="paraphrase", source_id=work.example.id, generator=candidate.generator,
                                        rule=candidate.rule, edit=candidate.edit, check=verdict)
            work.rows.append(self._row(work, f"{work.example.id}~para~{kept}", candidate.text, record))

    async def one(self, source: Example) -> _Source:
        """Controls and variants of one source answer."""
        work = _Source(example=source, texts={source.answer})
        work.rows.append(self._row(work, f"{source.id}~orig", source.answer,
                                   PerturbationRecord(kind="original", source_id=source.id)))
        if self.paraphrases:
            await self._paraphrases(work)
        for slug in self.types:
            await self._variants(work, slug)
        return work

    async def run(self, sources: Sequence[Example], progress: Callable[[], None] | None = None) -> PerturbResult:
        """Every source, a few at a time, and rows and rejections in source order.

        At once: as many sources as the generator's server serves calls at once (:data:`MAX_CONCURRENT_SOURCES`
        without a generator), or as the check judges in one batch when that is more. A local server with one slot
        thus gets an answer's requests back to back, and they share their prefix (documents and answer) with the
        request before, which such a server reuses instead of reading it again."""
        at_once = (MAX_CONCURRENT_SOURCES if self.generator is None
                   else await resolve_concurrency(self.generator.settings))
        gate = asyncio.Semaphore(max(at_once, getattr(self.check, "concurrency", 1)))

        async def guarded(source: Example) -> _Source:
            async with gate:
                done = await self.one(source)
            if progress is not None:
                progress()
            return done

        try:
            works = await asyncio.gather(*(guarded(s) for s in sources))
        finally:
            close = getattr(self.check, "aclose", None)
            if close is not None:
                await close()
        return PerturbResult(examples=[row for w in works for row in w.rows],
                             rejections=[r for w in works for r in w.rejections], sources=len(sources),
                             types=self.types, check=self.check.name)
