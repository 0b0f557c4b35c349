"""HHEM judge: Vectara's HHEM-2.1-open consistency classifier, claim by claim over the context's windows.

``hhem:trust_remote_code=true`` runs the published checkpoint with its own code; ``hhem:native=true`` loads
the same weights into transformers' T5 without remote code. Each answer sentence (or the whole answer,
``granularity=answer``) is the hypothesis, each of its ``top_k`` context windows the premise, in HHEM's prompt
(``prompts/hhem_pair.j2``); P(consistent) is the max over windows, the answer's score the weakest claim's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from groundjudge.judges import register
from groundjudge.judges.claim_support import ClaimSupportJudge
from groundjudge.judges.nli import claim_windows, claim_windows_many
from groundjudge.local_nli.evidence import Selection
from groundjudge.local_nli.hhem_model import DEFAULT_HHEM, HHEMModel, load_hhem_model
from groundjudge.local_nli.segment import Window
from groundjudge.types import Example


@register
@dataclass(frozen=True)
class HHEMJudge(ClaimSupportJudge):
    """Vectara HHEM-2.1-open: P(consistent) per answer sentence over its best windows; score = the lowest."""

    name: ClassVar[str] = "hhem"
    model: str = DEFAULT_HHEM
    trust_remote_code: bool = False
    """Run the checkpoint's own modelling code (HHEMv2ForSequenceClassification) from the hub."""
    native: bool = False
    """Load the checkpoint's weights into transformers' T5ForTokenClassification instead: no remote code."""
    tokenizer: str = ""
    """Tokenizer (hub name or path); default: the model's own, else its config's foundation (google/flan-t5-base)."""
    top_k: int = 3
    window_tokens: int = 512
    """Premise window size in tokens (capped by what ``max_length`` leaves beside the claim)."""
    max_length: int = 1024
    """Longest prompt in tokens (T5 has no fixed limit; memory and time grow with it)."""

    def engine(self) -> HHEMModel:
        """The loaded model (shared per process)."""
        return load_hhem_model(self.model, self.model_settings(), trust_remote_code=self.trust_remote_code,
                               native=self.native, tokenizer=self.tokenizer, max_length=self.max_length)

    def claim_windows(self, example: Example, claims: list[str], engine: HHEMModel) -> tuple[list[Window], Selection]:
        """Windows fitting beside the longest claim in HHEM's prompt, and each claim's top-k (as ``nli``)."""
        return claim_windows(example.context, claims, engine, self.top_k, self.window_tokens, self.evidence,
                             self.evidence_model)

    def claim_windows_many(self, items: list[tuple[Example, list[str]]],
                           engine: HHEMModel) -> list[tuple[list[Window], Selection]]:
        """:meth:`claim_windows` of many answers, their claims and windows embedded in one call (as ``nli``)."""
        return claim_windows_many([(example.context, claims) for example, claims in items], engine, self.top_k,
                                  self.window_tokens, self.evidence, self.evidence_model)

    def source(self) -> str:
        """The detector's name in claim reasons."""
        return "HHEM"
