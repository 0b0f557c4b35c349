"""Fine-tune a cross-encoder grounding judge on your labelled data: ``groundjudge train``.

Steps: load the data (any supported format) → split by group (document / question) into train and dev
→ build (evidence, claim) pairs with a recipe (:mod:`groundjudge.local_nli.pairs`), optionally with
synthetic hard negatives and NLI rows → fine-tune a sentence-transformers ``CrossEncoder`` with early
stopping on dev → write a Hugging Face model directory with ``groundjudge_card.json`` and ``README.md``.

The head: without NLI rows it is binary, ``{0: "unsupported", 1: "supported"}``. With ``--nli-mix``
it is 3-way, ``{0: "entailment", 1: "neutral", 2: "contradiction"}`` (or the base model's own order
when it already has these three labels): supported pairs train *entailment*, synthetic
number/negation/entity/antonym edits *contradiction*, and ungrounded answer sentences — which may
contradict the source or merely go beyond it — a soft target of half *neutral*, half *contradiction*.

The loop is a plain PyTorch loop over the CrossEncoder's transformers model (the library's
``CrossEncoderTrainer`` needs ``datasets`` and ``accelerate``, which groundjudge does not install):
AdamW with linear warm-up and decay, class-weighted cross-entropy, length-bucketed batches, dev
evaluation every ``eval_steps`` and at each epoch end, checkpoints every ``save_steps`` into
``OUT/checkpoints`` so that ``resume`` continues from the last one with the same data order.

The parts: :mod:`~groundjudge.local_nli.train_data` (data and pairs), :mod:`~groundjudge.local_nli.train_loop`
(the loop) and :mod:`~groundjudge.local_nli.train_card` (the card); :func:`train` runs them in order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from groundjudge.local_nli.train_card import CARD_FILE, finalize
from groundjudge.local_nli.train_data import Report, TrainConfig, TrainError, cap_pairs, prepare, split_examples
from groundjudge.local_nli.train_loop import BINARY_LABELS, THREE_WAY_LABELS, Session, choose_labels, run_loop, target


def check_out_dir(cfg: TrainConfig) -> None:
    """A new run needs an empty (or absent) directory; a resumed one needs a started one."""
    out = Path(cfg.out)
    started = out.is_dir() and any(out.iterdir())
    if started and not cfg.resume:
        raise TrainError(f"{out} is not empty: pass --resume to continue that run, or another --out")
    if cfg.resume and not (out / "pairs" / "meta.json").exists():
        raise TrainError(f"{out} has no run to resume (no pairs/meta.json); start it without --resume")


def train(cfg: TrainConfig, report: Report = print) -> dict[str, Any] | None:
    """Run (or resume) training; the card when finished, None when stopped by ``stop_after``."""
    if cfg.recipe not in ("pairs", "diff"):
        raise TrainError(f"unknown recipe {cfg.recipe!r}; known: pairs, diff")
    out = Path(cfg.out)
    if cfg.resume and (out / CARD_FILE).exists():
        report(f"{out} is already trained")
        return json.loads((out / CARD_FILE).read_text(encoding="utf-8"))
    check_out_dir(cfg)
    out.mkdir(parents=True, exist_ok=True)
    prepared = prepare(cfg, report)
    counts = prepared.meta["pairs"]
    report(f"pairs: train {counts['train']['labels']}, dev {counts['dev']['labels']}")
    session = Session(cfg, prepared, report)
    if run_loop(session) == "stopped":
        report(f"stopped at step {session.progress.step} of {session.total_steps}; continue with --resume")
        return None
    return finalize(session, prepared)


__all__ = [
    "BINARY_LABELS", "CARD_FILE", "THREE_WAY_LABELS", "TrainConfig", "TrainError", "cap_pairs", "check_out_dir",
    "choose_labels", "split_examples", "target", "train",
]
