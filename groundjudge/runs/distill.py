"""Distil an LLM judge into a local cross-encoder: ``groundjudge train DATA --teacher SPEC``.

The one thing every user has is a pile of unlabelled (context, answer) pairs and an LLM judge that is better than
the local models on them. The teacher (any judge spec, usually the claims chain) judges the answers of the train and
dev groups as an ordinary run in ``OUT/teacher`` (records, cache, ``--resume``, a dollar cap), and each claim it
verified becomes a training pair for the student:

* ``teacher_mode="claims"``: the claim's verdict as a hard label (supported, or unsupported for contradicted and
  unverifiable claims);
* ``teacher_mode="soft"``: the claim's score (P(supported) of a ``score=logprobs`` chain) as a soft target.

The premise of a pair is built exactly as for gold-labelled training (the claim's best-matching context sentences),
so the student reads what the ``crossencoder`` judge gives it at run time. Gold labels, where the data has them,
are never trained on. After training, the student judges the dev answers (documents it never trained on) and the
card records its agreement with the teacher there, beside the teacher's cost.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundjudge.formats.load import dataset_hash
from groundjudge.judges.config import JudgeConfig
from groundjudge.local_nli.pairs import EvidenceIndex, Pair, context_sentences, default_k, source_group
from groundjudge.local_nli.train import CARD_FILE, TrainError
from groundjudge.local_nli.train_card import finalize, render_readme
from groundjudge.local_nli.train_data import (
    Prepared,
    Report,
    TrainConfig,
    cap_pairs,
    load_training_data,
    pair_counts,
    resumed,
    save_prepared,
    split_examples,
)
from groundjudge.local_nli.train_loop import Session, run_loop
from groundjudge.paths import portable_path
from groundjudge.runs.chunk_option import DEFAULT_LOCAL_CHUNK
from groundjudge.runs.execute import RunOptions, execute_to_end, write_examples
from groundjudge.runs.records import ResultRecord, read_records
from groundjudge.types import Example

TEACHER_DIR = "teacher"
"""The teacher's run folder inside the student's output folder."""

STUDENT_DIR = "student_on_dev"
"""The student's run on the dev answers (its agreement with the teacher)."""


def sample_answers(train: list[Example], dev: list[Example], limit: int, seed: int
                   ) -> tuple[list[Example], list[Example]]:
    """At most ``limit`` answers (0: all), a seeded sample taken across both parts in proportion to their sizes."""
    if limit <= 0 or len(train) + len(dev) <= limit:
        return train, dev
    rng = random.Random(seed)
    n_dev = round(limit * len(dev) / (len(train) + len(dev)))
    return rng.sample(train, limit - n_dev), rng.sample(dev, n_dev)


def run_judge(examples: Sequence[Example], spec: str, out: Path, quiet: bool, max_cost: float | None = None,
              concurrency: int = 8, local_chunk: int = DEFAULT_LOCAL_CHUNK) -> Path:
    """Judge ``examples`` with ``spec`` as an ordinary, resumable run in ``out`` (every example evaluated: none is
    held back for calibration; a local judge is handed them in chunks of ``local_chunk``, as ``groundjudge run``
    hands them); returns the run's folder."""
    unsplit = [ex.model_copy(update={"split": None}) for ex in examples]
    return execute_to_end(RunOptions(data=[str(write_examples(unsplit, out))], judges=[JudgeConfig.from_spec(spec)],
                                     out=str(out), resume=True, quiet=quiet, dev_fraction=0.0, max_cost=max_cost,
                                     concurrency=concurrency, local_chunk=local_chunk))


def teacher_pairs(records: Sequence[ResultRecord], mode: str, k: int, evidence: str) -> list[Pair]:
    """One pair per claim the teacher verified: (the claim's best context sentences, the claim), labelled by the
    teacher's verdict (``claims``) or scored by its P(supported) (``soft``). Abstentions give nothing."""
    pairs: list[Pair] = []
    indexes: dict[tuple[str, ...], EvidenceIndex] = {}
    for record in records:
        verdict, example = record.result.verdict, record.example
        if verdict.label == "abstain":
            continue
        if example.context not in indexes:
            indexes[example.context] = EvidenceIndex(context_sentences(example) or [example.context_text], evidence)
        index = indexes[example.context]
        for claim in verdict.claims:
            text = claim.claim.text.strip()
            if not text:
                continue
            support = None
            if mode == "soft":
                support = claim.score if claim.score is not None else float(claim.label == "supported")
                label = "supported" if support >= 0.5 else "unsupported"
            else:
                label = "supported" if claim.label == "supported" else "unsupported"
            pairs.append(Pair(premise=index.evidence(text, k), hypothesis=text, label=label,
                              source=f"teacher-{mode}", group=source_group(example), example_id=example.id,
                              support=support))
    return pairs


