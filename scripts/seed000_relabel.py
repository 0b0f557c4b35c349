"""Seed 000's labelling protocol (evidence-grounded evaluation, "Truth Layer") replayed with groundjudge's NLI engine.

The seed paper labels each short answer of three models (Phi-3-mini, Llama-3.1-8B,
GPT-4o-mini) supported / contradicted / unverifiable: a declarative hypothesis built
from (question, answer) is scored by an NLI model against cached Wikipedia
snippets, the seed rule on the max entailment and contradiction decides (``tau``),
and a span-match backup marks short answers found in the evidence as supported.
This script reads the paper's public artefacts (results, evidence cache, pairwise
McNemar CSV), finds each answer's snippets in the cache, relabels every answer with
groundjudge's engine (``load_nli_model``, ``claim_label``, ``span_backup``), and puts
their labels, ours and the paper's printed figures side by side: label
distributions, exact / loose / soft accuracy with bootstrap CIs, exact McNemar tests
between models, and agreement (3x3 confusion, Cohen's kappa) with the disagreeing
answers by id.

The artefacts carry no licence: they are read from their folder and never copied.
The JSON / Markdown written here hold only numbers and ids (question id + model),
never question, answer or evidence text.

    python scripts/seed000_relabel.py --model PATH_OR_HUB_NAME [--data DIR] [--tau 0.6] \\
        [--out results/seed000.json] [--md results/seed000.md]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from groundjudge.judges.nli import claim_label, span_backup
from groundjudge.judges.span import find_span
from groundjudge.local_nli.nli_model import (
    CONTRADICTION,
    ENTAILMENT,
    NLIModel,
    ScoreStats,
    load_nli_model,
)
from groundjudge.local_nli.settings import ModelSettings
from groundjudge.metrics import bootstrap_ci, mcnemar_p
from groundjudge.report.tables import TextTable, markdown_document
from groundjudge.text import normalize
from groundjudge.paths import portable_model, portable_path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "datasets" / "seed_truth_layer"

PAPER = "Shah, Evidence-Grounded Evaluation: Toward Infrastructure for Truthful AI (seed 000, October 2025)"

LABELS = ("supported", "contradicted", "unverifiable")
MODELS = ("phi3", "llama", "gpt")
"""File suffixes of results_<model>.jsonl, in the order of the published pairwise CSV (A before B)."""

DEFAULT_TAU = 0.6
"""The seed's labels imply a tau in (0.515, 0.622]: the largest winning score among its unverifiable NLI
verdicts is 0.515 and the smallest among its supported / contradicted ones 0.622 (``implied_tau`` recomputes
this from the results). 0.6 lies in that interval."""

SHORT_ANSWER_WORDS = 3
"""Answers of at most this many words get the span-match backup: every released verdict with the backup's
signature (entail 0.7, contradict 0.0) is on an answer of at most 3 words."""

SPAN_SIGNATURE = (0.7, 0.0)
"""(max_entail, max_contradict) that the seed writes for a span-match verdict instead of NLI scores."""

KEY_FORMAT = "sha1('{question}::{answer}::k={k}')"
"""How the evidence cache is keyed (found by trying variants: only this one hits)."""

KEY_FORMS: tuple[tuple[str, int], ...] = (("answer", 3), ("answer", 1), ("gold_answer", 3), ("gold_answer", 1))
"""(answer field, k) variants tried in order; a hit counts only if its snippet titles equal the record's
``retrieved_titles``."""

HYPOTHESIS_FORM = "'<question> <answer>'"
"""The hypothesis: the question followed by the answer, the short-answer claim form of groundjudge
(``groundjudge.local_nli.pairs.claims_of``), used for every answer as one claim."""


@dataclass(frozen=True)
class PaperFigure:
    """A model's figures as printed in the paper, and where."""

    model: str
    n: int
    exact: float
    soft: float
    source: str


PAPER_FIGURES: dict[str, PaperFigure] = {
    "phi3": PaperFigure("Phi-3-mini", 300, 0.69, 0.48, "§3.1 (n: §2.1, extended run of 300)"),
    "llama": PaperFigure("LLaMA-3.1", 120, 0.85, 0.89, "§3.1 (n: §2.1, shared set of 120)"),
    "gpt": PaperFigure("GPT-4o-mini", 120, 0.85, 0.93, "§3.1 (n: §2.1 says 300, the released file has 120)"),
}
"""Exact and soft accuracy per model, §3.1. The paper's exact match is verbatim string equality (its figures are
reproduced by ``exact_verbatim``), not the normalised match of ``exact``."""

