"""Training the local error-type head (:mod:`groundjudge.local_nli.error_type_head`) on typed variants.

Rows are read by any data format (``groundjudge perturb``'s native rows carry the edit), kept by ``meta.source``
and ``split`` when asked, and made into pairs by :func:`groundjudge.local_nli.error_type_data.typed_pairs`. The
skewed types are met with a class-weighted loss (weight ∝ 1 / count, mean 1) and an optional cap per type. The
loop is plain PyTorch (AdamW, linear decay, seeded shuffles), stops at ``time_limit_min``, and the card records
the data, the counts per type, the base, the date, the command and the training time.
"""

from __future__ import annotations

import hashlib
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import date

from pydantic import BaseModel, Field

from groundjudge.local_nli.error_type_data import EVIDENCE_K, TypedPair, typed_pairs
from groundjudge.local_nli.error_type_head import ErrorTypeHead, HeadSettings, new_head
from groundjudge.local_nli.model import DEFAULT_EMBEDDER, resolve_model, torch_threads
from groundjudge.paths import portable_command, portable_path


class ErrorTypeTrainConfig(BaseModel):
    """Settings of one training of the head (``groundjudge train-error-types``)."""

    data: tuple[str, ...] = Field(min_length=1, description="Files of typed ungrounded variants.")
    out: str = Field(description="The model folder to write.")
    base: str = DEFAULT_EMBEDDER
    source: str | None = Field(default=None, description="Keep only rows whose meta.source is this.")
    split: str | None = Field(default=None, description="Keep only rows of this split.")
    val_split: str | None = Field(default=None, description="Rows of this split (same source filter) are the "
                                                           "validation set reported in the card, not trained on.")
    epochs: float = Field(default=3.0, gt=0)
    batch_size: int = Field(default=16, ge=1)
    lr: float = Field(default=5e-5, gt=0)
    max_length: int = Field(default=160, ge=16)
    evidence_k: int = Field(default=EVIDENCE_K, ge=1)
    max_per_type: int = Field(default=0, ge=0, description="Cap on training pairs per type (0: no cap).")
    seed: int = 0
    time_limit_min: float = Field(default=20.0, gt=0)
    types: tuple[str, ...] = Field(min_length=2)


class TrainDataError(ValueError):
    """Training data that yields no usable pair, or too few types."""


def keep(row, source: str | None, split: str | None) -> bool:
    """Whether a row passes the source and split filters."""
    return (source is None or (row.meta or {}).get("source") == source) and (split is None or row.split == split)


def capped(pairs: list[TypedPair], cap: int, seed: int) -> list[TypedPair]:
    """At most ``cap`` pairs per type (a seeded draw; 0: all), in a seeded order."""
    rng = random.Random(seed)
    by_type: dict[str, list[TypedPair]] = {}
    for pair in pairs:
        by_type.setdefault(pair.label, []).append(pair)
    out = []
    for label in sorted(by_type):
        group = by_type[label]
        out += rng.sample(group, cap) if cap and len(group) > cap else group
    rng.shuffle(out)
    return out


def class_weights(pairs: Sequence[TypedPair], types: Sequence[str]) -> list[float]:
    """Loss weight per type: inversely proportional to its count, mean 1 over the types present (0 if absent)."""
    counts = Counter(p.label for p in pairs)
    raw = [1.0 / counts[t] if counts[t] else 0.0 for t in types]
    present = sum(1 for r in raw if r)
    scale = present / sum(raw) if present else 1.0
    return [r * scale for r in raw]


def _pairs(cfg: ErrorTypeTrainConfig, split: str | None) -> list[TypedPair]:
    from groundjudge.formats.load import load_examples

    rows = (r for r in load_examples(cfg.data).examples if keep(r, cfg.source, split))
    return typed_pairs(rows, cfg.types, cfg.evidence_k)


def _epoch_batches(pairs: list[TypedPair], batch_size: int, rng: random.Random) -> list[list[TypedPair]]:
    order = list(pairs)
    rng.shuffle(order)
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]


