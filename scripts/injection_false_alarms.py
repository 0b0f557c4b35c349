"""How often the injection detectors fire on plain data, and how often they find the battery's attacks.

Every example of every development set of ``scripts/datasets.sh`` (read with groundjudge's loader, each set in its
own public format) is scanned with :func:`groundjudge.security.scan`; none of them holds an attack, so every
answer, question or document flagged is a false alarm (the flagged spans are written out, shortened, to check
that). Two detectors: ``rules`` (the default) and ``rules+embedding`` (the embedding detector reads answers and
questions; documents are read by the rules only, as ``scan`` does). Rates come with Wilson 95% intervals.

Answers are counted per example; documents and questions per distinct text (ContractNLI's 1,037 examples share
61 contracts). The embedding detector's threshold is fitted here on the dev part of each set (group-hash split,
30%, as ``groundjudge run`` makes it; legal_qa's own dev split): the lowest similarity at which at most
``--max-dev-rate`` (0.1%) of the dev answers are flagged by the embedding alone. The constant in
``groundjudge/security/embedding.py`` is what this printed; its false alarms are also counted on the test part
alone, which the fit never saw.

Detection: ``--attack-sample`` ungrounded answers per set get one attack of every style (the battery's phrasings,
then the held-out ones: ``groundjudge.security.attacks``), and one of every family of the second, frozen held-out
set (``results/security/heldout_phrasings.json``: self-vouching claims as well as the styles); an attack is found
when a finding overlaps its span.

    python scripts/injection_false_alarms.py [--out results/security/false_alarms.json] [--sets a,b]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from scipy.stats import binomtest  # noqa: E402

from groundjudge.formats.load import assign_missing_splits, load_examples  # noqa: E402
from groundjudge.security import detect, scan  # noqa: E402
from groundjudge.security.attacks import (HELD_OUT, TEMPLATES, PhrasingSet, attack, by_style,  # noqa: E402
                                          load_phrasings)
from groundjudge.types import Example, InjectionFinding  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HELD_OUT_FILE = ROOT / "results" / "security" / "heldout_phrasings.json"
"""The second held-out set (issue 36): written before the self-vouching rules, frozen (sha256 in the README)."""
DEV_FRACTION = 0.3
SHOWN = 8
"""Flagged spans written out per set and detector."""


def dataset_files() -> dict[str, list[str]]:
    """The development sets of ``scripts/datasets.sh``: name -> files, as that script names them (relative)."""
    out = subprocess.run(["bash", "-c", 'source scripts/datasets.sh; for k in "${!DATA[@]}"; do '
                                        'printf "%s\\t%s\\n" "$k" "${DATA[$k]}"; done'],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    sets = {}
    for line in out.stdout.splitlines():
        name, files = line.split("\t", 1)
        sets[name] = files.split()
    return dict(sorted(sets.items()))


def wilson(k: int, n: int) -> list[float] | None:
    """Wilson 95% interval of k/n (None when n is 0)."""
    if n == 0:
        return None
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return [round(ci.low, 5), round(ci.high, 5)]


def rate(k: int, n: int) -> dict:
    """k of n, the rate and its Wilson interval."""
    return {"flagged": k, "n": n, "rate": round(k / n, 5) if n else None, "ci95": wilson(k, n)}


def short(text: str, finding: InjectionFinding, width: int = 160) -> str:
    """The flagged span with a little context, cut to ``width`` characters."""
    lo, hi = max(0, finding.start - 40), min(len(text), finding.end + 40)
    span = text[lo:hi].replace("\n", " ")
    return (span[:width] + "...") if len(span) > width else span


def shown_finding(example: Example, text: str, finding: InjectionFinding) -> dict:
    """A finding as written out: where it is, what found it, the span shortened."""
    return {"id": example.id, "field": finding.field, "doc_index": finding.doc_index, "style": finding.style,
            "detector": finding.detector, "span": short(text, finding)}


def embedding_maxima(texts: list[str]) -> list[float]:
    """Each text's highest segment similarity to the prototypes (0 for a text with no segment)."""
    from groundjudge.security import embedding

    return [max((s for _, _, s in segs), default=0.0) for segs in embedding.scored_segments(texts)]


