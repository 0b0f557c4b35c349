"""Ungrounded variants of grounded answers, each with exactly one error of a named type, beside grounded controls.

``perturb(examples, ...)`` takes grounded (context, answer) pairs and returns, per answer, the original and its
meaning-preserving paraphrases (``label="grounded"``) and, per error type of the legal taxonomy, up to
``per_answer`` variants (``label="ungrounded"``, ``error_types=(TYPE,)``), each with its edit recorded in
``meta["perturbation"]`` (:class:`~groundjudge.perturb.types.PerturbationRecord`). ``groundjudge perturb`` writes
them as native JSON lines that ``groundjudge run`` reads back.

Modules: ``types`` (records), ``lexicon`` (word lists), ``spans`` (applying and recording an edit),
``rules_facts`` (numbers, dates: Factual Inaccuracies), ``rules_parties`` (Misattributions), ``rules_terms``
(Terminological, Procedural, Contextual, Reasoning), ``paraphrase`` (controls), ``llm_generator`` (the LLM's edits
and paraphrases), ``checks`` (differs, fluency, not supported), ``engine`` (the driver).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence

from groundjudge.perturb.checks import Check, JudgeCheck, LexicalCheck
from groundjudge.perturb.engine import RULES, Perturber, PerturbResult, source_group
from groundjudge.perturb.llm_generator import LLMGenerator, parse_llm_spec
from groundjudge.perturb.types import ERROR_TYPES, SLUGS, CheckVerdict, Edit, PerturbationRecord, Rejection
from groundjudge.types import Example

__all__ = [
    "ERROR_TYPES", "RULES", "SLUGS", "Check", "CheckVerdict", "Edit", "JudgeCheck", "LLMGenerator", "LexicalCheck",
    "PerturbResult", "PerturbationRecord", "Perturber", "Rejection", "parse_llm_spec", "parse_types", "perturb",
    "select_sources", "source_group", "type_definitions",
]

SOURCE_LABELS = ("grounded", "unlabelled", "any")
"""Which rows are taken as grounded sources: labelled grounded (default), unlabelled, or every row."""


def parse_types(text: str | None) -> tuple[str, ...]:
    """Type slugs from a comma list (``factual,misattribution``), in the taxonomy's order; None or '' means all.
    A full type name (``Factual Inaccuracies``) is read too. Raises ValueError naming an unknown one."""
    if not text:
        return SLUGS
    by_name = {name.lower(): slug for slug, name in ERROR_TYPES.items()}
    chosen = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        slug = part.lower() if part.lower() in ERROR_TYPES else by_name.get(part.lower())
        if slug is None:
            raise ValueError(f"unknown error type {part!r}; known: {', '.join(SLUGS)}")
        chosen.append(slug)
    if not chosen:
        raise ValueError(f"no error type in {text!r}; known: {', '.join(SLUGS)}")
    return tuple(s for s in SLUGS if s in chosen)


def type_definitions() -> dict[str, str]:
    """Type name -> definition, from the legal taxonomy file the error-types judge uses."""
    from groundjudge.judges.error_types import load_taxonomy

    return {entry.name: entry.definition for entry in load_taxonomy(None)}


def select_sources(examples: Sequence[Example], label: str = "grounded", sample: int | None = None,
                   seed: int = 0) -> list[Example]:
    """The rows to perturb: those with the chosen label (see :data:`SOURCE_LABELS`), a seeded sample of ``sample``
    of them when asked, in input order."""
    if label not in SOURCE_LABELS:
        raise ValueError(f"unknown source label {label!r}; one of {', '.join(SOURCE_LABELS)}")
    pool = [ex for ex in examples if label == "any" or (ex.label == "grounded" if label == "grounded"
                                                        else ex.label is None)]
    if sample is not None and sample < len(pool):
        chosen = set(id(ex) for ex in random.Random(seed).sample(pool, sample))
        pool = [ex for ex in pool if id(ex) in chosen]
    return pool


async def perturb_async(examples: Sequence[Example], *, types: Sequence[str] = SLUGS, per_answer: int = 1,
                        seed: int = 0, paraphrases: int = 1, generator: LLMGenerator | None = None,
                        check: Check | None = None, progress: Callable[[], None] | None = None) -> PerturbResult:
    """:func:`perturb` inside a running event loop."""
    if per_answer < 1:
        raise ValueError("per_answer must be at least 1")
    if paraphrases < 0:
        raise ValueError("paraphrases must be 0 or more")
    unknown = [t for t in types if t not in ERROR_TYPES]
    if unknown:
        raise ValueError(f"unknown error type {unknown[0]!r}; known: {', '.join(SLUGS)}")
    perturber = Perturber(types=tuple(types), per_answer=per_answer, seed=seed, paraphrases=paraphrases,
                          generator=generator, check=check or LexicalCheck(), definitions=type_definitions())
    return await perturber.run(examples, progress)


def perturb(examples: Sequence[Example], *, types: Sequence[str] = SLUGS, per_answer: int = 1, seed: int = 0,
            paraphrases: int = 1, generator: LLMGenerator | None = None, check: Check | None = None,
            progress: Callable[[], None] | None = None) -> PerturbResult:
    """Grounded controls and one-error variants of every example given (each is taken as a grounded source).

    ``types``: type slugs (default all six); ``per_answer``: variants per type per answer; ``seed``: the same
    input and seed give the same rows; ``paraphrases``: paraphrase controls per answer; ``generator``: an
    :class:`LLMGenerator` for the types and answers no rule fills (for every one when it is made with
    ``only=True``); ``check``: a :class:`LexicalCheck` (default) or a :class:`JudgeCheck`; ``progress``: called
    after each answer.
    """
    return asyncio.run(perturb_async(examples, types=types, per_answer=per_answer, seed=seed,
                                     paraphrases=paraphrases, generator=generator, check=check,
                                     progress=progress))
