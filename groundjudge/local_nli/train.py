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
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import shutil
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from groundjudge.formats import RowError
from groundjudge.formats.load import (
    DataError,
    assign_missing_splits,
    dataset_hash,
    load_examples,
)
from groundjudge.local_nli.model import (
    DEFAULT_EMBEDDER,
    best_device,
    resolve_model,
    torch_threads,
)
from groundjudge.local_nli.pairs import (
    NLI_LABELS,
    SHORT_ANSWER_WORDS,
    Pair,
    build_pairs,
    default_k,
    read_nli_tsv,
    source_group,
    synthetic_pairs,
)
from groundjudge.metrics import classification_metrics, fit_threshold
from groundjudge.types import Example

BINARY_LABELS = {0: "unsupported", 1: "supported"}
"""id2label of the head trained without NLI rows."""

THREE_WAY_LABELS = {i: name for i, name in enumerate(NLI_LABELS)}
"""id2label of the head trained with NLI rows (unless the base model has its own order of these labels)."""

CARD_FILE = "groundjudge_card.json"
"""The card the crossencoder judge reads: base, labels, max_length, recipe, tau, ..."""

Report = Callable[[str], None]


class TrainError(ValueError):
    """A training request that cannot be carried out as given (output dir, resume mismatch)."""


@dataclass(frozen=True)
class TrainConfig:
    """Everything ``groundjudge train`` was asked to do."""

    data: tuple[str, ...]
    out: str
    base: str = DEFAULT_EMBEDDER
    fmt: str | None = None
    recipe: str = "pairs"
    epochs: int = 2
    max_length: int = 256
    batch_size: int = 16
    lr: float = 5e-5
    nli_mix: tuple[str, ...] = ()
    synthetic: int = 0
    dev_fraction: float = 0.2
    max_train: int = 4000
    max_dev: int = 1000
    seed: int = 0
    evidence_k: int | None = None
    evidence: str = "embedding"
    """How the context sentences of a premise are ranked: 'embedding' (the packaged MiniLM) or 'tfidf'."""
    run_dev_fraction: float | None = None
    """Train only on what ``groundjudge run --dev-fraction F`` calibrates on (its dev part: the data's own
    train/dev splits, else groups with hash < F); the run's evaluation part is never seen."""
    eval_steps: int = 0
    save_steps: int = 100
    patience: int = 2
    skip_invalid: bool = False
    resume: bool = False
    stop_after: int = 0
    time_limit_min: float = 0.0
    quiet: bool = False

    def fingerprint(self) -> dict[str, Any]:
        """The settings that decide the result: a resumed run must use the same ones."""
        skip = {"out", "resume", "stop_after", "time_limit_min", "quiet", "save_steps"}
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items() if k not in skip}


# ---------------------------------------------------------------- data and split


def load_training_data(files: Sequence[str], fmt: str | None, skip_invalid: bool = False
                       ) -> tuple[list[Example], list[dict[str, Any]]]:
    """Examples of every file, and per file its format, example count, skipped rows and dataset hash."""
    examples: list[Example] = []
    info: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    errors: list[RowError] = []
    for path in files:
        loaded = load_examples([path], fmt, skip_invalid)
        info.append({"file": str(path), "format": loaded.formats[0], "examples": len(loaded.examples),
                     "skipped_rows": len(loaded.errors), "hash": loaded.hash})
        for number, example in enumerate(loaded.examples, start=1):
            if example.id in seen:
                errors.append(RowError(file=str(path), line=number, field="id",
                                       message=f"duplicate id {example.id!r} (first in {seen[example.id]})"))
            seen.setdefault(example.id, str(path))
            examples.append(example)
    if errors:
        raise DataError(errors)
    return examples, info


