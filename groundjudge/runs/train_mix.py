"""A mixed training set: ``groundjudge train`` with gold data, ``--synthetic N``, ``--from-documents FILES``,
``--teacher SPEC`` and ``--nli-mix`` in any combination, each source's pairs weighted by ``--weight SOURCE=W``.

Steps: load the data files and read the documents → split all of them at once by group (the rule of
:func:`~groundjudge.local_nli.train_data.split_examples`: a group is ``meta.group``, else the context, so a
document and the answers about it fall on the same side, whichever source they come in by; the data's own test
groups and, with ``run_dev_fraction``, the run's evaluation part are held out) → make each source's pairs of the
train and dev parts:

* ``gold``: the recipe's pairs of the labelled answers (``--recipe``);
* ``synthetic``: edits of the training part's grounded answers and context sentences (training only);
* ``documents``: the checked pairs of :mod:`~groundjudge.local_nli.train_documents` (no label read);
* ``teacher``: the teacher's claim verdicts (or P(supported), ``--teacher-mode soft``) on the data's answers, a
  run in ``OUT/teacher`` that reads the call cache first (hits counted) and stops new calls at the budget;
* ``nli``: the NLI rows (training only).

Each pair carries its source (``origin``) and the source's weight; sources of weight 0 are left out. Dev pairs
whose claim is also a training claim (of any source) are dropped, so no claim is on both sides. The loop weights
each pair's loss by its weight, and the card's ``mix`` says per source its pairs and weight, and for the teacher
its cache hits, new calls, budget and cost.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundjudge.formats.load import dataset_hash
from groundjudge.local_nli.doc_sources import DocumentSet, read_documents
from groundjudge.local_nli.nli_rows import read_nli_tsv
from groundjudge.local_nli.pairs import Pair, build_pairs, default_k, source_group
from groundjudge.local_nli.synthetic import synthetic_pairs
from groundjudge.local_nli.train_card import CARD_FILE, finalize
from groundjudge.local_nli.train_data import (
    Prepared,
    Report,
    TrainConfig,
    TrainError,
    cap_pairs,
    load_training_data,
    pair_counts,
    resumed,
    save_prepared,
    split_examples,
)
from groundjudge.local_nli.train_documents import (
    DocumentsOptions,
    check_base,
    check_options,
    document_pairs,
    files_info,
    run_options,
)
from groundjudge.local_nli.train_sources import SOURCES, tagged
from groundjudge.runs.distill import teacher_part, with_agreement
from groundjudge.text import normalize
from groundjudge.types import Example


def mixed_sources(cfg: TrainConfig) -> list[str]:
    """The sources a run's settings name, in :data:`SOURCES` order (gold: data files given, read for their labels
    in a mixed run)."""
    given = {"gold": bool(cfg.data), "synthetic": cfg.synthetic > 0, "documents": bool(cfg.from_documents),
             "teacher": bool(cfg.teacher), "nli": bool(cfg.nli_mix)}
    return [name for name in SOURCES if given[name]]


@dataclass
class _Parts:
    """The examples of a mixed run, split: data answers and documents of each part."""

    train: list[Example]
    dev: list[Example]
    doc_splits: dict[str, str]
    split: dict[str, Any]


def _split(examples: Sequence[Example], docs: DocumentSet | None, cfg: TrainConfig) -> _Parts:
    """One split by group over the data's answers and the documents together."""
    everything = list(examples) + ([d.example for d in docs.documents] if docs else [])
    train, dev, split = split_examples(everything, cfg.dev_fraction, cfg.seed, cfg.run_dev_fraction,
                                       labelled_only=False)
    side = {source_group(e): "train" for e in train} | {source_group(e): "dev" for e in dev}
    doc_splits = {d.key: side[d.group] for d in (docs.documents if docs else []) if d.group in side}
    if "train" not in side.values():
        raise TrainError("no group left to train on: every example and document is held out as test")
    in_data = {id(e) for e in examples}
    return _Parts([e for e in train if id(e) in in_data], [e for e in dev if id(e) in in_data], doc_splits, split)