def teacher_facts(records: Sequence[ResultRecord], spec: str, mode: str, budget: float | None) -> dict[str, Any]:
    """What the teacher was and what it cost: calls, tokens, dollars, latency, answers labelled and left out."""
    calls = [c for r in records for c in r.result.calls]
    fresh = [c for c in calls if not c.cached]
    abstained = [r for r in records if r.result.verdict.label == "abstain"]
    reasons: dict[str, int] = {}
    for r in abstained:
        reason = (r.result.verdict.abstain_reason or "unknown").split(":")[0]
        reasons[reason] = reasons.get(reason, 0) + 1
    n = max(len(records), 1)
    return {"spec": spec, "mode": mode, "budget_usd": budget, "answers": len(records),
            "labelled": len(records) - len(abstained), "abstained": reasons,
            "calls": len(calls), "calls_made": len(fresh), "cache_hits": len(calls) - len(fresh),
            "new_cost_usd": round(sum(c.cost_usd for c in fresh), 6),
            "input_tokens": sum(c.input_tokens for c in calls), "output_tokens": sum(c.output_tokens for c in calls),
            "cost_usd": round(sum(c.cost_usd for c in calls), 6),
            "cost_usd_per_answer": round(sum(c.cost_usd for c in calls) / n, 6),
            "latency_s_per_answer": round(sum(r.result.latency_s or 0.0 for r in records) / n, 3)}


def _check_out(cfg: TrainConfig) -> None:
    out = Path(cfg.out)
    if out.is_dir() and any(out.iterdir()) and not cfg.resume:
        raise TrainError(f"{out} is not empty: pass --resume to continue that run, or another --out")


@dataclass
class TeacherPart:
    """What the teacher gave a training run: its pairs of the train and dev answers (uncapped), the answers it
    judged (after ``teacher_sample``) and its facts (calls, cache hits, cost)."""

    train_pairs: list[Pair]
    dev_pairs: list[Pair]
    train: list[Example]
    dev: list[Example]
    facts: dict[str, Any]


def seed_teacher_cache(run_dirs: Sequence[str]) -> int:
    """Copy the replies recorded in ``run_dirs`` into the call cache the teacher's run reads (the default one:
    ``$GROUNDJUDGE_CACHE_DIR``); the number copied (0 without run folders)."""
    if not run_dirs:
        return 0
    from groundjudge.llm import CallCache
    from groundjudge.llm.service_options import default_cache_dir
    from groundjudge.runs.records import find_records
    from groundjudge.runs.replay_cache import seed_cache

    for run_dir in run_dirs:
        if not find_records(run_dir).exists():
            raise TrainError(f"--teacher-cache {run_dir}: no records.jsonl there (give a run folder)")

    return seed_cache(run_dirs, CallCache(default_cache_dir()))


def teacher_part(cfg: TrainConfig, train: list[Example], dev: list[Example], report: Report) -> TeacherPart:
    """Have the teacher judge (a seeded sample of) the train and dev answers as a run in ``OUT/teacher`` and make
    its verdicts pairs. The run reads the call cache first: a call whose key (model, rendered prompt, schema,
    sampling) is cached is a hit, never a new call; new calls stop at ``teacher_budget`` dollars."""
    train, dev = sample_answers(train, dev, cfg.teacher_sample, cfg.seed)
    report(f"teacher {cfg.teacher!r} labels {len(train)} train and {len(dev)} dev answers")
    seeded = seed_teacher_cache(cfg.teacher_cache)
    run = run_judge(train + dev, cfg.teacher, Path(cfg.out) / TEACHER_DIR, cfg.quiet, cfg.teacher_budget,
                    cfg.teacher_concurrency)
    records = read_records(run / "records.jsonl").results
    dev_ids = {ex.id for ex in dev}
    k = cfg.evidence_k if cfg.evidence_k is not None else default_k("pairs")
    train_pairs = teacher_pairs([r for r in records if r.example.id not in dev_ids], cfg.teacher_mode, k,
                                cfg.evidence)
    dev_pairs = teacher_pairs([r for r in records if r.example.id in dev_ids], cfg.teacher_mode, k, cfg.evidence)
    if not train_pairs:
        raise TrainError(f"the teacher gave no claim verdicts to train on (see {Path(cfg.out) / TEACHER_DIR})")
    facts = teacher_facts(records, cfg.teacher, cfg.teacher_mode, cfg.teacher_budget)
    facts["dev_ids"] = sorted(dev_ids)
    if cfg.teacher_cache:
        facts["seeded_from"] = {"runs": [portable_path(p) for p in cfg.teacher_cache], "replies": seeded}
    report(f"teacher: {facts['labelled']} of {facts['answers']} answers labelled, {facts['calls_made']} calls made, "
           f"{facts['cache_hits']} from the call cache, ${facts['new_cost_usd']:.4f} spent")
    return TeacherPart(train_pairs, dev_pairs, train, dev, facts)