def group_bucket(group: str, seed: int) -> float:
    """A deterministic number in [0, 1] for a group and seed."""
    return int(hashlib.sha256(f"{seed}\x1f{group}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF


def _group_splits(examples: Sequence[Example], dev_fraction: float, seed: int) -> dict[str, str]:
    """One split per group: its examples' own (test > dev > train wins), else dev by group hash."""
    rank = {"train": 0, "dev": 1, "test": 2}
    own: dict[str, str] = {}
    for example in examples:
        group = source_group(example)
        if example.split and rank[example.split] >= rank.get(own.get(group, "train"), 0):
            own[group] = example.split
    groups = {source_group(example) for example in examples}
    return {g: own.get(g) or ("dev" if group_bucket(g, seed) < dev_fraction else "train") for g in groups}


def split_examples(examples: Sequence[Example], dev_fraction: float, seed: int,
                   run_dev_fraction: float | None = None) -> tuple[list[Example], list[Example], dict[str, Any]]:
    """(train, dev, summary): labelled examples split by group, so no document is in both parts.

    The group is :func:`~groundjudge.local_nli.pairs.source_group`: ``meta.group``, else the context.

    Groups whose examples carry a split keep it (a group with any test example is held out, never
    trained on); the others go to dev with probability ``dev_fraction`` by a seeded hash of the group.
    With ``run_dev_fraction`` F, only the examples that ``groundjudge run --dev-fraction F`` puts in its
    dev part are used at all (the same group hash as the runner's): the run's evaluation part stays unseen.
    """
    labelled = [ex for ex in examples if ex.label is not None]
    unseen: list[Example] = []
    if run_dev_fraction is not None:
        seen_by_run = assign_missing_splits(labelled, run_dev_fraction)
        unseen = [ex for ex, as_run in zip(labelled, seen_by_run) if as_run.split == "test"]
        labelled = [ex for ex, as_run in zip(labelled, seen_by_run) if as_run.split != "test"]
    if not labelled:
        raise DataError([RowError(file="<data>", line=0, field="label", message="no labelled examples to train on")])
    splits = _group_splits(labelled, dev_fraction, seed)
    parts: dict[str, list[Example]] = {"train": [], "dev": [], "test": []}
    for example in labelled:
        parts[splits[source_group(example)]].append(example)
    own = any(ex.split for ex in labelled)
    summary = {"seed": seed, "dev_fraction": dev_fraction, "unlabelled_skipped": len(examples) - len(labelled),
               "source": "the examples' own splits, group hash for the rest" if own else "group hash",
               "run_dev_fraction": run_dev_fraction,
               "held_out_test": {"examples": len(parts["test"]) + len(unseen),
                                 "groups": len({source_group(e) for e in parts["test"] + unseen})}}
    for name in ("train", "dev"):
        summary[name] = {"examples": len(parts[name]), "groups": len({source_group(e) for e in parts[name]}),
                         "labels": dict(Counter(e.label for e in parts[name]))}
    return parts["train"], parts["dev"], summary


# ---------------------------------------------------------------- pairs


def cap_pairs(pairs: Sequence[Pair], limit: int, seed: int) -> list[Pair]:
    """At most ``limit`` pairs, sampled per (source family, label) stratum in proportion to its size."""
    if limit <= 0 or len(pairs) <= limit:
        return list(pairs)
    rng = random.Random(seed)
    strata: dict[tuple[str, str], list[Pair]] = {}
    for pair in pairs:
        strata.setdefault((pair.source.split(":")[0], pair.label), []).append(pair)
    kept: list[Pair] = []
    for key in sorted(strata):
        members = strata[key]
        kept.extend(rng.sample(members, max(1, round(limit * len(members) / len(pairs)))))
    rng.shuffle(kept)
    return kept[:limit]


def make_pairs(cfg: TrainConfig, train: Sequence[Example], dev: Sequence[Example]
               ) -> tuple[list[Pair], list[Pair], dict[str, Any]]:
    """(train pairs, dev pairs, counts): recipe pairs, synthetic edits and NLI rows, capped."""
    train_pairs = build_pairs(train, cfg.recipe, cfg.evidence_k, cfg.evidence)
    built = {"recipe": len(train_pairs)}
    if cfg.synthetic > 0:
        synthetic = synthetic_pairs(train, cfg.synthetic, cfg.seed, cfg.evidence_k or 2, cfg.evidence)
        built["synthetic"] = len(synthetic)
        train_pairs += synthetic
    for path in cfg.nli_mix:
        rows = read_nli_tsv(path)
        built[f"nli:{Path(path).name}"] = len(rows)
        train_pairs += rows
    dev_pairs = cap_pairs(build_pairs(dev, cfg.recipe, cfg.evidence_k, cfg.evidence), cfg.max_dev, cfg.seed + 1)
    if not train_pairs:
        raise DataError([RowError(file=", ".join(cfg.data), line=0, field="label",
                                  message=f"recipe {cfg.recipe!r} made no training pairs from this data "
                                          "(diff needs grounded and ungrounded answers in the same group)")])
    capped = cap_pairs(train_pairs, cfg.max_train, cfg.seed)
    return capped, dev_pairs, {"built": built, "train": _pair_counts(capped), "dev": _pair_counts(dev_pairs)}


def _pair_counts(pairs: Sequence[Pair]) -> dict[str, Any]:
    return {"n": len(pairs), "labels": dict(Counter(p.label for p in pairs)),
            "sources": dict(Counter(p.source for p in pairs))}


def _write_pairs(path: Path, pairs: Sequence[Pair]) -> None:
    path.write_text("".join(p.to_json() + "\n" for p in pairs), encoding="utf-8")


def _read_pairs(path: Path) -> list[Pair]:
    return [Pair.from_json(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@dataclass
class Prepared:
    """The data of a training run, saved in OUT/pairs so that a resumed run uses the very same pairs."""

    train: list[Pair]
    dev: list[Pair]
    meta: dict[str, Any]


def prepare(cfg: TrainConfig, report: Report) -> Prepared:
    """Load, split and pair the data (or read back the pairs of the run being resumed)."""
    folder = Path(cfg.out) / "pairs"
    if cfg.resume and (folder / "meta.json").exists():
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        _check_same_run(meta["config"], cfg)
        return Prepared(_read_pairs(folder / "train.jsonl"), _read_pairs(folder / "dev.jsonl"), meta)
    examples, data_info = load_training_data(cfg.data, cfg.fmt, cfg.skip_invalid)
    train, dev, split = split_examples(examples, cfg.dev_fraction, cfg.seed, cfg.run_dev_fraction)
    if not train:
        raise DataError([RowError(file=", ".join(cfg.data), line=0, field="split", message="no training examples")])
    report(f"split by group: train {split['train']['examples']} examples / {split['train']['groups']} groups, "
           f"dev {split['dev']['examples']} / {split['dev']['groups']}, held-out test "
           f"{split['held_out_test']['examples']} ({split['source']})")
    train_pairs, dev_pairs, counts = make_pairs(cfg, train, dev)
    split["train"]["pairs"], split["dev"]["pairs"] = len(train_pairs), len(dev_pairs)
    split["train_examples_hash"] = dataset_hash(train)
    meta = {"config": cfg.fingerprint(), "data": data_info, "split": split, "pairs": counts}
    folder.mkdir(parents=True, exist_ok=True)
    _write_pairs(folder / "train.jsonl", train_pairs)
    _write_pairs(folder / "dev.jsonl", dev_pairs)
    groups = {"train": sorted({source_group(e) for e in train}), "dev": sorted({source_group(e) for e in dev})}
    (folder / "groups.json").write_text(json.dumps(groups, indent=1) + "\n", encoding="utf-8")
    (folder / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return Prepared(train_pairs, dev_pairs, meta)


def _check_same_run(saved: dict[str, Any], cfg: TrainConfig) -> None:
    now = cfg.fingerprint()
    differ = sorted(k for k in now if saved.get(k) != now[k])
    if differ:
        raise TrainError(f"{cfg.out} was started with other settings ({', '.join(differ)}); resume with the same "
                         "options or use another --out")


# ---------------------------------------------------------------- labels and targets


def is_supported(label: str) -> bool:
    """Whether a pair label counts as supported (grounded)."""
    return label in ("supported", "entailment")


def choose_labels(nli: bool, base_id2label: dict[int, str]) -> dict[int, str]:
    """The head's id2label: binary, or 3-way in the base model's own order when it has the NLI labels."""
    if not nli:
        return dict(BINARY_LABELS)
    names = {i: str(n).lower() for i, n in base_id2label.items()}
    return names if sorted(names.values()) == sorted(NLI_LABELS) else dict(THREE_WAY_LABELS)


def target(label: str, id2label: dict[int, str]) -> list[float]:
    """The training target of a pair label as a distribution over the head's classes."""
    index = {name: i for i, name in id2label.items()}
    out = [0.0] * len(id2label)
    if len(id2label) == 2:
        out[index["supported" if is_supported(label) else "unsupported"]] = 1.0
    elif label in ("supported", "entailment"):
        out[index["entailment"]] = 1.0
    elif label in ("neutral", "contradiction"):
        out[index[label]] = 1.0
    else:  # unsupported: unverifiable or contradicted, we do not know which
        out[index["neutral"]] = out[index["contradiction"]] = 0.5
    return out


def supported_index(id2label: dict[int, str]) -> int:
    """Index of the class whose probability is the support score."""
    return next(i for i, name in id2label.items() if name in ("supported", "entailment"))


def class_weights(targets: np.ndarray) -> np.ndarray:
    """Inverse-frequency class weights (mean 1 over present classes, clipped to [0.25, 4])."""
    counts = targets.sum(axis=0)
    present = counts > 0
    weights = np.ones(len(counts))
    weights[present] = counts[present].sum() / (present.sum() * counts[present])
    return np.clip(weights, 0.25, 4.0)


# ---------------------------------------------------------------- the loop


@dataclass
class Progress:
    """Where a run is: saved with each checkpoint."""

    step: int = 0
    epoch: int = 0
    batch: int = 0
    best: dict[str, Any] | None = None
    bad_evals: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)
    elapsed_s: float = 0.0
    resumed_at: list[int] = field(default_factory=list)
    stopped_early: bool = False
    stopped_by: str | None = None


def epoch_batches(lengths: Sequence[int], batch_size: int, seed: int, epoch: int) -> list[list[int]]:
    """Shuffled batches of similar length (less padding), the same for the same seed and epoch."""
    rng = random.Random(seed * 1_000_003 + epoch)
    order = list(range(len(lengths)))
    rng.shuffle(order)
    batches: list[list[int]] = []
    chunk = batch_size * 50
    for start in range(0, len(order), chunk):
        part = sorted(order[start:start + chunk], key=lambda i: lengths[i])
        batches.extend(part[i:i + batch_size] for i in range(0, len(part), batch_size))
    rng.shuffle(batches)
    return batches


class Session:
    """A model with its tokenizer, optimizer and schedule, and the pairs it trains and is judged on."""

    def __init__(self, cfg: TrainConfig, prepared: Prepared, report: Report):
        """Load the base (or the last checkpoint when resuming) and set up the optimizer."""
        import torch
        from transformers.utils import logging as hf_logging

        torch.set_num_threads(torch_threads())
        hf_logging.disable_progress_bar()  # our own bar is the one to watch
        hf_logging.set_verbosity_error()
        self.cfg, self.report = cfg, report
        self.root = Path(cfg.out) / "checkpoints"
        self.train_pairs, self.dev_pairs = prepared.train, prepared.dev
        self.device = best_device()
        last = latest_checkpoint(self.root) if cfg.resume else None
        self.base_path = resolve_model(cfg.base)
        self.model = self._load(last or self.base_path, fresh=last is None)
        self.id2label = {int(k): v for k, v in self.model.model.config.id2label.items()}
        self.targets = np.array([target(p.label, self.id2label) for p in self.train_pairs], dtype=np.float32)
        self.weights = torch.tensor(class_weights(self.targets), dtype=torch.float32, device=self.device)
        self.lengths = [len(p.premise) + len(p.hypothesis) for p in self.train_pairs]
        self.steps_per_epoch = math.ceil(len(self.train_pairs) / cfg.batch_size)
        self.total_steps = self.steps_per_epoch * cfg.epochs
        self.optimizer, self.scheduler = self._optimizer()
        self.progress = Progress()
        self.last_loss = float("nan")
        if last is not None:
            self._restore(last)

    def _load(self, path: str | Path, fresh: bool):
        import torch
        from sentence_transformers import CrossEncoder
        from transformers import AutoConfig

        if not fresh:
            return CrossEncoder(str(path), device=self.device, max_length=self.cfg.max_length)
        torch.manual_seed(self.cfg.seed)
        base_labels = {int(k): v for k, v in AutoConfig.from_pretrained(str(path)).id2label.items()}
        id2label = choose_labels(bool(self.cfg.nli_mix), base_labels)
        model = CrossEncoder(str(path), num_labels=len(id2label), max_length=self.cfg.max_length,
                             device=self.device, model_kwargs={"ignore_mismatched_sizes": True})
        model.model.config.id2label = dict(id2label)
        model.model.config.label2id = {v: k for k, v in id2label.items()}
        return model

    def _optimizer(self):
        import torch
        from transformers import get_linear_schedule_with_warmup

        decay = [p for n, p in self.model.model.named_parameters() if not any(x in n for x in ("bias", "LayerNorm"))]
        rest = [p for n, p in self.model.model.named_parameters() if any(x in n for x in ("bias", "LayerNorm"))]
        optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}],
                                      lr=self.cfg.lr)
        warmup = max(1, int(0.1 * self.total_steps))
        return optimizer, get_linear_schedule_with_warmup(optimizer, warmup, self.total_steps)

    def _restore(self, checkpoint: Path) -> None:
        import torch

        state = torch.load(checkpoint / "state.pt", map_location=self.device, weights_only=False)
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["torch_rng"])
        self.progress = Progress(**state["progress"])
        self.progress.resumed_at.append(self.progress.step)
        self.report(f"resuming from {checkpoint.name}: step {self.progress.step} of {self.total_steps}")

    # -- one step, evaluation, checkpoints

    def encode(self, pairs: Sequence[Pair]):
        """Tokenised (premise, hypothesis) batch on the model's device."""
        batch = self.model.tokenizer([p.premise for p in pairs], [p.hypothesis for p in pairs], padding=True,
                                     truncation=True, max_length=self.cfg.max_length, return_tensors="pt")
        return {k: v.to(self.device) for k, v in batch.items()}

    def train_step(self, indices: Sequence[int]) -> float:
        """One optimizer step on the given pairs; returns the loss."""
        import torch

        self.model.model.train()
        logits = self.model.model(**self.encode([self.train_pairs[i] for i in indices])).logits
        targets = torch.tensor(self.targets[list(indices)], device=self.device)
        loss = -(targets * torch.log_softmax(logits, dim=-1) * self.weights).sum(dim=-1).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.model.parameters(), 1.0)
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad()
        self.last_loss = float(loss.item())
        return self.last_loss

    def probabilities(self, pairs: Sequence[Pair]) -> np.ndarray:
        """Class probabilities for pairs (scored in length order, returned in input order)."""
        import torch

        self.model.model.eval()
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i].premise) + len(pairs[i].hypothesis))
        out = np.zeros((len(pairs), len(self.id2label)), dtype=np.float32)
        size = max(self.cfg.batch_size * 2, 16)
        with torch.inference_mode():
            for start in range(0, len(order), size):
                chunk = order[start:start + size]
                logits = self.model.model(**self.encode([pairs[i] for i in chunk])).logits
                out[chunk] = torch.softmax(logits.float(), dim=-1).cpu().numpy()
        return out

    def evaluate(self) -> dict[str, Any]:
        """Pair-level dev metrics at the arg-max label, and the support score of every dev pair."""
        probs = self.probabilities(self.dev_pairs)
        targets = np.array([target(p.label, self.id2label) for p in self.dev_pairs], dtype=np.float32)
        gold = ["grounded" if is_supported(p.label) else "ungrounded" for p in self.dev_pairs]
        sup = supported_index(self.id2label)
        predicted = ["grounded" if row.argmax() == sup else "ungrounded" for row in probs]
        metrics = pair_metrics(gold, predicted, probs[:, sup])
        metrics["loss"] = float(-(targets * np.log(np.clip(probs, 1e-9, 1.0))).sum(axis=1).mean())
        metrics["scores"] = [round(float(s), 6) for s in probs[:, sup]]
        return metrics

    def save_checkpoint(self) -> Path:
        """Write model, optimizer, schedule and progress to checkpoints/step-N (atomically); keep two."""
        import torch

        final = self.root / f"step-{self.progress.step:07d}"
        tmp = final.with_suffix(".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        self.model.save_pretrained(str(tmp))
        torch.save({"optimizer": self.optimizer.state_dict(), "scheduler": self.scheduler.state_dict(),
                    "torch_rng": torch.get_rng_state(), "progress": asdict(self.progress)}, tmp / "state.pt")
        shutil.rmtree(final, ignore_errors=True)
        tmp.rename(final)
        for old in sorted(self.root.glob("step-*[0-9]"))[:-2]:
            shutil.rmtree(old, ignore_errors=True)
        return final

    def save_best(self, metrics: dict[str, Any]) -> None:
        """Keep the current model as checkpoints/best with its dev metrics."""
        tmp, final = self.root / "best.tmp", self.root / "best"
        shutil.rmtree(tmp, ignore_errors=True)
        self.model.save_pretrained(str(tmp))
        (tmp / "best.json").write_text(json.dumps({"step": self.progress.step, **metrics}) + "\n", encoding="utf-8")
        shutil.rmtree(final, ignore_errors=True)
        tmp.rename(final)


def pair_metrics(gold: Sequence[str], predicted: Sequence[str], scores: np.ndarray) -> dict[str, Any]:
    """Balanced accuracy, macro-F1 and ROC AUC of pair-level predictions (grounded = supported)."""
    from sklearn.metrics import roc_auc_score

    metrics = classification_metrics(gold, predicted)
    result = {k: metrics[k] for k in ("n", "accuracy", "balanced_accuracy", "macro_f1")}
    result["auc"] = float(roc_auc_score([g == "grounded" for g in gold], scores)) if len(set(gold)) == 2 else None
    return result


def latest_checkpoint(root: Path) -> Path | None:
    """The newest complete step checkpoint, or None."""
    done = [p for p in sorted(root.glob("step-*[0-9]")) if (p / "state.pt").exists()]
    return done[-1] if done else None


def _improved(metrics: dict[str, Any], best: dict[str, Any] | None) -> bool:
    if best is None:
        return True
    if metrics["balanced_accuracy"] > best["balanced_accuracy"] + 1e-9:
        return True
    return abs(metrics["balanced_accuracy"] - best["balanced_accuracy"]) <= 1e-9 and metrics["loss"] < best["loss"]


def _after_eval(session: Session, metrics: dict[str, Any]) -> bool:
    """Record an evaluation, keep the best model; True when early stopping says stop."""
    progress, cfg = session.progress, session.cfg
    summary = {k: v for k, v in metrics.items() if k != "scores"}
    progress.history.append({"step": progress.step, "epoch": progress.epoch, **summary})
    session.report(f"dev @ step {progress.step}: balanced accuracy {metrics['balanced_accuracy']:.3f}, "
                   f"macro-F1 {metrics['macro_f1']:.3f}, loss {metrics['loss']:.3f}")
    if _improved(metrics, progress.best):
        progress.best, progress.bad_evals = {"step": progress.step, **summary}, 0
        session.save_best(metrics)
        return False
    progress.bad_evals += 1
    return cfg.patience > 0 and progress.bad_evals >= cfg.patience


def _step(session: Session, batches: list[list[int]]) -> str | None:
    """One step with its evaluation and checkpoint: 'done' (early stop), 'stopped' (stop_after) or None."""
    cfg, progress = session.cfg, session.progress
    session.train_step(batches[progress.batch])
    progress.step, progress.batch = progress.step + 1, progress.batch + 1
    end_of_epoch = progress.batch == len(batches)
    due = cfg.eval_steps and progress.step % cfg.eval_steps == 0
    patience_out = bool(session.dev_pairs) and (end_of_epoch or due) and _after_eval(session, session.evaluate())
    if end_of_epoch:
        progress.epoch, progress.batch = progress.epoch + 1, 0
    if patience_out and progress.epoch < cfg.epochs:
        progress.stopped_early, progress.stopped_by = True, "early stopping"
        return "done"
    stop = bool(cfg.stop_after) and progress.step >= cfg.stop_after and progress.epoch < cfg.epochs
    if stop or end_of_epoch or (cfg.save_steps and progress.step % cfg.save_steps == 0):
        session.save_checkpoint()
    return "stopped" if stop else None


def run_loop(session: Session) -> str:
    """Train until the epochs are done, early stopping, the time limit ('done') or ``stop_after`` ('stopped')."""
    cfg, progress = session.cfg, session.progress
    with _progress_bar(cfg.quiet, session.total_steps, progress.step) as advance:
        while progress.epoch < cfg.epochs:
            batches = epoch_batches(session.lengths, cfg.batch_size, cfg.seed, progress.epoch)
            epoch = progress.epoch
            while progress.epoch == epoch:
                started = time.perf_counter()
                outcome = _step(session, batches)
                progress.elapsed_s += time.perf_counter() - started
                advance(session.last_loss)
                if outcome:
                    return outcome
                if cfg.time_limit_min and progress.elapsed_s >= cfg.time_limit_min * 60:
                    return _out_of_time(session)
    return "done"


def _out_of_time(session: Session) -> str:
    """Stop for the time limit: evaluate the current model unless it just was, and finish."""
    progress = session.progress
    session.report(f"time limit reached at step {progress.step} of {session.total_steps}")
    if session.dev_pairs and (not progress.history or progress.history[-1]["step"] != progress.step):
        _after_eval(session, session.evaluate())
    progress.stopped_by = "time limit"
    return "done"


class _progress_bar:
    """Progress over optimizer steps: a rich bar on a terminal, a line every 5% otherwise (logs), none when quiet."""

    def __init__(self, quiet: bool, total: int, done: int):
        self.quiet, self.total, self.done = quiet, total, done
        self.bar: Any = None

    def __enter__(self) -> Callable[[float], None]:
        from rich.console import Console

        console = Console(stderr=True)
        if self.quiet:
            return lambda loss: None
        if not console.is_terminal:
            return self._lines(console)
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.bar = Progress(TextColumn("training"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            TimeRemainingColumn(), TextColumn("loss {task.fields[loss]:.3f}"), console=console)
        self.bar.start()
        task = self.bar.add_task("train", total=self.total, completed=self.done, loss=float("nan"))
        return lambda loss: self.bar.update(task, advance=1, loss=loss)

    def _lines(self, console: Any) -> Callable[[float], None]:
        every, started = max(1, self.total // 20), time.perf_counter()

        def advance(loss: float) -> None:
            """Count a step; print a line every 5% of the steps."""
            self.done += 1
            if self.done % every == 0 or self.done == self.total:
                console.print(f"step {self.done}/{self.total}, loss {loss:.3f}, "
                              f"{time.perf_counter() - started:.0f} s", highlight=False)
        return advance

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


# ---------------------------------------------------------------- the output directory


def check_out_dir(cfg: TrainConfig) -> None:
    """A new run needs an empty (or absent) directory; a resumed one needs a started one."""
    out = Path(cfg.out)
    started = out.is_dir() and any(out.iterdir())
    if started and not cfg.resume:
        raise TrainError(f"{out} is not empty: pass --resume to continue that run, or another --out")
    if cfg.resume and not (out / "pairs" / "meta.json").exists():
        raise TrainError(f"{out} has no run to resume (no pairs/meta.json); start it without --resume")


def finalize(session: Session, prepared: Prepared) -> dict[str, Any]:
    """Copy the best model to OUT, fit tau on dev, write the card and README, drop the checkpoints."""
    out, root = Path(session.cfg.out), session.root
    best_dir = root / "best"
    if best_dir.exists():
        for item in best_dir.iterdir():
            if item.is_file() and item.name not in ("best.json", "state.pt"):
                shutil.copy2(item, out / item.name)
        best = json.loads((best_dir / "best.json").read_text(encoding="utf-8"))
    else:
        session.model.save_pretrained(str(out))
        best = session.evaluate() | {"step": session.progress.step} if session.dev_pairs else None
    card = build_card(session, prepared, best)
    (out / CARD_FILE).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    (out / "README.md").write_text(render_readme(card), encoding="utf-8")
    shutil.rmtree(root, ignore_errors=True)
    return card


def _dev_metrics(session: Session, best: dict[str, Any] | None) -> tuple[dict[str, Any] | None, float | None]:
    if not best or not session.dev_pairs:
        return None, None
    gold = ["grounded" if is_supported(p.label) else "ungrounded" for p in session.dev_pairs]
    scores = np.array(best["scores"])
    tau, _ = fit_threshold(list(scores), gold)
    at_tau = pair_metrics(gold, ["grounded" if s >= tau else "ungrounded" for s in scores], scores)
    keep = ("n", "accuracy", "balanced_accuracy", "macro_f1", "auc", "loss")
    metrics = {k: best[k] for k in keep} | {"at_tau": {k: at_tau[k] for k in keep if k in at_tau}, "tau": tau}
    return metrics, tau


def build_card(session: Session, prepared: Prepared, best: dict[str, Any] | None) -> dict[str, Any]:
    """The facts of the run, for the crossencoder judge and for people."""
    from importlib import metadata

    cfg, progress = session.cfg, session.progress
    dev_metrics, tau = _dev_metrics(session, best)
    k = cfg.evidence_k if cfg.evidence_k is not None else default_k(cfg.recipe)
    ranking = "sentence-embedding cosine" if cfg.evidence == "embedding" else "TF-IDF"
    return {
        "base": cfg.base, "base_path": str(session.base_path), "recipe": cfg.recipe,
        "labels": {str(i): name for i, name in session.id2label.items()},
        "supported_label": session.id2label[supported_index(session.id2label)],
        "max_length": cfg.max_length, "tau": tau,
        "evidence": cfg.evidence, "evidence_k": k, "run_dev_fraction": cfg.run_dev_fraction,
        "input": {"premise": f"evidence: the {k} best-matching context sentence(s) by {ranking}, in document order",
                  "hypothesis": f"claim: one answer sentence; an answer of at most {SHORT_ANSWER_WORDS} words "
                                "to a question is one claim, '<question> <answer>'",
                  "order": "(premise, hypothesis)"},
        "data": prepared.meta["data"], "split": prepared.meta["split"], "pairs": prepared.meta["pairs"],
        "synthetic": cfg.synthetic, "nli_mix": list(cfg.nli_mix),
        "epochs": cfg.epochs, "epochs_completed": progress.epoch, "steps": progress.step,
        "best_step": (best or {}).get("step", progress.step), "stopped_early": progress.stopped_early,
        "stopped_by": progress.stopped_by,
        "training_time_s": round(progress.elapsed_s, 1), "resumed_at_steps": progress.resumed_at,
        "hyperparameters": {"batch_size": cfg.batch_size, "lr": cfg.lr, "seed": cfg.seed, "patience": cfg.patience,
                            "eval_steps": cfg.eval_steps or "epoch", "max_train": cfg.max_train,
                            "max_dev": cfg.max_dev, "warmup": "10% linear, linear decay",
                            "loss": "class-weighted cross-entropy (soft targets)"},
        "dev_metrics": {"pair_level": dev_metrics, "history": progress.history},
        "device": session.device, "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "versions": {name: _version(metadata, name) for name in ("groundjudge", "torch", "transformers",
                                                                 "sentence-transformers")},
    }


def _version(metadata: Any, name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _fmt(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def render_readme(card: dict[str, Any]) -> str:
    """A plain Markdown model card from the same facts as the JSON card."""
    dev = card["dev_metrics"]["pair_level"]
    split = card["split"]
    lines = [
        "# groundjudge cross-encoder", "",
        f"A grounding judge fine-tuned from `{card['base']}` by `groundjudge train` on {card['date']}.", "",
        "## Use", "",
        f"Input: ({card['input']['premise']}; {card['input']['hypothesis']}), max {card['max_length']} tokens.",
        f"Labels: {card['labels']}; the support score is P({card['supported_label']})"
        + (f", supported when ≥ tau = {card['tau']:.3f} (fitted on dev)." if card["tau"] is not None else "."), "",
        "## Training data", "",
        "| file | format | examples | hash |", "|---|---|---|---|",
        *[f"| {d['file']} | {d['format']} | {d['examples']} | `{d['hash'][:12]}` |" for d in card["data"]], "",
        f"Split by group ({split['source']}, seed {split['seed']}): train {split['train']['examples']} examples in "
        f"{split['train']['groups']} groups, dev {split['dev']['examples']} in {split['dev']['groups']}; "
        f"{split['held_out_test']['examples']} test examples held out.", "",
        f"Recipe `{card['recipe']}`, synthetic edits {card['synthetic']}, NLI rows from {card['nli_mix'] or 'none'}.",
        f"Pairs: train {card['pairs']['train']['labels']}, dev {card['pairs']['dev']['labels']}.", "",
        "## Training", "",
        f"{card['steps']} steps ({card['epochs_completed']} of {card['epochs']} epochs), best at step "
        f"{card['best_step']}, {card['training_time_s']} s on {card['device']}; "
        f"{json.dumps(card['hyperparameters'])}.", "",
        "## Dev metrics (pair level)", "",
    ]
    if dev:
        lines += ["| decision | balanced accuracy | macro-F1 | AUC |", "|---|---|---|---|",
                  f"| arg-max | {_fmt(dev['balanced_accuracy'])} | {_fmt(dev['macro_f1'])} | {_fmt(dev['auc'])} |",
                  f"| tau | {_fmt(dev['at_tau']['balanced_accuracy'])} | {_fmt(dev['at_tau']['macro_f1'])} | "
                  f"{_fmt(dev['at_tau']['auc'])} |", ""]
    else:
        lines += ["No dev data: none measured.", ""]
    lines += ["These are pairs from held-out groups of the *same* data sets, and tau is fitted on them: they say "
              "little about unseen data. Measure the judge on a data set it never trained on.", ""]
    return "\n".join(lines)


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
