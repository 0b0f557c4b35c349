"""Training data for ``groundjudge train``: load and validate the files, split by group into train and dev,
build and cap the (evidence, claim) pairs, and keep them in the output folder so a resumed run reuses them."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from groundjudge.formats import RowError
from groundjudge.formats.load import (
    DataError,
    assign_missing_splits,
    dataset_hash,
    load_examples,
)
from groundjudge.local_nli.model import (
    DEFAULT_EMBEDDER,
)
from groundjudge.local_nli.nli_rows import read_nli_tsv
from groundjudge.local_nli.pairs import Pair, build_pairs, source_group
from groundjudge.local_nli.synthetic import synthetic_pairs
from groundjudge.types import Example

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
    teacher: str | None = None
    """A judge spec (an LLM chain): label the data with it and train on its verdicts instead of gold labels."""
    teacher_mode: str = "claims"
    """'claims': each claim's verdict as a hard label; 'soft': each claim's score (P(supported)) as a soft one."""
    teacher_budget: float | None = None
    """Most dollars the teacher may spend; answers past it are left out."""
    teacher_sample: int = 0
    """Label at most this many answers (a seeded sample over the train and dev groups; 0: all)."""
    teacher_concurrency: int = 8
    """Answers the teacher judges at once (1 for a local server with one slot: its prompt cache then serves each
    answer's chain)."""
    teacher_cache: tuple[str, ...] = ()
    """Run folders (a committed teacher run, ``OUT/teacher`` of another student) whose recorded replies are copied
    into the call cache before the teacher runs: a call with the same key reads one instead of calling."""
    from_documents: tuple[str, ...] = ()
    """In a mixed run: the documents whose checked pairs join the set (``--from-documents``)."""
    weights: tuple[tuple[str, float], ...] = ()
    """In a mixed run: the ``--weight SOURCE=W`` given (every other source weighs 1.0)."""

    def weight(self, source: str) -> float:
        """The loss weight of a source's pairs (1.0 unless ``--weight`` set it)."""
        return dict(self.weights).get(source, 1.0)

    def fingerprint(self) -> dict[str, Any]:
        """The settings that decide the result: a resumed run must use the same ones (the mixed-run settings only
        when given, so that a run started before they existed resumes)."""
        skip = {"out", "resume", "stop_after", "time_limit_min", "quiet", "save_steps"}
        skip |= {name for name in ("from_documents", "weights", "teacher_cache") if not getattr(self, name)}
        return {k: (_listed(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items() if k not in skip}


def _listed(value: tuple) -> list:
    return [_listed(v) if isinstance(v, tuple) else v for v in value]


def load_training_data(files: Sequence[str], fmt: str | None, skip_invalid: bool = False
                       ) -> tuple[list[Example], list[dict[str, Any]]]:
    """Examples of every file, and per file its format, example count, skipped rows and dataset hash."""
    examples: list[Example] = []
    info: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    errors: list[RowError] = []
    for path in files:
        loaded = load_examples([path], fmt, skip_invalid)
        info.append({"file": ", ".join(loaded.files), "format": loaded.formats[0], "examples": len(loaded.examples),
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
                   run_dev_fraction: float | None = None, labelled_only: bool = True
                   ) -> tuple[list[Example], list[Example], dict[str, Any]]:
    """(train, dev, summary): labelled examples split by group, so no document is in both parts.

    The group is :func:`~groundjudge.local_nli.pairs.source_group`: ``meta.group``, else the context.

    Groups whose examples carry a split keep it (a group with any test example is held out, never
    trained on); the others go to dev with probability ``dev_fraction`` by a seeded hash of the group.
    ``labelled_only=False`` keeps unlabelled examples (a teacher labels them). With ``run_dev_fraction`` F, only the examples that ``groundjudge run --dev-fraction F`` puts in its
    dev part are used at all (the same group hash as the runner's): the run's evaluation part stays unseen.
    """
    labelled = [ex for ex in examples if ex.label is not None or not labelled_only]
    unseen: list[Example] = []
    if run_dev_fraction is not None:
        seen_by_run = assign_missing_splits(labelled, run_dev_fraction)
        unseen = [ex for ex, as_run in zip(labelled, seen_by_run) if as_run.split == "test"]
        labelled = [ex for ex, as_run in zip(labelled, seen_by_run) if as_run.split != "test"]
    if not labelled:
        raise DataError([RowError(file="<data>", line=0, field="label", message="no labelled examples to train on"
                                  if labelled_only else "no examples to train on")])
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


def pair_counts(pairs: Sequence[Pair]) -> dict[str, Any]:
    """How many pairs, per label and per source."""
    return {"n": len(pairs), "labels": dict(Counter(p.label for p in pairs)),
            "sources": dict(Counter(p.source for p in pairs))}


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
    return capped, dev_pairs, {"built": built, "train": pair_counts(capped), "dev": pair_counts(dev_pairs)}


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
    again = resumed(cfg)
    if again is not None:
        return again
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
    return save_prepared(cfg, Prepared(train_pairs, dev_pairs, meta), train, dev)


def save_prepared(cfg: TrainConfig, prepared: Prepared, train: Sequence[Example], dev: Sequence[Example]
                  ) -> Prepared:
    """Keep the pairs, the groups of each part and the meta in OUT/pairs (what a resumed run reads back)."""
    folder = Path(cfg.out) / "pairs"
    folder.mkdir(parents=True, exist_ok=True)
    _write_pairs(folder / "train.jsonl", prepared.train)
    _write_pairs(folder / "dev.jsonl", prepared.dev)
    groups = {"train": sorted({source_group(e) for e in train}), "dev": sorted({source_group(e) for e in dev})}
    (folder / "groups.json").write_text(json.dumps(groups, indent=1) + "\n", encoding="utf-8")
    (folder / "meta.json").write_text(json.dumps(prepared.meta, indent=2) + "\n", encoding="utf-8")
    return prepared


def resumed(cfg: TrainConfig) -> Prepared | None:
    """The pairs of the run being resumed (checked to be the same run), or None for a new run."""
    folder = Path(cfg.out) / "pairs"
    if not (cfg.resume and (folder / "meta.json").exists()):
        return None
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    _check_same_run(meta["config"], cfg)
    return Prepared(_read_pairs(folder / "train.jsonl"), _read_pairs(folder / "dev.jsonl"), meta)


def _check_same_run(saved: dict[str, Any], cfg: TrainConfig) -> None:
    now = cfg.fingerprint()
    differ = sorted(k for k in now if saved.get(k) != now[k])
    if differ:
        raise TrainError(f"{cfg.out} was started with other settings ({', '.join(differ)}); resume with the same "
                         "options or use another --out")
