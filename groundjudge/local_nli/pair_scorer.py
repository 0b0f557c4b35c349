"""A model that reads a (premise, claim) pair rendered through an input template and gives P(supported).

The base of the HHEM and MiniCheck scorers: each pair is rendered as the one text the model was trained on,
tokenized, and, when too long, its premise (never the claim, unless the claim alone does not fit) cut at a
token boundary and counted in :class:`ScoreStats`. Pairs are length-sorted into batches; out of memory, a
batch is halved and retried. Subclasses say how a pair is written (``text``) and how the model's output
becomes P(supported) (``support``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from groundjudge.local_nli.batches import BatchPlan, ScoreStats, accepted_inputs, run_sorted, to_row
from groundjudge.local_nli.devices import Placement
from groundjudge.local_nli.inputs import cut_to_tokens, token_count
from groundjudge.local_nli.model_cache import Loaded


@dataclass
class PairScorer:
    """Scores rendered pairs with a shared loaded model; subclasses define ``text`` and ``support``."""

    loaded: Loaded
    max_length: int
    batch_size: int = 8
    stats: ScoreStats = field(default_factory=ScoreStats)
    """Counts over every call of this instance."""
    placement: Placement | None = None
    """Where and in what precision it runs, as chosen (``dtype=auto``: with how the check went)."""

    def __post_init__(self) -> None:
        self.tokenizer, self.model, self.device = self.loaded.tokenizer, self.loaded.model, self.loaded.device
        self.inputs = accepted_inputs(self.model)
        self.special_tokens = len(self.tokenizer(self.text("", ""), verbose=False)["input_ids"])
        """Tokens the input adds around an empty pair (template words and special tokens)."""

    def text(self, premise: str, claim: str) -> str:
        """The model's input text for one pair."""
        raise NotImplementedError

    def support(self, batch: dict[str, Any]) -> np.ndarray:
        """P(supported) of each row of a padded batch on the device."""
        raise NotImplementedError

    def token_length(self, text: str) -> int:
        """Tokens of a text without special tokens."""
        return token_count(self.tokenizer, text)

    def encode(self, premises: Sequence[str], claims: Sequence[str], stats: ScoreStats) -> list[dict[str, list]]:
        """Token ids per pair; a pair too long has its premise cut to fit (counted), its claim too if it must."""
        rows = []
        texts = [self.text(p, c) for p, c in zip(premises, claims)]
        batch = self.tokenizer(texts, verbose=False, return_attention_mask=True) if texts else {}
        for i, (premise, claim) in enumerate(zip(premises, claims)):
            encoded = {k: batch[k][i] for k in batch}
            if len(encoded["input_ids"]) > self.max_length:
                stats.pairs_truncated += 1
                room = self.max_length - self.special_tokens - self.token_length(claim)
                premise, _ = cut_to_tokens(self.tokenizer, premise, max(room, 0))
                if room <= 0:
                    stats.claims_truncated += 1
                    claim, _ = cut_to_tokens(self.tokenizer, claim, self.max_length - self.special_tokens)
                encoded = self.tokenizer(self.text(premise, claim), verbose=False, return_attention_mask=True,
                                         truncation=True, max_length=self.max_length)
            rows.append(to_row(encoded, self.inputs))
        return rows

    def score_pairs(self, premises: Sequence[str], claims: Sequence[str], *,
                    stats: ScoreStats | None = None) -> np.ndarray:
        """P(supported) per (premise, claim) pair, in input order."""
        if len(premises) != len(claims):
            raise ValueError(f"{len(premises)} premises but {len(claims)} claims")
        call = ScoreStats()
        result = np.zeros(len(premises), dtype=np.float32)
        if len(premises):
            rows = self.encode(premises, claims, call)
            with self.loaded.lock:
                plan = BatchPlan.for_tokenizer(self.tokenizer, self.batch_size, self.device)
                scored, self.batch_size = run_sorted(rows, self.support, plan, call)
            result = np.asarray(scored, dtype=np.float32)
            call.pairs_scored = len(premises)
        self.stats.add(call)
        if stats is not None:
            stats.add(call)
        return result


def support_column(id2label: dict[int, str], labels: Sequence[str], default: int) -> int:
    """The index of the 'supported' label: from ``labels`` (a user's override), else the config's names when
    they say it, else ``default`` (the checkpoint family's convention)."""
    from groundjudge.local_nli.nli_model import ENTAILMENT, LabelMapError, map_labels

    try:
        mapping = map_labels(id2label, labels or None)
    except LabelMapError:
        if labels:
            raise
        return default
    return next(i for i, column in sorted(mapping.items()) if column == ENTAILMENT)