def _source_pairs(cfg: TrainConfig, parts: _Parts, docs: tuple[DocumentsOptions | None, DocumentSet | None],
                  report: Report) -> tuple[dict[str, tuple[list[Pair], list[Pair]]], dict[str, Any]]:
    """Each source's (train pairs, dev pairs), tagged with its origin and weight; and the facts of the teacher and
    of the documents."""
    k = cfg.evidence_k if cfg.evidence_k is not None else default_k(cfg.recipe)
    out: dict[str, tuple[list[Pair], list[Pair]]] = {}
    facts: dict[str, Any] = {}
    sources = mixed_sources(cfg)
    if "gold" in sources:
        labelled = ([e for e in parts.train if e.label is not None], [e for e in parts.dev if e.label is not None])
        out["gold"] = (build_pairs(labelled[0], cfg.recipe, k, cfg.evidence),
                       build_pairs(labelled[1], cfg.recipe, k, cfg.evidence))
    if "synthetic" in sources:
        doc_train = [d.example for d in (docs[1].documents if docs[1] else [])
                     if parts.doc_splits.get(d.key) == "train"]
        out["synthetic"] = (synthetic_pairs(parts.train + doc_train, cfg.synthetic, cfg.seed, k, cfg.evidence), [])
    if "documents" in sources:
        train, dev, facts["documents"] = document_pairs(cfg, docs[0], docs[1], parts.doc_splits, report)
        out["documents"] = (train, dev)
    if "teacher" in sources:
        part = teacher_part(cfg, parts.train, parts.dev, report)
        out["teacher"], facts["teacher"] = (part.train_pairs, part.dev_pairs), part.facts
    if "nli" in sources:
        out["nli"] = ([row for path in cfg.nli_mix for row in read_nli_tsv(path)], [])
    weighted = {name: (tagged(train, name, cfg.weight(name)), tagged(dev, name, cfg.weight(name)))
                for name, (train, dev) in out.items()}
    return weighted, facts


def _combine(cfg: TrainConfig, by_source: dict[str, tuple[list[Pair], list[Pair]]]
             ) -> tuple[list[Pair], list[Pair], int]:
    """The training and dev pairs of every source of weight above 0 (capped, stratified by source and label), the
    dev pairs whose claim is a training claim dropped: (train, dev, dropped)."""
    train = [p for name in by_source if cfg.weight(name) > 0 for p in by_source[name][0]]
    dev = [p for name in by_source if cfg.weight(name) > 0 for p in by_source[name][1]]
    claims = {normalize(p.hypothesis) for p in train}
    kept = [p for p in dev if normalize(p.hypothesis) not in claims]
    return cap_pairs(train, cfg.max_train, cfg.seed), cap_pairs(kept, cfg.max_dev, cfg.seed + 1), len(dev) - len(kept)


def _mix_card(cfg: TrainConfig, by_source: dict[str, tuple[list[Pair], list[Pair]]], train: Sequence[Pair],
              dev: Sequence[Pair], facts: dict[str, Any]) -> dict[str, Any]:
    """Per source: its weight, the pairs it made and those kept in the capped train and dev sets; for the teacher
    its cache hits, new calls, budget and cost; for gold its recipe."""
    sources: dict[str, Any] = {}
    for name, (made_train, made_dev) in by_source.items():
        entry = {"weight": cfg.weight(name), "made": {"train": len(made_train), "dev": len(made_dev)},
                 "train_pairs": sum(p.origin == name for p in train), "dev_pairs": sum(p.origin == name for p in dev)}
        if name == "gold":
            entry["recipe"] = cfg.recipe
        if name == "teacher":
            t = facts["teacher"]
            entry |= {"cache_hits": t["cache_hits"], "new_calls": t["calls_made"], "budget_usd": t["budget_usd"],
                      "cost_usd": t["new_cost_usd"], "answers": t["answers"], "labelled": t["labelled"],
                      "answers_stopped_by_budget": t["abstained"].get("budget", 0),
                      "seeded_from": t.get("seeded_from")}
        sources[name] = entry
    return {"sources": sources, "loss": "each pair's term weighted by its source's weight: sum(w*loss)/sum(w) per "
                                        "batch; sources of weight 0 left out"}