PAPER_MCNEMAR: dict[tuple[str, str, str], str] = {
    ("phi3", "llama", "soft"): "p < 0.001 (§3.2)",
    ("phi3", "gpt", "soft"): "p < 0.001 (§3.2)",
    ("llama", "gpt", "soft"): "p < 0.001 (§3.2)",
    ("llama", "gpt", "exact"): "p = 1.000 (§3.2)",
}
"""McNemar results stated in the text (§3.2), keyed (model A, model B, metric) as in the published CSV."""

PAIR_METRICS = ("exact", "exact_verbatim", "soft_theirs", "soft_ours")
CSV_METRIC = {"exact_verbatim": "exact", "soft_theirs": "soft"}
"""Our pairwise metrics that the published pairwise_mcnemar.csv also reports (under its name)."""


@dataclass(frozen=True)
class Answer:
    """One model's answer to one question, with the seed's verdict."""

    model: str
    model_name: str
    qid: int
    question: str
    answer: str
    gold: str
    label: str
    max_entail: float
    max_contradict: float
    titles: tuple[str, ...]
    gold_in_evidence: bool


@dataclass(frozen=True)
class Lookup:
    """Where an answer's evidence came from: status key / titles / empty / missing, the key form, the snippets."""

    status: str
    form: str
    snippets: tuple[str, ...] = ()

    @property
    def found(self) -> bool:
        """Whether the evidence the seed used is known (possibly empty)."""
        return self.status != "missing"


@dataclass(frozen=True)
class Verdict:
    """Our label for an answer, its max NLI scores, and whether the span backup decided it."""

    label: str
    max_entail: float
    max_contradict: float
    span: bool = False


@dataclass(frozen=True)
class Row:
    """An answer with its evidence lookup and our verdict."""

    answer: Answer
    lookup: Lookup
    verdict: Verdict

    def hits(self) -> dict[str, bool]:
        """Per-answer correctness under each metric."""
        a = self.answer
        return {"exact": exact_match(a.answer, a.gold), "exact_verbatim": a.answer == a.gold,
                "loose": loose_match(a.answer, a.gold), "soft_theirs": a.label == "supported",
                "soft_ours": self.verdict.label == "supported"}


@dataclass
class Settings:
    """How the relabelling ran."""

    model: str
    tau: float
    short_answer_words: int = SHORT_ANSWER_WORDS
    n_boot: int = 2000
    seed: int = 0
    batch_size: int = 16
    max_length: int | None = None
    stats: ScoreStats = field(default_factory=ScoreStats)


# ---------------------------------------------------------------- reading


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file (blank lines skipped)."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def to_answer(model: str, row: dict[str, Any]) -> Answer:
    """One results_<model>.jsonl row as an Answer."""
    return Answer(model=model, model_name=str(row.get("model") or model), qid=int(row["id"]),
                  question=row["question"], answer=row.get("answer") or "", gold=row["gold_answer"],
                  label=str(row.get("label") or "").lower(), max_entail=float(row.get("max_entail") or 0.0),
                  max_contradict=float(row.get("max_contradict") or 0.0),
                  titles=tuple(row.get("retrieved_titles") or ()),
                  gold_in_evidence=bool(row.get("supported_gold_in_evidence")))


def load_answers(folder: Path, models: Sequence[str]) -> dict[str, list[Answer]]:
    """Per model, its answers from results_<model>.jsonl."""
    return {m: [to_answer(m, row) for row in read_jsonl(folder / f"results_{m}.jsonl")] for m in models}


def load_questions(folder: Path) -> dict[int, dict[str, Any]]:
    """questions.jsonl by question id."""
    return {int(row["id"]): row for row in read_jsonl(folder / "questions.jsonl")}


def check_questions(answers: dict[str, list[Answer]], questions: dict[int, dict[str, Any]]) -> dict[str, int]:
    """Per model, how many answers disagree with questions.jsonl on question or gold answer (0 expected)."""
    def differs(a: Answer) -> bool:
        q = questions.get(a.qid)
        return q is None or q["question"] != a.question or q["gold_answer"] != a.gold
    return {m: sum(differs(a) for a in rows) for m, rows in answers.items()}