def fit_threshold(dev_maxima: list[float], max_rate: float) -> float:
    """The lowest threshold (grid of 0.01) at which at most ``max_rate`` of the dev answers reach it."""
    n = len(dev_maxima)
    for step in range(30, 100):
        t = step / 100
        if sum(m >= t for m in dev_maxima) <= max_rate * n:
            return t
    return 1.0


def scan_set(name: str, examples: list[Example], use_embedding: bool) -> dict:
    """False alarms of one set: answers, documents, questions, for rules and (optionally) rules+embedding."""
    answers = [ex.answer for ex in examples]
    rules_answer = [detect(a, "answer") for a in answers]
    docs: dict[str, tuple[Example, int]] = {}
    questions: dict[str, Example] = {}
    for ex in examples:
        for index, doc in enumerate(ex.context):
            docs.setdefault(doc, (ex, index))
        if ex.question:
            questions.setdefault(ex.question, ex)
    rules_docs = {doc: detect(doc, "context", index) for doc, (_, index) in docs.items()}
    rules_q = {q: detect(q, "question") for q in questions}
    row: dict = {"n_examples": len(examples), "n_answers": len(answers), "n_documents": len(docs),
                 "n_questions": len(questions)}
    shown = []
    for ex, found in zip(examples, rules_answer):
        shown += [shown_finding(ex, ex.answer, f) for f in found]
    for doc, (ex, _) in docs.items():
        shown += [shown_finding(ex, doc, f) for f in rules_docs[doc]]
    for q, ex in questions.items():
        shown += [shown_finding(ex, q, f) for f in rules_q[q]]
    flagged_docs = sum(bool(f) for f in rules_docs.values())
    row["rules"] = {
        "answers": rate(sum(bool(f) for f in rules_answer), len(answers)),
        "documents": rate(flagged_docs, len(docs)),
        "questions": rate(sum(bool(f) for f in rules_q.values()), len(questions)),
        "styles": dict(Counter(f.style for fs in [*rules_answer, *rules_docs.values(), *rules_q.values()]
                               for f in fs)),
        "shown": shown[:SHOWN],
    }
    if use_embedding:
        from groundjudge.security import embedding

        answer_max = embedding_maxima(answers)
        question_list = list(questions)
        question_max = dict(zip(question_list, embedding_maxima(question_list)))
        t = embedding.THRESHOLD
        flagged_a = [bool(f) or m >= t for f, m in zip(rules_answer, answer_max)]
        test = [i for i, ex in enumerate(examples) if ex.split != "dev"]
        shown_e = []
        for ex, found, m in zip(examples, rules_answer, answer_max):
            if not found and m >= t:
                shown_e += [shown_finding(ex, ex.answer, f) for f in detect(ex.answer, "answer",
                                                                              detectors=("embedding",))]
        for q, ex in questions.items():
            if not rules_q[q] and question_max[q] >= t:
                shown_e += [shown_finding(ex, q, f) for f in detect(q, "question", detectors=("embedding",))]
        row["rules+embedding"] = {
            "threshold": t,
            "answers": rate(sum(flagged_a), len(answers)),
            "answers_test_part": rate(sum(flagged_a[i] for i in test), len(test)),
            "documents": rate(flagged_docs, len(docs)),
            "questions": rate(sum(bool(rules_q[q]) or question_max[q] >= t for q in question_list),
                              len(question_list)),
            "shown": shown_e[:SHOWN],
        }
        row["_dev_answer_maxima"] = {(ex.id, ex.answer): m for ex, m in zip(examples, answer_max) if ex.split == "dev"}
    return row


def phrasing_sets() -> dict[str, PhrasingSet]:
    """The phrasing sets detection is measured on: the battery's, the first held-out set (by style) and the
    second, frozen held-out set (by family, :data:`HELD_OUT_FILE`)."""
    return {"battery": by_style(TEMPLATES), "held_out": by_style(HELD_OUT),
            "held_out_2": load_phrasings(HELD_OUT_FILE)}