def prepare_from_teacher(cfg: TrainConfig, report: Report) -> Prepared:
    """Split the data by group, have the teacher judge the train and dev answers, and make its verdicts pairs."""
    examples, data_info = load_training_data(cfg.data, cfg.fmt, cfg.skip_invalid)
    train, dev, split = split_examples(examples, cfg.dev_fraction, cfg.seed, cfg.run_dev_fraction,
                                       labelled_only=False)
    report(f"split by group: {split['train']['groups']} train / {split['dev']['groups']} dev groups")
    part = teacher_part(cfg, train, dev, report)
    train, dev, facts = part.train, part.dev, part.facts
    train_pairs = cap_pairs(part.train_pairs, cfg.max_train, cfg.seed)
    dev_pairs = cap_pairs(part.dev_pairs, cfg.max_dev, cfg.seed + 1)
    report(f"pairs: train {len(train_pairs)}, dev {len(dev_pairs)}")
    split["train"].update(examples=len(train), pairs=len(train_pairs))
    split["dev"].update(examples=len(dev), pairs=len(dev_pairs))
    split["train_examples_hash"] = dataset_hash(train)
    meta = {"config": cfg.fingerprint(), "data": data_info, "split": split, "teacher": facts,
            "pairs": {"built": {f"teacher-{cfg.teacher_mode}": len(train_pairs)},
                      "train": pair_counts(train_pairs), "dev": pair_counts(dev_pairs)}}
    return save_prepared(cfg, Prepared(train_pairs, dev_pairs, meta), train, dev)


def student_agreement(cfg: TrainConfig, dev_ids: set[str], student: str | None = None,
                      local_chunk: int = DEFAULT_LOCAL_CHUNK) -> dict[str, Any] | None:
    """The student's verdicts on the dev answers (documents it never trained on) against the teacher's: share of
    equal labels, Cohen's kappa, ROC AUC of the student's score for the teacher's label, and its latency.

    ``student`` is the student's judge spec (default ``crossencoder:model=OUT``, as a user runs it), judging the
    answers in chunks of ``local_chunk`` as ``groundjudge run`` does (its latency each answer's share of a chunk)."""
    from sklearn.metrics import cohen_kappa_score, roc_auc_score

    out = Path(cfg.out)
    teacher = {r.example.id: r for r in read_records(out / TEACHER_DIR / "records.jsonl").results
               if r.example.id in dev_ids and r.result.verdict.label != "abstain"}
    if not teacher:
        return None
    run = run_judge([r.example for r in teacher.values()], student or f"crossencoder:model={out}", out / STUDENT_DIR,
                    cfg.quiet, local_chunk=local_chunk)
    student = {r.example.id: r for r in read_records(run / "records.jsonl").results
               if r.result.verdict.label != "abstain"}
    ids = sorted(set(teacher) & set(student))
    if not ids:
        return None
    t = [teacher[i].result.verdict.label for i in ids]
    s = [student[i].result.verdict.label for i in ids]
    scores = [student[i].result.verdict.score or 0.0 for i in ids]
    both = len(set(t)) == 2
    return {"n": len(ids), "agreement": round(sum(a == b for a, b in zip(t, s)) / len(ids), 4),
            "kappa": round(float(cohen_kappa_score(t, s)), 4) if both or len(set(s)) == 2 else None,
            "auc_vs_teacher": round(float(roc_auc_score([x == "grounded" for x in t], scores)), 4) if both else None,
            "teacher_grounded": t.count("grounded"), "student_grounded": s.count("grounded"),
            "student_latency_s_per_answer": round(sum(student[i].result.latency_s or 0.0 for i in ids) / len(ids), 4)}


def distill(cfg: TrainConfig, report: Report = print) -> dict[str, Any] | None:
    """Label with the teacher, train the student, measure it against the teacher on held-out documents; the card
    when finished, None when stopped by ``stop_after``."""
    out = Path(cfg.out)
    if cfg.resume and (out / CARD_FILE).exists():
        report(f"{out} is already trained")
        return json.loads((out / CARD_FILE).read_text(encoding="utf-8"))
    prepared = resumed(cfg)
    if prepared is None:
        _check_out(cfg)
        out.mkdir(parents=True, exist_ok=True)
        prepared = prepare_from_teacher(cfg, report)
    session = Session(cfg, prepared, report)
    if run_loop(session) == "stopped":
        report(f"stopped at step {session.progress.step} of {session.total_steps}; continue with --resume")
        return None
    return with_agreement(cfg, finalize(session, prepared))


def with_agreement(cfg: TrainConfig, card: dict[str, Any]) -> dict[str, Any]:
    """The card with the student's agreement with the teacher on the dev answers added (and written again)."""
    out = Path(cfg.out)
    card["teacher"]["student_vs_teacher_on_dev"] = student_agreement(cfg, set(card["teacher"]["dev_ids"]))
    (out / CARD_FILE).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    (out / "README.md").write_text(render_readme(card), encoding="utf-8")
    return card