def load_published_pairs(path: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    """pairwise_mcnemar.csv keyed (model A name, model B name, metric): n, discordant counts, p."""
    if not path.is_file():
        return {}
    with path.open(encoding="utf-8", newline="") as handle:
        return {(r["model_A"], r["model_B"], r["metric"]): {
            "n_shared": int(r["n_shared"]), "a_wrong_b_right": int(r["A_wrong_B_right"]),
            "a_right_b_wrong": int(r["A_right_B_wrong"]), "p": float(r["p_value"])} for r in csv.DictReader(handle)}


# ---------------------------------------------------------------- evidence


def cache_key(question: str, answer: str, k: int) -> str:
    """The evidence cache key of a (question, answer) retrieved with top-k."""
    return hashlib.sha1(f"{question}::{answer}::k={k}".encode()).hexdigest()


def snippet_titles(entry: Sequence[dict[str, Any]]) -> tuple[str, ...]:
    """The Wikipedia titles of a cache entry, in order."""
    return tuple(str(s.get("title", "")) for s in entry)


def snippet_texts(entry: Sequence[dict[str, Any]]) -> tuple[str, ...]:
    """The non-empty snippet texts of a cache entry, in order."""
    return tuple(s["text"] for s in entry if s.get("text"))


def titles_index(cache: dict[str, list[dict[str, Any]]]) -> dict[tuple[str, ...], list[str]]:
    """Cache keys by the titles of their snippets."""
    index: dict[tuple[str, ...], list[str]] = {}
    for key, entry in cache.items():
        index.setdefault(snippet_titles(entry), []).append(key)
    return index


def find_evidence(answer: Answer, cache: dict[str, list[dict[str, Any]]],
                  by_titles: dict[tuple[str, ...], list[str]]) -> Lookup:
    """The snippets the seed used for an answer.

    First a cache key of ``KEY_FORMS`` whose titles equal the record's; else, if the
    record lists no titles, empty evidence; else the one cache entry with exactly the
    record's titles; else missing (``stale_key`` when a key hit but with other titles).
    """
    stale = False
    for name, k in KEY_FORMS:
        entry = cache.get(cache_key(answer.question, answer.answer if name == "answer" else answer.gold, k))
        if entry is None:
            continue
        if snippet_titles(entry) == answer.titles:
            return Lookup("key", f"{name}::k={k}", snippet_texts(entry))
        stale = True
    if not answer.titles:
        return Lookup("empty", "no_titles")
    keys = by_titles.get(answer.titles, [])
    if len(keys) == 1:
        return Lookup("titles", "titles", snippet_texts(cache[keys[0]]))
    return Lookup("missing", "stale_key" if stale else "no_key")


# ---------------------------------------------------------------- relabelling


def hypothesis(question: str, answer: str) -> str:
    """The declarative claim checked against the evidence: question followed by answer (``HYPOTHESIS_FORM``)."""
    return f"{question.strip()} {answer.strip()}"


def implied_tau(answers: Iterable[Answer]) -> dict[str, float | None]:
    """The interval (low, high] of tau consistent with the seed's NLI verdicts (span-match verdicts left out).

    ``low``: the largest winning score of an unverifiable verdict; ``high``: the smallest
    winning score of a supported or contradicted one.
    """
    nli = [a for a in answers if (a.max_entail, a.max_contradict) != SPAN_SIGNATURE]
    decided = [max(a.max_entail, a.max_contradict) for a in nli if a.label in ("supported", "contradicted")]
    undecided = [max(a.max_entail, a.max_contradict) for a in nli if a.label == "unverifiable"]
    return {"low": max(undecided, default=None), "high": min(decided, default=None)}


def pair_rows(rows: Sequence[tuple[Answer, Lookup]]) -> tuple[list[str], list[str], list[int]]:
    """All (snippet, hypothesis) pairs to score, and the index of the answer each belongs to."""
    premises, hypotheses, owners = [], [], []
    for index, (answer, lookup) in enumerate(rows):
        if not answer.answer.strip():
            continue
        claim = hypothesis(answer.question, answer.answer)
        for text in lookup.snippets:
            premises.append(text)
            hypotheses.append(claim)
            owners.append(index)
    return premises, hypotheses, owners


def decide(answer: Answer, snippets: tuple[str, ...], probs: np.ndarray, settings: Settings) -> Verdict:
    """One answer's verdict: the seed rule on its max scores, then the span backup for short answers."""
    entail = float(probs[:, ENTAILMENT].max()) if len(probs) else 0.0
    contradict = float(probs[:, CONTRADICTION].max()) if len(probs) else 0.0
    label = claim_label(entail, contradict, settings.tau)
    short = len(answer.answer.split()) <= settings.short_answer_words
    if label != "supported" and short and span_backup(answer.answer, snippets) is not None:
        return Verdict("supported", entail, contradict, span=True)
    return Verdict(label, entail, contradict)


def relabel(rows: Sequence[tuple[Answer, Lookup]], engine: NLIModel, settings: Settings) -> list[Verdict]:
    """Our verdict for every answer; all pairs scored in one batched call. No evidence: unverifiable."""
    premises, hypotheses, owners = pair_rows(rows)
    probs = engine.score_pairs(premises, hypotheses, stats=settings.stats) if premises else np.zeros((0, 3))
    owner = np.asarray(owners, dtype=int)
    return [decide(answer, lookup.snippets, probs[owner == i], settings) for i, (answer, lookup) in enumerate(rows)]


# ---------------------------------------------------------------- metrics


def exact_match(answer: str, gold: str) -> bool:
    """Normalised answer equals normalised gold."""
    return normalize(answer) == normalize(gold)


def loose_match(answer: str, gold: str) -> bool:
    """Normalised gold inside the normalised answer or the other way round (neither empty)."""
    a, g = normalize(answer), normalize(gold)
    return bool(a) and bool(g) and (g in a or a in g)


def label_counts(labels: Iterable[str]) -> dict[str, int]:
    """Count per label, in LABELS order (anything else under its own name)."""
    counts = Counter(labels)
    return {**{name: counts.pop(name, 0) for name in LABELS}, **dict(counts)}


def rate(flags: Sequence[bool]) -> float | None:
    """Share of true flags (None when empty)."""
    return float(np.mean(flags)) if len(flags) else None


def soft_ci(supported: Sequence[bool], n_boot: int, seed: int) -> list[float] | None:
    """Percentile bootstrap 95% CI of the supported share (groundjudge's bootstrap, all gold 'grounded')."""
    if not len(supported):
        return None
    predicted = ["grounded" if s else "ungrounded" for s in supported]
    return bootstrap_ci(["grounded"] * len(predicted), predicted, ("accuracy",), n_boot=n_boot, seed=seed)["accuracy"]


def agreement(rows: Sequence[Row]) -> dict[str, Any]:
    """Their labels vs ours on answers whose evidence was found: confusion (rows theirs), agreement, kappa."""
    from sklearn.metrics import cohen_kappa_score, confusion_matrix

    found = [r for r in rows if r.lookup.found]
    theirs = [r.answer.label for r in found]
    ours = [r.verdict.label for r in found]
    if not found:
        return {"n": 0, "agree": 0, "rate": None, "kappa": None, "confusion": {}}
    matrix = confusion_matrix(theirs, ours, labels=list(LABELS))
    kappa = float(cohen_kappa_score(theirs, ours, labels=list(LABELS))) if len(set(theirs) | set(ours)) > 1 else None
    agree = int(np.trace(matrix))
    return {"n": len(found), "agree": agree, "rate": agree / len(found),
            "kappa": None if kappa is None or np.isnan(kappa) else kappa,
            "confusion": {t: {o: int(matrix[i, j]) for j, o in enumerate(LABELS)} for i, t in enumerate(LABELS)}}


def disagreements(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Answers (with evidence found) labelled differently: ids, both labels and scores, no text."""
    return [{"model": r.answer.model, "id": r.answer.qid, "theirs": r.answer.label, "ours": r.verdict.label,
             "their_max_entail": r.answer.max_entail, "their_max_contradict": r.answer.max_contradict,
             "our_max_entail": round(r.verdict.max_entail, 4), "our_max_contradict": round(r.verdict.max_contradict, 4),
             "our_span_backup": r.verdict.span, "evidence": r.lookup.form}
            for r in rows if r.lookup.found and r.answer.label != r.verdict.label]


def evidence_summary(rows: Sequence[Row]) -> dict[str, Any]:
    """How the answers' evidence was found: counts by status and key form, and the ids left without."""
    return {"n": len(rows), "found": sum(r.lookup.found for r in rows),
            "by_status": dict(Counter(r.lookup.status for r in rows)),
            "by_form": dict(Counter(r.lookup.form for r in rows)),
            "missing_ids": [r.answer.qid for r in rows if not r.lookup.found]}


def recall_ours(rows: Sequence[Row]) -> float | None:
    """Share of answers whose gold answer occurs in their found evidence (normalised span match)."""
    return rate([any(find_span(r.answer.gold, s, "normalized") for s in r.lookup.snippets) for r in rows])


def model_summary(model: str, rows: Sequence[Row], settings: Settings) -> dict[str, Any]:
    """Every per-model number: evidence, label distributions, accuracies, CIs, agreement, paper figures."""
    hits = [r.hits() for r in rows]
    theirs_soft = [h["soft_theirs"] for h in hits]
    ours_soft = [h["soft_ours"] for h in hits]
    paper = PAPER_FIGURES.get(model)
    return {
        "model": model, "model_name": rows[0].answer.model_name if rows else model, "n": len(rows),
        "evidence": evidence_summary(rows),
        "exact_accuracy": rate([h["exact"] for h in hits]),
        "exact_verbatim_accuracy": rate([h["exact_verbatim"] for h in hits]),
        "loose_accuracy": rate([h["loose"] for h in hits]),
        "theirs": {"labels": label_counts(r.answer.label for r in rows), "soft_accuracy": rate(theirs_soft),
                   "soft_ci95": soft_ci(theirs_soft, settings.n_boot, settings.seed),
                   "recall_gold_in_evidence": rate([r.answer.gold_in_evidence for r in rows]),
                   "span_signature": sum((r.answer.max_entail, r.answer.max_contradict) == SPAN_SIGNATURE
                                         for r in rows)},
        "ours": {"labels": label_counts(r.verdict.label for r in rows), "soft_accuracy": rate(ours_soft),
                 "soft_ci95": soft_ci(ours_soft, settings.n_boot, settings.seed),
                 "recall_gold_in_evidence": recall_ours(rows), "span_backup": sum(r.verdict.span for r in rows)},
        "paper": None if paper is None else {"model": paper.model, "n": paper.n, "exact_accuracy": paper.exact,
                                             "soft_accuracy": paper.soft, "source": paper.source},
        "agreement": agreement(rows),
        "disagreements": disagreements(rows),
    }


def mcnemar_pair(hits_a: dict[int, dict[str, bool]], hits_b: dict[int, dict[str, bool]], metric: str) -> dict[str, Any]:
    """Exact McNemar test of two models on one metric over their shared question ids."""
    shared = sorted(set(hits_a) & set(hits_b))
    a = [hits_a[q][metric] for q in shared]
    b = [hits_b[q][metric] for q in shared]
    return {"n_shared": len(shared), "a_wrong_b_right": sum((not x) and y for x, y in zip(a, b)),
            "a_right_b_wrong": sum(x and not y for x, y in zip(a, b)), "p": mcnemar_p(a, b) if shared else None}


def pairwise(by_model: dict[str, list[Row]],
             published: dict[tuple[str, str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    """Every pair of models on every metric of PAIR_METRICS, beside the published CSV row and the paper's text."""
    hits = {m: {r.answer.qid: r.hits() for r in rows} for m, rows in by_model.items()}
    names = {m: rows[0].answer.model_name for m, rows in by_model.items() if rows}
    out = []
    for a, b in combinations(by_model, 2):
        for metric in PAIR_METRICS:
            csv_metric = CSV_METRIC.get(metric)
            row = {"model_a": a, "model_b": b, "metric": metric, **mcnemar_pair(hits[a], hits[b], metric)}
            row["published"] = published.get((names.get(a), names.get(b), csv_metric)) if csv_metric else None
            row["paper_text"] = PAPER_MCNEMAR.get((a, b, "soft" if metric.startswith("soft") else "exact"))
            out.append(row)
    return out


# ---------------------------------------------------------------- the run


def build_rows(answers: dict[str, list[Answer]], cache: dict[str, list[dict[str, Any]]], engine: NLIModel,
               settings: Settings) -> dict[str, list[Row]]:
    """Per model: every answer with its evidence lookup and our verdict."""
    by_titles = titles_index(cache)
    flat = [(a, find_evidence(a, cache, by_titles)) for rows in answers.values() for a in rows]
    verdicts = iter(relabel(flat, engine, settings))
    out: dict[str, list[Row]] = {m: [] for m in answers}
    for answer, lookup in flat:
        out[answer.model].append(Row(answer, lookup, next(verdicts)))
    return out


def run(folder: Path, settings: Settings, models: Sequence[str] = MODELS) -> dict[str, Any]:
    """Read the artefacts, relabel every answer, and return every number (JSON-ready)."""
    answers = load_answers(folder, models)
    cache = json.loads((folder / "evidence_cache.json").read_text(encoding="utf-8"))
    engine = load_nli_model(settings.model, ModelSettings(batch_size=settings.batch_size, dtype="float32"),
                            max_length=settings.max_length)   # float32, as the committed figures were made
    by_model = build_rows(answers, cache, engine, settings)
    questions = load_questions(folder) if (folder / "questions.jsonl").is_file() else {}
    all_answers = [a for rows in answers.values() for a in rows]
    return {
        "paper": PAPER, "data": portable_path(folder),
        "settings": {"model": portable_model(settings.model), "tau": settings.tau, "tau_implied": implied_tau(all_answers),
                     "short_answer_words": settings.short_answer_words, "hypothesis": HYPOTHESIS_FORM,
                     "n_boot": settings.n_boot, "seed": settings.seed, "key_format": KEY_FORMAT,
                     "key_forms_tried": [f"{n}::k={k}" for n, k in KEY_FORMS]},
        "engine": {"pairs_scored": settings.stats.pairs_scored, "pairs_truncated": settings.stats.pairs_truncated,
                   "claims_truncated": settings.stats.claims_truncated, "max_length": engine.max_length},
        "cache_entries": len(cache),
        "questions_mismatch": check_questions(answers, questions) if questions else None,
        "models": {m: model_summary(m, rows, settings) for m, rows in by_model.items()},
        "pairwise": pairwise(by_model, load_published_pairs(folder / "pairwise_mcnemar.csv")),
    }


# ---------------------------------------------------------------- tables


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def _ci(ci: Sequence[float] | None) -> str:
    return "-" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def _labels(counts: dict[str, int]) -> list[str]:
    return [str(counts.get(name, 0)) for name in LABELS]


def evidence_table(result: dict[str, Any]) -> TextTable:
    """How many answers found their evidence, by how."""
    forms = sorted({f for s in result["models"].values() for f in s["evidence"]["by_form"]})
    rows = [[m, str(s["n"]), str(s["evidence"]["found"])] + [str(s["evidence"]["by_form"].get(f, 0)) for f in forms]
            for m, s in result["models"].items()]
    note = (f"Cache key {KEY_FORMAT}; a key counts when its snippet titles equal the record's retrieved titles. "
            "titles: the one cache entry with exactly those titles; no_titles: the record retrieved nothing; "
            "no_key / stale_key: missing (scored unverifiable, left out of the agreement).")
    return TextTable("Evidence found per model (by key form)", ["model", "n", "found"] + forms, rows, note)


def metrics_table(result: dict[str, Any]) -> TextTable:
    """Per model: the paper's figures, theirs recomputed from their labels, ours."""
    headers = ["model", "source", "n", "supported", "contradicted", "unverifiable", "exact", "exact (verbatim)",
               "loose", "soft", "soft 95% CI"]
    rows = []
    for m, s in result["models"].items():
        p = s["paper"]
        if p is not None:
            rows.append([m, f"paper {p['source'].split()[0]}", str(p["n"]), "-", "-", "-", "-",
                         _num(p["exact_accuracy"], 2), "-", _num(p["soft_accuracy"], 2), "-"])
        accuracies = [_num(s["exact_accuracy"]), _num(s["exact_verbatim_accuracy"]), _num(s["loose_accuracy"])]
        for source in ("theirs", "ours"):
            part = s[source]
            rows.append([m, f"{source} (recomputed)" if source == "theirs" else "ours", str(s["n"]),
                         *_labels(part["labels"]), *accuracies, _num(part["soft_accuracy"]), _ci(part["soft_ci95"])])
    note = ("exact: normalised equality (groundjudge.text.normalize); exact (verbatim): raw string equality, the "
            "paper's exact match; loose: normalised containment either way; soft: label == supported. Exact and "
            "loose depend on the answers only, so theirs and ours share them. Paper rows: §3.1 figures "
            "(n from §2.1).")
    return TextTable(f"Labels and accuracy (tau={result['settings']['tau']})", headers, rows, note)


def pairwise_table(result: dict[str, Any]) -> TextTable:
    """Exact McNemar tests between models, beside the published CSV and the paper's text."""
    rows = []
    for r in result["pairwise"]:
        pub = r["published"]
        published = "-" if pub is None else f"{pub['a_wrong_b_right']}/{pub['a_right_b_wrong']} p={pub['p']:.4g}"
        rows.append([f"{r['model_a']} vs {r['model_b']}", r["metric"], str(r["n_shared"]),
                     f"{r['a_wrong_b_right']}/{r['a_right_b_wrong']}", _p(r["p"]), published,
                     r["paper_text"] or "-"])
    note = "A wrong & B right / A right & B wrong over the shared question ids; published: pairwise_mcnemar.csv."
    return TextTable("Pairwise exact McNemar", ["pair", "metric", "n", "discordant", "p", "published (CSV)",
                                                "paper (§3.2)"], rows, note)


def agreement_table(result: dict[str, Any]) -> TextTable:
    """Their labels (rows) against ours (columns) per model, with agreement and Cohen's kappa."""
    rows = []
    for m, s in result["models"].items():
        agree = s["agreement"]
        for theirs in LABELS:
            counts = agree["confusion"].get(theirs, {})
            rows.append([m, theirs, *(str(counts.get(o, 0)) for o in LABELS), str(agree["n"]),
                         _num(agree["rate"]), _num(agree["kappa"])])
    return TextTable("Agreement: theirs (rows) vs ours (columns), evidence found",
                     ["model", "theirs", *(f"ours {o}" for o in LABELS), "n", "agreement", "kappa"], rows,
                     "Disagreeing answers by id (model, question id) are in the JSON, with both labels and scores.")


def all_tables(result: dict[str, Any]) -> list[TextTable]:
    """Every table, in print order."""
    return [evidence_table(result), metrics_table(result), pairwise_table(result), agreement_table(result)]


def rich_table(data: TextTable) -> Table:
    """A table for the terminal: paper rows dimmed."""
    return data.to_rich(left_columns=2, muted=lambda row: row[1].startswith("paper"))


def markdown(result: dict[str, Any], tables: Sequence[TextTable]) -> str:
    """The tables as one Markdown document (numbers and ids only)."""
    s = result["settings"]
    preamble = [f"NLI model `{s['model']}`, tau {s['tau']} (the seed's labels imply ({_num(s['tau_implied']['low'])}, "
                f"{_num(s['tau_implied']['high'])}]), hypothesis {s['hypothesis']}, span backup for answers of at most "
                f"{s['short_answer_words']} words.", ""]
    return markdown_document(f"Seed 000 relabelled with groundjudge: {PAPER}", preamble, tables)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="NLI model: local path or hub name")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help=f"the seed's artefacts (default {DEFAULT_DATA})")
    parser.add_argument("--tau", type=float, default=DEFAULT_TAU, help=f"label threshold (default {DEFAULT_TAU})")
    parser.add_argument("--short-answer-words", type=int, default=SHORT_ANSWER_WORDS,
                        help=f"span backup for answers of at most this many words (default {SHORT_ANSWER_WORDS})")
    parser.add_argument("--models", nargs="+", default=list(MODELS), help="results_<model>.jsonl suffixes")
    parser.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-length", type=int, default=None, help="longest pair in tokens (default: the model's)")
    parser.add_argument("--out", type=Path, metavar="FILE.json", help="write every number as JSON")
    parser.add_argument("--md", type=Path, metavar="FILE.md", help="also write the tables as Markdown")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Relabel, print the tables, write JSON / Markdown when asked."""
    args = parse_args(argv)
    settings = Settings(model=args.model, tau=args.tau, short_answer_words=args.short_answer_words,
                        n_boot=args.n_boot, seed=args.seed, batch_size=args.batch_size, max_length=args.max_length)
    result = run(args.data, settings, args.models)
    tables = all_tables(result)
    console = Console()
    implied = result["settings"]["tau_implied"]
    engine = result["engine"]
    console.print(f"[bold]{PAPER}[/bold]\nNLI model {args.model}, tau {args.tau} (implied by their labels: "
                  f"({_num(implied['low'])}, {_num(implied['high'])}]); {engine['pairs_scored']} pairs scored, "
                  f"{engine['pairs_truncated']} truncated")
    for data in tables:
        console.print(rich_table(data))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    if args.md:
        args.md.parent.mkdir(parents=True, exist_ok=True)
        args.md.write_text(markdown(result, tables), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
