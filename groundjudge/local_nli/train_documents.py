"""``groundjudge train --from-documents FILES``: a grounding judge trained with no label at all.

Steps: read the documents (plain text, or the contexts of data files of any format; labels are never read) → split
them by group into train and dev (the same rule as ``groundjudge train``: the data's own test documents and, with
``run_dev_fraction``, the run's evaluation part are held out) → make each document's checked pairs
(:mod:`~groundjudge.local_nli.doc_pairs`, each premise the evidence the judge will select by the card's
``evidence`` and ``evidence_k``; LLM paraphrases and checks when configured) in a seeded order, one line
per document appended to ``OUT/pairs/units.jsonl`` until ``max_pairs`` → drop dev pairs whose claim is also a
training claim → write the train and dev pairs as ``groundjudge train`` does, and train on them with its loop.

Resuming (``--resume``) skips the documents already written, so a run killed at any point neither repeats nor
loses a pair; once the pairs are assembled, a resumed run trains on them as any resumed training does.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundjudge.local_nli.doc_evidence import DocEvidence, premise_rule
from groundjudge.local_nli.doc_llm import add_llm_paraphrases, llm_checked
from groundjudge.local_nli.doc_negatives import borrowed_phrases
from groundjudge.local_nli.doc_pairs import UnitPairs, unit_pairs
from groundjudge.local_nli.doc_sources import (
    Document,
    DocumentSet,
    read_documents,
    unit_key,
)
from groundjudge.local_nli.doc_store import UNITS_FILE, UnitWriter, read_units
from groundjudge.local_nli.model import ModelUnavailable, resolve_model
from groundjudge.local_nli.pairs import Pair, default_k
from groundjudge.local_nli.train_card import CARD_FILE, finalize
from groundjudge.local_nli.train_data import (
    Prepared,
    Report,
    TrainConfig,
    TrainError,
    cap_pairs,
    pair_counts,
    resumed,
    save_prepared,
    split_examples,
)
from groundjudge.text import normalize

OPTIONS_FILE = "documents.json"
"""The generation settings of a run, inside ``OUT/pairs`` (a resumed run must use the same)."""

@dataclass(frozen=True)
class DocumentsOptions:
    """What ``--from-documents`` adds to a training run."""

    files: tuple[str, ...]
    max_pairs: int = 0
    """Stop making pairs once this many are written (0: no cap)."""
    pairs_only: bool = False
    """Write the pairs and stop before training."""
    generator: Any = None
    """An LLM generator (perturb's) for paraphrases, or None."""
    check: Any = None
    """A judge check (perturb's ``JudgeCheck``) every made pair must pass, or None."""
    concurrency: int = 4

    def fingerprint(self) -> dict[str, Any]:
        """The settings that decide the pairs: a resumed run must use the same ones."""
        return {"files": list(self.files), "max_pairs": self.max_pairs,
                "generator": getattr(self.generator, "name", None), "check": getattr(self.check, "name", None)}


def evidence_k(cfg: TrainConfig) -> int:
    """Sentences per premise: the run's ``evidence_k``, else the ``train`` default (2), as the card records it."""
    return cfg.evidence_k if cfg.evidence_k is not None else default_k(cfg.recipe)


def run_options(cfg: TrainConfig, opts: DocumentsOptions) -> dict[str, Any]:
    """The settings that decide the pairs: the options' and the evidence selection's (a resumed run must use the
    same)."""
    return opts.fingerprint() | {"evidence": cfg.evidence, "evidence_k": evidence_k(cfg)}


def check_base(base: str) -> None:
    """The base must be a model folder (one with a config.json): else one line naming ``--base``."""
    try:
        path = Path(resolve_model(base))
    except ModelUnavailable as err:
        raise TrainError(f"--base {base}: {err}") from None
    if not (path / "config.json").is_file():
        raise TrainError(f"--base {base}: not a model folder (no config.json in {path.name or path})")


def _check_out(cfg: TrainConfig, options: dict[str, Any]) -> None:
    out = Path(cfg.out)
    header = out / "pairs" / OPTIONS_FILE
    started = out.is_dir() and any(out.iterdir())
    if started and not cfg.resume:
        raise TrainError(f"{out} is not empty: pass --resume to continue that run, or another --out")
    if cfg.resume and not header.exists():
        raise TrainError(f"{out} has no run to resume (no pairs/{OPTIONS_FILE}); start it without --resume")
    check_options(cfg, options)


def check_options(cfg: TrainConfig, options: dict[str, Any]) -> None:
    """A run that already wrote document pairs must continue with the same generation settings."""
    out = Path(cfg.out)
    header = out / "pairs" / OPTIONS_FILE
    if header.exists():
        saved = json.loads(header.read_text(encoding="utf-8"))
        differ = sorted(k for k in options if saved.get(k) != options[k])
        if differ:
            raise TrainError(f"{out} was started with other settings ({', '.join(differ)}); resume with the same "
                             "options or use another --out")


def _splits(docs: DocumentSet, cfg: TrainConfig) -> tuple[dict[str, str], dict[str, Any]]:
    train, dev, summary = split_examples([d.example for d in docs.documents], cfg.dev_fraction, cfg.seed,
                                         cfg.run_dev_fraction, labelled_only=False)
    splits = {unit_key(e): "train" for e in train} | {unit_key(e): "dev" for e in dev}
    return splits, summary


def work_order(documents: Sequence[Document], splits: dict[str, str], seed: int) -> list[Document]:
    """The documents to make pairs from (those in train or dev), in a seeded order of their keys."""
    chosen = sorted((d for d in documents if d.key in splits), key=lambda d: d.key)
    random.Random(seed).shuffle(chosen)
    return chosen


async def _make_units(todo: Sequence[Document], splits: dict[str, str], cfg: TrainConfig, opts: DocumentsOptions,
                      report: Report) -> tuple[int, int]:
    """Make and append the units not written yet, until ``max_pairs``: (units made, pairs made)."""
    path = Path(cfg.out) / "pairs" / UNITS_FILE
    done = read_units(path)
    skip = {u.key for u in done}
    count = sum(len(u.pairs) for u in done)
    try:
        return await _write_units(todo, splits, cfg, opts, report, path, skip, count)
    finally:
        close = getattr(opts.check, "aclose", None)   # a batching check stops its batcher with this event loop
        if close is not None:
            await close()


async def _write_units(todo: Sequence[Document], splits: dict[str, str], cfg: TrainConfig, opts: DocumentsOptions,
                       report: Report, path: Path, skip: set[str], count: int) -> tuple[int, int]:
    """Write each document's unit of checked pairs (the documents in ``skip`` are already written)."""
    pool = sorted({p for d in todo for p in borrowed_phrases(d.sentences)})
    made = pairs = 0
    with UnitWriter(path) as writer:
        for doc in todo:
            if doc.key in skip:
                continue
            if opts.max_pairs and count >= opts.max_pairs:
                break
            evidence = DocEvidence(doc, cfg.evidence, evidence_k(cfg))
            unit = unit_pairs(doc, splits[doc.key], pool, evidence, cfg.seed)
            if opts.generator is not None:
                await add_llm_paraphrases(unit, opts.generator, evidence, opts.concurrency)
            if opts.check is not None:
                await llm_checked(unit, opts.check, opts.concurrency)
            writer.write(unit)
            made, pairs, count = made + 1, pairs + len(unit.pairs), count + len(unit.pairs)
            if made % 10 == 0:
                report(f"documents: {len(skip) + made} of {len(todo)} done, {count} pairs")
    return made, pairs


def _as_pair(unit: UnitPairs, number: int, pair) -> Pair:
    return Pair(premise=pair.premise, hypothesis=pair.hypothesis, label=pair.label, source=f"documents:{pair.kind}",
                group=unit.group, example_id=f"{unit.key}-{number}")


def assemble(units: Sequence[UnitPairs], max_pairs: int) -> tuple[list[Pair], list[Pair], dict[str, Any]]:
    """(train pairs, dev pairs, counts): the units' pairs in order up to ``max_pairs``, then every dev pair whose
    claim is also a training claim dropped (``train_dev_overlap``), so that no claim is in both parts."""
    parts: dict[str, list[tuple[UnitPairs, int, Any]]] = {"train": [], "dev": []}
    total = 0
    for unit in units:
        for number, pair in enumerate(unit.pairs):
            if max_pairs and total >= max_pairs:
                break
            parts[unit.split].append((unit, number, pair))
            total += 1
    seen = {normalize(pair.hypothesis) for _, _, pair in parts["train"]}
    dev = [item for item in parts["dev"] if normalize(item[2].hypothesis) not in seen]
    dropped: dict[str, Counter] = {}
    for unit in units:
        for check, kinds in unit.dropped.items():
            dropped.setdefault(check, Counter()).update(kinds)
    counts = {"kinds": {name: dict(sorted(Counter(p.kind for _, _, p in items).items()))
                        for name, items in (("train", parts["train"]), ("dev", dev))},
              "dropped_by_check": {c: sum(k.values()) for c, k in sorted(dropped.items())},
              "dropped_by_check_and_kind": {c: dict(sorted(k.items())) for c, k in sorted(dropped.items())},
              "train_dev_overlap_dropped": len(parts["dev"]) - len(dev)}
    return [_as_pair(*item) for item in parts["train"]], [_as_pair(*item) for item in dev], counts


def _docs_hash(documents: Sequence[Document]) -> str:
    digest = hashlib.sha256()
    for doc in documents:
        digest.update(doc.key.encode("ascii") + b"\n")
    return digest.hexdigest()


def generate(cfg: TrainConfig, opts: DocumentsOptions, report: Report) -> Prepared:
    """Read, split and pair the documents (continuing a started run), and write the pairs as training reads them."""
    if not opts.pairs_only:
        check_base(cfg.base)
    docs = read_documents(opts.files, cfg.fmt, cfg.skip_invalid)
    splits, split = _splits(docs, cfg)
    if "train" not in splits.values():
        raise TrainError(f"--from-documents: no document left to train on ({len(docs.documents)} read, "
                         f"{split['held_out_test']['examples']} held out as test)")
    _check_out(cfg, run_options(cfg, opts))
    report(f"documents: train {split['train']['examples']}, dev {split['dev']['examples']}, "
           f"{split['held_out_test']['examples']} held out")
    train, dev, counts = document_pairs(cfg, opts, docs, splits, report)
    train_capped, dev_capped = cap_pairs(train, cfg.max_train, cfg.seed), cap_pairs(dev, cfg.max_dev, cfg.seed + 1)
    split["train"]["pairs"], split["dev"]["pairs"] = len(train_capped), len(dev_capped)
    meta = {"config": cfg.fingerprint(), "data": files_info(docs), "split": split, "documents": counts,
            "pairs": {"built": {"documents": len(train)}, "train": pair_counts(train_capped),
                      "dev": pair_counts(dev_capped)}}
    todo = work_order(docs.documents, splits, cfg.seed)
    examples = {"train": [d.example for d in todo if splits[d.key] == "train"],
                "dev": [d.example for d in todo if splits[d.key] == "dev"]}
    return save_prepared(cfg, Prepared(train_capped, dev_capped, meta), examples["train"], examples["dev"])


def files_info(docs: DocumentSet) -> list[dict[str, Any]]:
    """Per document file: its format, documents read and a hash of their keys (the card's data table)."""
    return [f | {"hash": _docs_hash([d for d in docs.documents if d.file == f["file"]])} for f in docs.files]


def document_pairs(cfg: TrainConfig, opts: DocumentsOptions, docs: DocumentSet, splits: dict[str, str],
                   report: Report) -> tuple[list[Pair], list[Pair], dict[str, Any]]:
    """(train pairs, dev pairs, counts) of the documents in ``splits`` (document key -> 'train' or 'dev'): made
    and appended to ``OUT/pairs/units.jsonl`` (continuing the documents a killed run left), then assembled."""
    folder = Path(cfg.out) / "pairs"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / OPTIONS_FILE).write_text(json.dumps(run_options(cfg, opts), indent=1) + "\n", encoding="utf-8")
    todo = work_order(docs.documents, splits, cfg.seed)
    report(f"documents: {len(todo)} to pair")
    started = time.perf_counter()
    made, pairs = asyncio.run(_make_units(todo, splits, cfg, opts, report))
    seconds = time.perf_counter() - started
    train, dev, counts = assemble(read_units(folder / UNITS_FILE), opts.max_pairs)
    counts |= {"premise": premise_rule(cfg.evidence, evidence_k(cfg)), "documents_read": len(docs.documents),
               "skipped_documents": docs.skipped,
               "max_pairs": opts.max_pairs, "generator": getattr(opts.generator, "name", None),
               "check": getattr(opts.check, "name", None),
               "generation": {"documents": made, "pairs": pairs, "seconds": round(seconds, 2),
                              "pairs_per_minute": round(pairs / seconds * 60) if seconds and pairs else None}}
    report(f"pairs: {len(train)} train, {len(dev)} dev ({counts['train_dev_overlap_dropped']} dev pairs dropped: "
           f"their claim is a training claim); made {pairs} in {seconds:.1f} s")
    return train, dev, counts


def train_from_documents(cfg: TrainConfig, opts: DocumentsOptions, report: Report = print) -> dict[str, Any] | None:
    """Make the pairs (or read back those of the run being resumed) and train on them; the card when finished,
    None when only the pairs were asked for or training stopped by ``stop_after``."""
    from groundjudge.local_nli.train_loop import Session, run_loop

    out = Path(cfg.out)
    if cfg.resume and (out / CARD_FILE).exists():
        report(f"{out} is already trained")
        return json.loads((out / CARD_FILE).read_text(encoding="utf-8"))
    prepared = None
    if cfg.resume and (out / "pairs" / "meta.json").exists():
        _check_out(cfg, run_options(cfg, opts))
        prepared = resumed(cfg)
    if prepared is None:
        prepared = generate(cfg, opts, report)
    if opts.pairs_only:
        report(f"pairs written to {out / 'pairs'}; train on them with the same command and --resume")
        return None
    check_base(cfg.base)
    session = Session(cfg, prepared, report)
    if run_loop(session) == "stopped":
        report(f"stopped at step {session.progress.step} of {session.total_steps}; continue with --resume")
        return None
    return finalize(session, prepared)