def fit(head: ErrorTypeHead, pairs: list[TypedPair], cfg: ErrorTypeTrainConfig,
        report: Callable[[str], None]) -> dict:
    """Train the head in place; returns steps, epochs done, seconds and whether the time limit stopped it."""
    import torch

    from groundjudge.local_nli.error_type_data import head_input

    torch.manual_seed(cfg.seed)
    rng = random.Random(cfg.seed)
    names = list(cfg.types)
    weights = torch.tensor(class_weights(pairs, names))
    loss_fn = torch.nn.CrossEntropyLoss(weight=weights)
    steps_per_epoch = -(-len(pairs) // cfg.batch_size)
    total = max(1, round(steps_per_epoch * cfg.epochs))
    optim = torch.optim.AdamW(head.model.parameters(), lr=cfg.lr, weight_decay=0.01)
    warmup = max(1, total // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        optim, lambda s: min((s + 1) / warmup, max(0.0, (total - s) / max(1, total - warmup))))
    head.model.train()
    start, step, stopped, batches = time.monotonic(), 0, False, []
    while step < total:
        if not batches:
            batches = _epoch_batches(pairs, cfg.batch_size, rng)
        batch = batches.pop(0)
        texts = [head_input(p.claim, p.evidence) for p in batch]
        enc = head.tokenizer([a for a, _ in texts], [b for _, b in texts], truncation=True, padding=True,
                             max_length=cfg.max_length, return_tensors="pt")
        target = torch.tensor([names.index(p.label) for p in batch])
        loss = loss_fn(head.model(**enc).logits, target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(head.model.parameters(), 1.0)
        optim.step()
        sched.step()
        optim.zero_grad()
        step += 1
        if step % 20 == 0 or step == total:
            report(f"step {step}/{total}  loss {loss.item():.3f}  {time.monotonic() - start:.0f} s")
        if time.monotonic() - start > cfg.time_limit_min * 60:
            stopped = True
            report(f"time limit {cfg.time_limit_min} min reached at step {step}/{total}")
            break
    head.model.eval()
    return {"steps": step, "planned_steps": total, "epochs_done": round(step / steps_per_epoch, 3),
            "train_seconds": round(time.monotonic() - start, 1), "stopped_by_time_limit": stopped}


def typing_scores(gold: Sequence[str], predicted: Sequence[str], types: Sequence[str]) -> dict:
    """Accuracy, macro-F1 over the types present in gold or predicted, per-type P/R/F1 and the confusion matrix.

    ``macro_f1_gold_types`` is the mean F1 over the types the gold labels hold. On a set that lacks a type, a model
    that predicts it even once has an F1 of 0 counted in ``macro_f1`` and a model that cannot predict it has no such
    term, so compare models on such a set by ``macro_f1_gold_types``."""
    present = [t for t in types if t in set(gold) | set(predicted)]
    per_type = {}
    for t in present:
        tp = sum(1 for g, p in zip(gold, predicted) if g == t and p == t)
        n_pred, n_gold = sum(1 for p in predicted if p == t), sum(1 for g in gold if g == t)
        prec = tp / n_pred if n_pred else 0.0
        rec = tp / n_gold if n_gold else 0.0
        per_type[t] = {"precision": prec, "recall": rec, "f1": 2 * prec * rec / (prec + rec) if prec + rec else 0.0,
                       "n": n_gold}
    confusion = {g: {p: sum(1 for a, b in zip(gold, predicted) if a == g and b == p) for p in types} for g in types
                 if g in set(gold)}
    macro = sum(v["f1"] for v in per_type.values()) / len(per_type) if per_type else 0.0
    in_gold = [v["f1"] for v in per_type.values() if v["n"]]
    macro_gold = sum(in_gold) / len(in_gold) if in_gold else 0.0
    acc = sum(1 for g, p in zip(gold, predicted) if g == p) / len(gold) if gold else 0.0
    return {"n": len(gold), "accuracy": acc, "macro_f1": macro, "macro_f1_gold_types": macro_gold,
            "per_type": per_type, "confusion": confusion}


def _data_hash(pairs: Sequence[TypedPair]) -> str:
    digest = hashlib.sha256()
    for p in pairs:
        digest.update(p.model_dump_json().encode())
    return digest.hexdigest()[:16]


def train_error_types(cfg: ErrorTypeTrainConfig, report: Callable[[str], None] = print) -> dict:
    """Train a head on the configured data and write its folder with the card; returns the card."""
    import torch

    torch.set_num_threads(torch_threads())
    found = _pairs(cfg, cfg.split)
    pairs = capped(found, cfg.max_per_type, cfg.seed)
    counts = Counter(p.label for p in pairs)
    if len(counts) < 2:
        raise TrainDataError(f"--data {', '.join(cfg.data)}: {len(pairs)} typed ungrounded rows of "
                             f"{len(counts)} type(s) after the filters (source={cfg.source}, split={cfg.split}); "
                             "need two types at least")
    val = _pairs(cfg, cfg.val_split) if cfg.val_split else []
    report(f"{len(pairs)} training pairs ({dict(sorted(counts.items()))}); {len(val)} validation pairs")
    base = resolve_model(cfg.base)
    settings = HeadSettings(types=cfg.types, evidence_k=cfg.evidence_k, max_length=cfg.max_length)
    head = new_head(base, settings)
    run = fit(head, pairs, cfg, report)
    card = {
        "kind": "error_type_head", "date": date.today().isoformat(),
        "command": "groundjudge " + portable_command(sys.argv[1:]) if sys.argv[1:] else None,
        "base": cfg.base, "types": list(cfg.types), "input_format": settings.input_format,
        "data": {"files": [portable_path(f) for f in cfg.data], "source": cfg.source, "split": cfg.split,
                 "pairs_found": len(found), "pairs_used": len(pairs), "max_per_type": cfg.max_per_type,
                 "counts_per_type": {t: counts.get(t, 0) for t in cfg.types}, "pairs_hash": _data_hash(pairs),
                 "groups": len({p.group for p in pairs})},
        "training": {**run, "epochs": cfg.epochs, "batch_size": cfg.batch_size, "lr": cfg.lr,
                     "max_length": cfg.max_length, "evidence_k": cfg.evidence_k, "seed": cfg.seed,
                     "class_weights": dict(zip(cfg.types, class_weights(pairs, cfg.types))),
                     "loss": "class-weighted cross-entropy", "torch_threads": torch_threads()},
    }
    if val:
        predicted = head.predict(val)
        card["validation"] = {"split": cfg.val_split, **typing_scores([p.label for p in val], predicted, cfg.types)}
        scores = card["validation"]
        report(f"validation ({cfg.val_split}, n={len(val)}): macro-F1 {scores['macro_f1']:.3f} "
               f"({scores['macro_f1_gold_types']:.3f} over the types it holds)")
    head.save(cfg.out, card)
    return card
