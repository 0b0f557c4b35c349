"""The LLM's part in pairs made from documents, when one is configured: a paraphrase of each grounded claim
(``--generator SPEC``, perturb's generator; kept when it passes ``keeps_meaning`` and the judge's evidence for it
holds the claim's supporting sentences, which is then its premise), and a check of every pair that
is not a document sentence itself (``--check SPEC``: a judge of the registry; the pair is dropped, and counted under
``llm``, unless the judge's verdict on the claim against the premise agrees with the pair's label)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from groundjudge.local_nli.doc_checks import paraphrase_problem
from groundjudge.local_nli.doc_evidence import MISSED, DocEvidence
from groundjudge.local_nli.doc_pairs import DocPair, UnitPairs
from groundjudge.types import Example

PARAPHRASED_KINDS = ("sentence", "fusion2", "fusion3")
"""Claims the generator is asked to paraphrase."""


def _example(unit: UnitPairs, number: int, pair: DocPair) -> Example:
    return Example(id=f"{unit.key}-{number}", context=(pair.premise,), answer=pair.hypothesis,
                   meta={"group": unit.group})


async def _paraphrase(unit: UnitPairs, number: int, pair: DocPair, generator: Any,
                      evidence: DocEvidence) -> DocPair | None:
    candidate, reason, _ = await generator.paraphrase(_example(unit, number, pair), 0)
    if candidate is None:
        unit.drop("paraphrase:llm", "llm" if reason and reason.startswith("llm:") else "differs")
        return None
    problem = paraphrase_problem(pair.hypothesis, candidate.text, by_llm=True)
    if problem is not None:
        unit.drop("paraphrase:llm", problem)
        return None
    premise = evidence.supported_premise(candidate.text, pair.support)
    if premise is None:
        unit.drop("paraphrase:llm", MISSED)
        return None
    return replace(pair, premise=premise, hypothesis=candidate.text, kind="paraphrase:llm", rule=generator.name,
                   checks=("differs", "keeps_meaning"))


async def add_llm_paraphrases(unit: UnitPairs, generator: Any, evidence: DocEvidence, concurrency: int = 4) -> None:
    """Append one checked LLM paraphrase of every grounded sentence or fusion of the unit (in the unit's order),
    each against the judge's evidence for it (``evidence``: the document's selection)."""
    gate = asyncio.Semaphore(concurrency)

    async def one(number: int, pair: DocPair) -> DocPair | None:
        async with gate:
            return await _paraphrase(unit, number, pair, generator, evidence)

    sources = [(n, p) for n, p in enumerate(unit.pairs) if p.kind in PARAPHRASED_KINDS]
    made = await asyncio.gather(*(one(n, p) for n, p in sources))
    known = {p.hypothesis for p in unit.pairs}
    for pair in made:
        if pair is not None and pair.hypothesis not in known:
            known.add(pair.hypothesis)
            unit.pairs.append(pair)


async def _agrees(unit: UnitPairs, number: int, pair: DocPair, check: Any) -> bool:
    result = await check.judge.judge(_example(unit, number, pair))
    wanted = "grounded" if pair.label == "supported" else "ungrounded"
    return result.verdict.label == wanted


async def llm_checked(unit: UnitPairs, check: Any, concurrency: int = 4) -> None:
    """Keep the unit's pairs the judge agrees with (document sentences are kept unjudged); ``llm`` counts the
    others, and every kept pair judged records ``llm`` among its checks. A check that batches (a local judge)
    is given a batch's worth of pairs at once."""
    gate = asyncio.Semaphore(max(concurrency, getattr(check, "concurrency", 1)))

    async def one(number: int, pair: DocPair) -> bool | None:
        if pair.kind == "sentence":
            return None
        async with gate:
            return await _agrees(unit, number, pair, check)

    verdicts = await asyncio.gather(*(one(n, p) for n, p in enumerate(unit.pairs)))
    kept = []
    for pair, agrees in zip(unit.pairs, verdicts):
        if agrees is None:
            kept.append(pair)
        elif agrees:
            kept.append(replace(pair, checks=(*pair.checks, "llm")))
        else:
            unit.drop(pair.kind, "llm")
    unit.pairs = kept
