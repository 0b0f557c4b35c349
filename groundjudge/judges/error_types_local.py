"""``error_types:backend=local``: a local judge decides grounding, a trained head types the unsupported sentences.

No language model is called. The ``detector`` (a local judge, ``cosine`` by default) scores the answer; the answer
is ungrounded when that score is under the error-types judge's threshold (the detector's own unless given or
fitted on dev). An ungrounded answer's sentences whose score is under it (the weakest one when none is, or when
the detector scores no sentence) each get a type from the head (:mod:`groundjudge.local_nli.error_type_head`),
read from the folder ``model=PATH`` names (else ``$GROUNDJUDGE_ERROR_TYPES_MODEL``).
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundjudge.judges.registry import SpecError
from groundjudge.local_nli.error_type_data import (
    TypedPair,
    context_sentence_texts,
    overlap,
    select_evidence,
)
from groundjudge.local_nli.error_type_head import HeadError, head_settings, load_head
from groundjudge.text import sentence_spans
from groundjudge.types import Claim, ClaimVerdict, Example, JudgeResult

MODEL_ENV = "GROUNDJUDGE_ERROR_TYPES_MODEL"
"""Environment variable naming the default head folder of ``error_types:backend=local``."""


def head_folder(model: str, llm_default: str) -> str:
    """The head folder of a local error-types judge: ``model`` unless it is still the LLM default, else
    ``$GROUNDJUDGE_ERROR_TYPES_MODEL``; SpecError (one line) when none is given or it is not a head folder."""
    given = model if model != llm_default else os.environ.get(MODEL_ENV, "")
    if not given:
        raise SpecError(f"error_types: backend=local needs model=PATH, a folder written by `groundjudge "
                        f"train-error-types` (or ${MODEL_ENV})")
    path = Path(given).expanduser()
    try:
        head_settings(path)
    except HeadError as err:
        raise SpecError(f"error_types: model={given}: {err}") from None
    return str(path)


def lexical_claims(example: Example) -> list[ClaimVerdict]:
    """The answer's sentences as claims, scored by the share of their content words found in the closest
    context sentence (used when the detector scores no sentence)."""
    found = context_sentence_texts(example.context)
    out = []
    for start, end in sentence_spans(example.answer) or [(0, len(example.answer))]:
        text = example.answer[start:end]
        value = max((overlap(text, c) for c in found), default=0.0)
        out.append(ClaimVerdict(claim=Claim(text=text, start=start, end=end), label="supported", score=value))
    return out


def to_type(claims: list[ClaimVerdict], threshold: float, scored: bool) -> list[int]:
    """Indices of the claims to type: those under the threshold (when the detector scored them), else the
    weakest one."""
    low = [i for i, c in enumerate(claims) if scored and c.score is not None and c.score < threshold]
    if low or not claims:
        return low
    return [min(range(len(claims)), key=lambda i: claims[i].score if claims[i].score is not None else 1.0)]


@dataclass(frozen=True)
class LocalTyper:
    """The local path of the error-types judge: a detector judge and a head folder."""

    folder: str
    detector: Any

    @property
    def default_threshold(self) -> float:
        """The detector's threshold (0.5 when it has none)."""
        value = getattr(self.detector, "threshold", None)
        return 0.5 if value is None else float(value)

    def types(self, example: Example, texts: list[str]) -> list[str]:
        """The head's type for each unsupported sentence of the example."""
        head = load_head(self.folder)
        k = head.settings.evidence_k
        return head.predict([TypedPair(claim=t, evidence=select_evidence(t, example.context, k)) for t in texts])

    async def assess(self, example: Example, threshold: float) -> JudgeResult:
        """Decide grounding with the detector and the threshold; type the unsupported sentences if ungrounded."""
        result = await self.detector.judge(example)
        verdict = result.verdict
        if verdict.label == "abstain" or verdict.score is None:
            return result
        grounded = verdict.score >= threshold
        scored = bool(verdict.claims) and all(c.score is not None for c in verdict.claims)
        claims = list(verdict.claims) if scored else lexical_claims(example)
        claims = [c.model_copy(update={"label": "supported" if grounded or c.score is None or c.score >= threshold
                                       else "unverifiable", "error_type": None}) for c in claims]
        if not grounded:
            chosen = to_type(claims, threshold, scored)
            names = await asyncio.to_thread(self.types, example, [claims[i].claim.text for i in chosen])
            for i, name in zip(chosen, names):
                claims[i] = claims[i].model_copy(update={"label": "unverifiable", "error_type": name})
        typed = verdict.model_copy(update={
            "label": "grounded" if grounded else "ungrounded", "threshold": threshold, "claims": tuple(claims),
            "path": f"local:error_types({verdict.path})"})
        return result.model_copy(update={"verdict": typed})
