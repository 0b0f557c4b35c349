"""The training loop of ``groundjudge train``: the head's labels and targets, length-bucketed batches,
AdamW steps with class-weighted cross-entropy, dev evaluation with early stopping, checkpoints and progress."""

from __future__ import annotations

import json
import math
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from groundjudge.local_nli.model import (
    best_device,
    resolve_model,
    torch_threads,
)
from groundjudge.local_nli.pairs import Pair
from groundjudge.local_nli.train_data import Prepared, Report, TrainConfig
from groundjudge.local_nli.train_targets import (  # noqa: F401  (re-exported: the loop's public names)
    BINARY_LABELS,
    THREE_WAY_LABELS,
    choose_labels,
    class_weights,
    is_supported,
    pair_target,
    supported_index,
    target,
)
from groundjudge.metrics import classification_metrics

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
        self.targets = np.array([pair_target(p, self.id2label) for p in self.train_pairs], dtype=np.float32)
        self.pair_weights = np.array([p.weight for p in self.train_pairs], dtype=np.float32)
        self.weights = torch.tensor(class_weights(self.targets, self.pair_weights), dtype=torch.float32,
                                    device=self.device)
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
        pair_weights = torch.tensor(self.pair_weights[list(indices)], device=self.device)
        loss = weighted_loss(logits, targets, self.weights, pair_weights)
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
        targets = np.array([pair_target(p, self.id2label) for p in self.dev_pairs], dtype=np.float32)
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


def weighted_loss(logits, targets, class_weights, pair_weights):
    """The batch's class-weighted soft cross-entropy, each pair's term weighted by its source weight:
    ``sum(w * loss) / sum(w)`` (the plain mean when every weight is 1; a pair of weight 0 adds nothing)."""
    import torch

    per_pair = -(targets * torch.log_softmax(logits, dim=-1) * class_weights).sum(dim=-1)
    return (per_pair * pair_weights).sum() / pair_weights.sum().clamp_min(1e-12)


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