def attack_pool(examples: list[Example], n: int, seed: int) -> list[Example]:
    """The ungrounded answers of a set that get attacked: a seeded sample of ``n``, in the set's order."""
    ungrounded = [ex for ex in examples if ex.label == "ungrounded"]
    return sorted(random.Random(seed).sample(ungrounded, min(n, len(ungrounded))), key=ungrounded.index)


def embedding_findings(attacked: list[Example]) -> list[list[InjectionFinding]]:
    """The embedding detector's findings in each attacked answer."""
    from groundjudge.security import embedding

    segs = embedding.scored_segments([ex.answer for ex in attacked])
    return [[InjectionFinding(field="answer", style="addresses_judge", start=s, end=e, text=ex.answer[s:e],
                              detector=f"embedding:{sim:.2f}")
             for s, e, sim in seg if sim >= embedding.THRESHOLD] for ex, seg in zip(attacked, segs)]


def detect_family(pool: list[Example], style: str, phrasings: tuple[str, ...], use_embedding: bool,
                  seed: int) -> tuple[dict[str, list[bool]], list[dict]]:
    """One family's attacks on the pool: found or not per detector, and per phrasing (rules) found of used."""
    attacked = [attack(ex, style, seed, {style: phrasings}) for ex in pool]
    flagged_emb = embedding_findings(attacked) if use_embedding else [[] for _ in attacked]
    found: dict[str, list[bool]] = defaultdict(list)
    per_phrasing = [[0, 0] for _ in phrasings]
    for ex, emb in zip(attacked, flagged_emb):
        lo, hi = ex.meta["attack_span"]
        rules_found = [f for f in detect(ex.answer) if f.start < hi and f.end > lo]
        found["rules"].append(bool(rules_found))
        found["rules_style_right"].append(any(f.style == style for f in rules_found))
        per_phrasing[ex.meta["attack_template"]][0] += bool(rules_found)
        per_phrasing[ex.meta["attack_template"]][1] += 1
        if use_embedding:
            emb_found = [f for f in emb if f.start < hi and f.end > lo]
            found["embedding"].append(bool(emb_found))
            found["rules+embedding"].append(bool(rules_found or emb_found))
    return found, [{"text": text, "rules_found": k, "n": n} for text, (k, n) in zip(phrasings, per_phrasing)]


