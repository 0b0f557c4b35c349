"""Error-types judge: the claims chain, then every unsupported claim typed with a taxonomy.

The default taxonomy is the six legal error types (``groundjudge/judges/taxonomies/legal_error_types.json``);
``taxonomy=PATH`` points at any JSON list of ``{"name", "definition"}`` to use another.

``backend=local`` calls no language model: the local judge ``detector`` decides grounding and a head trained by
``groundjudge train-error-types`` (``model=PATH``) types each unsupported sentence
(:mod:`groundjudge.judges.error_types_local`).
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, Field, create_model

from groundjudge.judges import register
from groundjudge.judges.claims import ClaimsJudge
from groundjudge.judges.composite import InnerJudge, build_inner
from groundjudge.llm import ProviderError
from groundjudge.types import ClaimVerdict, Example, JudgeResult, LLMCall

DEFAULT_TAXONOMY = Path(__file__).resolve().parent / "taxonomies" / "legal_error_types.json"


class ErrorTypeEntry(BaseModel):
    """One entry of a taxonomy file."""

    name: str
    definition: str


@lru_cache(maxsize=8)
def load_taxonomy(path: str | None) -> tuple[ErrorTypeEntry, ...]:
    """Read a taxonomy file (a JSON list of name + definition)."""
    source = Path(path) if path else DEFAULT_TAXONOMY
    try:
        entries = json.loads(source.read_text(encoding="utf-8"))
        return tuple(ErrorTypeEntry.model_validate(e) for e in entries)
    except (OSError, ValueError) as err:
        raise ValueError(f"taxonomy {source}: {err}") from err


def judge_taxonomy(kind: str, settings: dict) -> frozenset[str] | None:
    """The type names the error-typing judge of a recorded judge (kind and settings, as in a records header)
    chooses from, also when it is an inner judge of a cascade or fallback; None when there is none."""
    if kind == "error_types":
        try:
            return frozenset(t.name for t in load_taxonomy(settings.get("taxonomy")))
        except ValueError:
            return None
    for value in settings.values():
        if isinstance(value, dict) and isinstance(value.get("kind"), str):
            inner = {k: v for k, v in value.items() if k != "kind"}
            found = judge_taxonomy(value["kind"], inner)
        elif isinstance(value, str) and value.split(":")[0] == "error_types":
            found = taxonomy_names(value)
        else:
            continue
        if found is not None:
            return found
    return None


def taxonomy_names(spec: str) -> frozenset[str] | None:
    """The type names an error-typing judge spec chooses from (its ``taxonomy=PATH``, else the default), also
    when it is nested in a cascade or fallback spec; None for a spec without an error-types judge, or whose
    taxonomy file cannot be read here."""
    if "error_types" not in spec:
        return None
    found = re.search(r"taxonomy=([^,;}\]]+)", spec)
    try:
        return frozenset(t.name for t in load_taxonomy(found.group(1).strip() if found else None))
    except ValueError:
        return None


REASON_MAX_CHARS = 300
"""Longest reason of one label (one sentence is asked for)."""


@lru_cache(maxsize=64)
def label_model(names: tuple[str, ...], n: int) -> type[BaseModel]:
    """The ``error_types_classify`` reply for ``n`` claims: one label each, its type one of ``names``."""
    entry = create_model("ErrorTypeLabel", claim=(int, Field(ge=1, le=n)), error_type=(Literal[names], ...),
                         reason=(str, Field("", max_length=REASON_MAX_CHARS)))
    return create_model("ErrorTypeLabels", labels=(list[entry], Field(min_length=n, max_length=n)))


@register
@dataclass(frozen=True)
class ErrorTypesJudge(ClaimsJudge):
    """The claims chain, then each unsupported claim gets one error type of a taxonomy (default: six legal types)."""

    name: ClassVar[str] = "error_types"
    TEMPLATES: ClassVar[tuple[str, ...]] = ("claims_extract", "facts_extract", "claims_verify", "claim_yesno",
                                           "error_types_classify")
    taxonomy: str | None = None
    backend: Literal["llm", "local"] = "llm"
    """``llm``: the claims chain and a typing call; ``local``: the ``detector`` judge and the head at ``model=PATH``
    (a folder of ``groundjudge train-error-types``), no language model."""
    detector: InnerJudge = "cosine"
    """backend=local: the local judge whose score (and per-sentence scores) decide grounding."""

    def __post_init__(self) -> None:
        unset = self.threshold is None
        super().__post_init__()
        typer = None
        if self.backend == "local":
            from groundjudge.judges.error_types_local import LocalTyper, head_folder

            default_model = next(f.default for f in dataclasses.fields(self) if f.name == "model")
            folder = head_folder(self.model, default_model)
            self._check_head_types(folder)
            typer = LocalTyper(folder=folder, detector=build_inner(self.detector, self.service))
            if unset:
                object.__setattr__(self, "threshold", typer.default_threshold)
        object.__setattr__(self, "_typer", typer)
        object.__setattr__(self, "_local", typer.detector if typer else None)   # judge_parts reaches it

    def _check_head_types(self, folder: str) -> None:
        from groundjudge.judges.registry import SpecError
        from groundjudge.local_nli.error_type_head import head_settings

        names = {t.name for t in load_taxonomy(self.taxonomy)}
        extra = sorted(set(head_settings(folder).types) - names)
        if extra:
            raise SpecError(f"error_types: model={folder} types {extra[0]!r}, which the taxonomy "
                            f"({self.taxonomy or 'the default'}) does not name")

    async def classify(self, example: Example, claims: tuple[ClaimVerdict, ...],
                       calls: list[LLMCall]) -> tuple[ClaimVerdict, ...]:
        """Add an error type to every claim that is not supported (unchanged if the reply is unusable)."""
        wrong = [i for i, c in enumerate(claims) if c.label != "supported"]
        if not wrong:
            return claims
        taxonomy = load_taxonomy(self.taxonomy)
        names = tuple(t.name for t in taxonomy)
        reply = label_model(names, len(wrong))
        parsed = await self.ask(
            "error_types_classify",
            {"context": list(example.context), "question": example.question,
             "claims": [claims[i].claim.text for i in wrong], "taxonomy": [t.model_dump() for t in taxonomy]},
            reply, calls)
        if parsed is None:
            return claims
        updated = list(claims)
        for label in parsed.labels:
            index = wrong[label.claim - 1]
            updated[index] = updated[index].model_copy(update={"error_type": label.error_type})
        return tuple(updated)

    def expected_calls(self, example: Example) -> list[tuple[str, dict, int]]:
        """The claims chain's calls plus one classification (assumed for every example: an upper bound); none for
        backend=local."""
        if self.backend == "local":
            return []
        taxonomy = [t.model_dump() for t in load_taxonomy(self.taxonomy)]
        classify = ("error_types_classify", {"context": list(example.context), "question": example.question,
                                             "claims": [example.answer], "taxonomy": taxonomy}, 60)
        return super().expected_calls(example) + [classify]

    async def assess(self, example: Example) -> JudgeResult:
        """Judge with the claims chain, then type the unsupported claims (backend=local: the detector, then the
        head)."""
        if self._typer is not None:
            return await self._typer.assess(example, self.threshold)
        result = await super().assess(example)
        if not result.verdict.claims:
            return result
        calls = list(result.calls)
        try:
            claims = await self.classify(example, result.verdict.claims, calls)
        except ProviderError:
            return result.model_copy(update={"calls": tuple(calls)})
        verdict = result.verdict.model_copy(update={"claims": claims})
        return result.model_copy(update={"verdict": verdict, "calls": tuple(calls)})
