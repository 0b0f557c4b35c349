"""MiniCheck judge: the MiniCheck recipe (chunks of ~400 words, max over chunks) for every answer sentence.

The documents are cut into chunks of whole sentences of at most ``chunk_words`` words (re-cut where a chunk
has more tokens than the model takes beside the claim); each claim is scored against every chunk
(``top_k=0``, the recipe) or its ``top_k`` chunks by the evidence ranker; its support is the max over chunks
and the answer's score the weakest claim's. Backend (``roberta`` / ``deberta`` / ``flan-t5``) from the
checkpoint's config, or ``backend=``; input format in ``prompts/minicheck_pair.j2``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from groundjudge.judges import register
from groundjudge.judges.claim_support import ClaimSupportJudge
from groundjudge.local_nli.evidence import Selection, select_evidence
from groundjudge.local_nli.minicheck_model import DEFAULT_MINICHECK, MiniCheckModel, chunk_context, load_minicheck_model
from groundjudge.local_nli.segment import Window
from groundjudge.types import Example


@register
@dataclass(frozen=True)
class MiniCheckJudge(ClaimSupportJudge):
    """MiniCheck (RoBERTa / DeBERTa / Flan-T5): P(supported) per answer sentence, max over ~400-word chunks."""

    name: ClassVar[str] = "minicheck"
    model: str = DEFAULT_MINICHECK
    backend: Literal["auto", "roberta", "deberta", "flan-t5"] = "auto"
    """``auto``: from the config's model_type (t5 -> flan-t5, roberta, deberta)."""
    chunk_words: int = 400
    """Chunk size in whitespace words (MiniCheck: 400 tokens for RoBERTa / DeBERTa, 500 words for Flan-T5)."""
    top_k: int = 0
    """0: every chunk (the recipe); k > 0: each claim's k most similar chunks (``evidence`` ranker)."""
    max_length: int | None = None
    """Longest input in tokens (None: 512 for RoBERTa, 2048 for DeBERTa and Flan-T5, as the recipe)."""

    def engine(self) -> MiniCheckModel:
        """The loaded model (shared per process)."""
        return load_minicheck_model(self.model, self.model_settings(), backend=self.backend,
                                    max_length=self.max_length)

    def claim_windows(self, example: Example, claims: list[str],
                      engine: MiniCheckModel) -> tuple[list[Window], Selection]:
        """The context's chunks and, per claim, all of them (or its top-k)."""
        room = engine.max_length - engine.special_tokens - max(engine.token_length(c) for c in claims)
        chunks = chunk_context(example.context, self.chunk_words, room, engine.token_length)
        k = self.top_k if self.top_k > 0 else len(chunks)
        return chunks, select_evidence(claims, [w.text for w in chunks], k, self.evidence, self.evidence_model)

    def source(self) -> str:
        """The detector's name in claim reasons."""
        return "MiniCheck"