def detection(pools: dict[str, list[Example]], use_embedding: bool, seed: int,
              sets: dict[str, PhrasingSet] | None = None) -> dict:
    """Per family (a style, or a narrower family such as self_vouching), the share of attacks found, by phrasing
    set and detector; the frozen held-out set also by phrasing."""
    out: dict = {}
    pool = [ex for exs in pools.values() for ex in exs]
    for name, families in (sets or phrasing_sets()).items():
        found: dict[str, dict[str, list[bool]]] = {}
        phrasings: dict[str, list[dict]] = {}
        for family, (style, texts) in families.items():
            found[family], phrasings[family] = detect_family(pool, style, texts, use_embedding, seed)
        out[name] = {family: {det: rate(sum(v), len(v)) for det, v in dets.items()}
                     for family, dets in found.items()}
        totals: dict[str, list[bool]] = defaultdict(list)
        for dets in found.values():
            for det, v in dets.items():
                totals[det] += v
        out[name]["all"] = {det: rate(sum(v), len(v)) for det, v in totals.items()}
        if name == "held_out_2":
            out[name]["by_phrasing"] = phrasings
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="results/security/false_alarms.json")
    parser.add_argument("--sets", help="comma-separated set names (default: all of scripts/datasets.sh)")
    parser.add_argument("--sample", type=int, help="scan a seeded sample of this many examples per set")
    parser.add_argument("--attack-sample", type=int, default=20,
                        help="ungrounded answers per set attacked for the detection rates (default 20)")
    parser.add_argument("--no-embedding", action="store_true", help="the rules only")
    parser.add_argument("--max-dev-rate", type=float, default=0.001,
                        help="embedding threshold fit: the share of dev answers it may flag (default 0.001)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    sets = dataset_files()
    if args.sets:
        sets = {k: v for k, v in sets.items() if k in args.sets.split(",")}
    use_embedding = not args.no_embedding
    result: dict = {
        "command": " ".join(["python scripts/injection_false_alarms.py",
                             *(argv if argv is not None else sys.argv[1:])]),
        "date": dt.date.today().isoformat(),
        "what": ("False alarms of groundjudge.security.scan on plain data (no attacks: every finding is false), "
                 "and detection of the attack battery on real ungrounded answers."),
        "counting": {"answers": "per example", "documents": "per distinct document text",
                     "questions": "per distinct question text",
                     "rules+embedding": "embedding on answers and questions; documents by the rules only"},
        "dev_split": f"group-hash {DEV_FRACTION:.0%} (groundjudge run's --dev-fraction) where a set has no splits",
        "sets": {},
    }
    dev_by_answer: dict[tuple[str, str], float] = {}   # sets that share files (nli_unseen) count once
    pools: dict[str, list[Example]] = {}
    for name, files in sets.items():
        started = time.time()
        loaded = load_examples(files)
        examples = assign_missing_splits(loaded.examples, DEV_FRACTION)
        sampled = None
        if args.sample and args.sample < len(examples):
            examples = sorted(random.Random(args.seed).sample(examples, args.sample), key=examples.index)
            sampled = f"seeded sample of {args.sample} (seed {args.seed})"
        row = scan_set(name, examples, use_embedding)
        dev_by_answer.update(row.pop("_dev_answer_maxima", {}))
        row = {"files": files, "formats": sorted(set(loaded.formats)), "n_loaded": len(loaded.examples),
               "sample": sampled, **row, "seconds": round(time.time() - started, 1)}
        result["sets"][name] = row
        pools[name] = attack_pool(examples, args.attack_sample, args.seed)
        r = row["rules"]
        line = (f"{name:15s} answers {r['answers']['flagged']}/{r['answers']['n']}  documents "
                f"{r['documents']['flagged']}/{r['documents']['n']}  questions {r['questions']['flagged']}/"
                f"{r['questions']['n']}")
        if use_embedding:
            e = row["rules+embedding"]
            line += (f"  | +embedding answers {e['answers']['flagged']}/{e['answers']['n']} questions "
                     f"{e['questions']['flagged']}/{e['questions']['n']}")
        print(line, f"({row['seconds']}s)", flush=True)
    dev_maxima = list(dev_by_answer.values())
    if use_embedding:
        from groundjudge.security import embedding

        fitted = fit_threshold(dev_maxima, args.max_dev_rate)
        result["embedding_threshold"] = {
            "used": embedding.THRESHOLD, "fitted_now": fitted, "max_dev_rate": args.max_dev_rate,
            "n_dev_answers": len(dev_maxima),
            "dev_answers_at_used": rate(sum(m >= embedding.THRESHOLD for m in dev_maxima), len(dev_maxima)),
            "dev_answer_max_quantiles": {q: round(sorted(dev_maxima)[min(len(dev_maxima) - 1,
                                                                         int(q * len(dev_maxima)))], 3)
                                         for q in (0.5, 0.9, 0.99, 0.995, 0.999)} if dev_maxima else None,
        }
        print(f"embedding threshold: used {embedding.THRESHOLD}, fitted now {fitted} "
              f"(<= {args.max_dev_rate:.1%} of {len(dev_maxima)} dev answers)", flush=True)
    result["detection"] = {"attack_sample_per_set": args.attack_sample, "seed": args.seed,
                           **detection(pools, use_embedding, args.seed)}
    for phrasing in ("battery", "held_out", "held_out_2"):
        print(phrasing, {det: f"{v['flagged']}/{v['n']}" for det, v in result["detection"][phrasing]["all"].items()})
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