def prepare_mixed(cfg: TrainConfig, docs_opts: DocumentsOptions | None, report: Report) -> Prepared:
    """Load, split and pair every source; keep the pairs in OUT/pairs as any training run does."""
    examples, data_info = load_training_data(cfg.data, cfg.fmt, cfg.skip_invalid) if cfg.data else ([], [])
    docs = read_documents(docs_opts.files, cfg.fmt, cfg.skip_invalid) if docs_opts else None
    parts = _split(examples, docs, cfg)
    report(f"split by group (all sources): train {parts.split['train']['groups']} groups, dev "
           f"{parts.split['dev']['groups']}, held-out test {parts.split['held_out_test']['examples']} examples")
    by_source, facts = _source_pairs(cfg, parts, (docs_opts, docs), report)
    train, dev, dropped = _combine(cfg, by_source)
    if not train:
        raise TrainError("the mixed set has no training pair (every source made none, or weighs 0)")
    mix = _mix_card(cfg, by_source, train, dev, facts) | {"train_dev_overlap_dropped": dropped}
    report("pairs per source: " + ", ".join(f"{name} {s['train_pairs']} (weight {s['weight']:g})"
                                            for name, s in mix["sources"].items()) + f"; dev {len(dev)}")
    split = parts.split
    split["train"]["pairs"], split["dev"]["pairs"] = len(train), len(dev)
    split["train_examples_hash"] = dataset_hash(parts.train)
    meta = {"config": cfg.fingerprint(), "data": data_info + (files_info(docs) if docs else []), "split": split,
            "mix": mix, "pairs": {"built": {name: len(t) for name, (t, _) in by_source.items()},
                                  "train": pair_counts(train), "dev": pair_counts(dev)}}
    meta |= {name: facts[name] for name in ("teacher", "documents") if name in facts}
    doc_examples = {side: [d.example for d in (docs.documents if docs else []) if parts.doc_splits.get(d.key) == side]
                    for side in ("train", "dev")}
    return save_prepared(cfg, Prepared(train, dev, meta), parts.train + doc_examples["train"],
                         parts.dev + doc_examples["dev"])


def _check_out(cfg: TrainConfig) -> None:
    out = Path(cfg.out)
    started = out.is_dir() and any(out.iterdir())
    if started and not cfg.resume:
        raise TrainError(f"{out} is not empty: pass --resume to continue that run, or another --out")
    if cfg.resume and not started:
        raise TrainError(f"{out} has no run to resume; start it without --resume")


def train_mixed(cfg: TrainConfig, docs_opts: DocumentsOptions | None = None, report: Report = print
                ) -> dict[str, Any] | None:
    """Make (or read back) the mixed set and train on it; the card when finished, None when only the pairs were
    asked for (``pairs_only``) or training stopped by ``stop_after``."""
    from groundjudge.local_nli.train_loop import Session, run_loop

    out = Path(cfg.out)
    if cfg.resume and (out / CARD_FILE).exists():
        report(f"{out} is already trained")
        return json.loads((out / CARD_FILE).read_text(encoding="utf-8"))
    _check_out(cfg)
    if docs_opts is not None:
        check_options(cfg, run_options(cfg, docs_opts))
    if not (docs_opts and docs_opts.pairs_only):
        check_base(cfg.base)
    prepared = resumed(cfg) or prepare_mixed(cfg, docs_opts, report)   # makes OUT once the inputs are read
    if docs_opts is not None and docs_opts.pairs_only:
        report(f"pairs written to {out / 'pairs'}; train on them with the same command and --resume")
        return None
    session = Session(cfg, prepared, report)
    if run_loop(session) == "stopped":
        report(f"stopped at step {session.progress.step} of {session.total_steps}; continue with --resume")
        return None
    card = finalize(session, prepared)
    return with_agreement(cfg, card) if card.get("teacher") else card
