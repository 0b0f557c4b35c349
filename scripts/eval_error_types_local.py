"""Evaluate the local error-type head (issue 44, item 5) on the hand-written legal QA answers and other typed sets.

Figures (each: n, macro-F1 with a percentile bootstrap 95% interval over answers, accuracy, per-type P/R/F1 and the
confusion matrix):

- ``oracle``: the head on each hand-written ungrounded answer's altered sentence (``meta.altered_sentence``), i.e.
  typing alone, given which sentence is wrong (its evidence chosen from the context, as when judging);
- ``diagnostic_original_sentence``: the same, but the diff is taken against the sentence of the item's grounded
  answer that the altered one replaced (plus the best context sentence): a judge never has it; it shows how much
  is lost to the paraphrase between the answer and its context;
- ``end_to_end``: for each ``--records`` run of ``error_types:backend=local``, the type of the least-supported
  typed claim of each ungrounded answer (none when the judge called it grounded: a miss, never a class), as the
  run's summary counts it;
- ``--extra FILE:SPLIT:SOURCE`` sets (e.g. the rule variants of the legal QA answers in datasets/legal_types, or
  the LLM generator's variants with a reader's types, results/legal_types/llm_variants); for `perturb` variants also
  ``diagnostic_source_sentence``: the diff taken against the source answer's sentence that the edit changed.

It also checks that the training data holds no legal QA text: no training row has ``meta.source`` legal_qa, and no
training claim shares a run of 8 words with a legal QA answer or passage.

    .venv/bin/python scripts/eval_error_types_local.py --model DIR --train-data FILES... --out FILE.json
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from groundjudge.formats.load import load_examples
from groundjudge.judges.error_types import load_taxonomy
from groundjudge.local_nli.error_type_data import (
    TypedPair,
    select_evidence,
    source_sentence,
    typed_pairs,
    words,
)
from groundjudge.local_nli.error_type_head import load_head
from groundjudge.local_nli.error_type_train import keep, typing_scores
from groundjudge.runs.error_type_stats import lead_claim
from groundjudge.text import sentences
from groundjudge.types import ClaimVerdict

TYPES = tuple(t.name for t in load_taxonomy(None))
NGRAM = 8


def macro_f1(gold: list[str], predicted: list[str]) -> float:
    """Mean F1 over the six types that occur in ``gold`` or ``predicted`` ("(none)" for no type: a miss)."""
    per = typing_scores(gold, predicted, TYPES)["per_type"]
    f1s = [v["f1"] for k, v in per.items() if k in TYPES]
    return sum(f1s) / len(f1s) if f1s else 0.0


def scored(gold: list[str], predicted: list[str | None], n_boot: int, seed: int) -> dict:
    """Typing scores with a bootstrap 95% interval of macro-F1 (none = no type given, counted as a miss)."""
    pred = [p or "(none)" for p in predicted]
    figures = typing_scores(gold, pred, TYPES)
    figures["per_type"] = {k: v for k, v in figures["per_type"].items() if k in TYPES}
    figures["macro_f1"] = macro_f1(gold, pred)
    figures["n_none"] = pred.count("(none)")
    rng = random.Random(seed)
    draws = []
    for _ in range(n_boot):
        idx = [rng.randrange(len(gold)) for _ in gold]
        draws.append(macro_f1([gold[i] for i in idx], [pred[i] for i in idx]))
    draws.sort()
    figures["macro_f1_ci95"] = [draws[int(0.025 * n_boot)], draws[int(0.975 * n_boot) - 1]]
    return figures


def scored_pairs(head, pairs: list[TypedPair], n_boot: int, seed: int) -> dict:
    """:func:`scored` of the head's types for ``pairs``, with ``items``: [pair id, gold, predicted] in order, so
    that two heads can be compared on the same items (``scripts/compare_error_type_heads.py``)."""
    predicted = head.predict(pairs)
    figures = scored([p.label for p in pairs], predicted, n_boot, seed)
    figures["items"] = [[p.source_id, p.label, t] for p, t in zip(pairs, predicted)]
    return figures


def reference_evidence(claim: str, reference: list[str], context) -> tuple[str, ...]:
    """The evidence of a diagnostic pair: the reference sentence (when there is one), then the best context one."""
    return (*reference, *select_evidence(claim, context, 1))


def original_sentence_pairs(qa: list, split: str) -> list[TypedPair]:
    """Each hand-written ungrounded answer's altered sentence, with the grounded answer's sentence it replaced as
    the first evidence sentence and the best context sentence as the second."""
    grounded = {r.meta["group"]: r for r in qa if r.label == "grounded"}
    out = []
    for row in qa:
        if row.split != split or row.label != "ungrounded":
            continue
        altered = row.meta["altered_sentence"]
        replaced = [s for s in sentences(grounded[row.meta["group"]].answer) if s not in row.answer][:1]
        out.append(TypedPair(claim=altered, evidence=reference_evidence(altered, replaced, row.context),
                             label=row.error_types[0], source_id=row.id))
    return out


def source_sentence_pairs(rows: list) -> list[TypedPair]:
    """For `perturb` variants: each edited sentence with the source answer's sentence it replaced as the first
    evidence sentence and the best context sentence as the second (as ``diagnostic_original_sentence``); rows
    without a recorded edit are left out."""
    out = []
    for row in rows:
        replaced = source_sentence(row)
        if replaced is None:
            continue
        out += [pair.model_copy(update={"evidence": reference_evidence(pair.claim, [replaced], row.context)})
                for pair in typed_pairs([row], TYPES)]
    return out


def leakage(train_files: list[str], source: str, split: str | None, legal_qa: str) -> dict:
    """Training rows from legal QA, and training claims sharing an 8-word run with a legal QA text."""
    rows = [r for r in load_examples(train_files).examples if keep(r, source, split)]
    pairs = typed_pairs(rows, TYPES)
    qa = load_examples([legal_qa]).examples
    grams = set()
    for ex in qa:
        for text in (ex.answer, *ex.context):
            w = words(text)
            grams |= {tuple(w[i:i + NGRAM]) for i in range(len(w) - NGRAM + 1)}
    shared = [p.source_id for p in pairs
              if any(tuple(words(p.claim)[i:i + NGRAM]) in grams for i in range(len(words(p.claim)) - NGRAM + 1))]
    return {"training_pairs": len(pairs), "rows_from_legal_qa": sum(1 for r in rows
                                                                    if (r.meta or {}).get("source") == "legal_qa"),
            "claims_sharing_8_words_with_legal_qa": len(shared), "examples": shared[:5]}


def is_sentence(claim: str, sentence: str) -> bool:
    """Whether a judge's claim text is ``sentence`` (one contains the other, spaces aside: splitters differ)."""
    a, b = " ".join(claim.split()), " ".join(sentence.split())
    return bool(a) and bool(b) and (a in b or b in a)


def end_to_end(records: Path, gold: dict[str, str], altered: dict[str, str], n_boot: int, seed: int) -> list[dict]:
    """Typing of each judge of a run's records on the gold ungrounded answers: the type of each answer's
    least-supported typed claim (:func:`lead_claim`), as the run's summary reads it.

    ``localisation`` counts where the error is looked for, against the sentence the error altered (``altered``):
    ``lowest_scored`` of the answers whose claims all carry a score, those whose lowest-scored sentence is the
    altered one (no threshold: the detector's ranking alone); ``lead_typed`` of the answers given a type, those
    whose typed sentence that gives the answer its type is the altered one."""
    given: dict[str, dict[str, str | None]] = {}
    labels: dict[str, dict[str, str]] = {}
    found: dict[str, dict[str, list[int]]] = {}
    for line in records.open(encoding="utf-8"):
        row = json.loads(line)
        if row.get("kind") != "result":
            continue
        verdict = row["result"]["verdict"]
        answer = verdict["example_id"]
        if answer not in gold:
            continue
        judge = row["judge"]
        claims = [ClaimVerdict.model_validate(c) for c in verdict.get("claims", [])]
        lead = lead_claim(claims)
        given.setdefault(judge, {})[answer] = None if lead is None else lead.error_type
        labels.setdefault(judge, {})[answer] = verdict["label"]
        counts = found.setdefault(judge, {"lowest_scored": [0, 0], "lead_typed": [0, 0]})
        if claims and all(c.score is not None for c in claims):
            lowest = min(claims, key=lambda c: c.score)
            counts["lowest_scored"][0] += is_sentence(lowest.claim.text, altered[answer])
            counts["lowest_scored"][1] += 1
        if lead is not None:
            counts["lead_typed"][0] += is_sentence(lead.claim.text, altered[answer])
            counts["lead_typed"][1] += 1
    out = []
    for judge, typed in given.items():
        ids = [i for i in gold if i in typed]
        figures = scored([gold[i] for i in ids], [typed[i] for i in ids], n_boot, seed)
        figures["judge"] = judge
        figures["called_ungrounded"] = sum(1 for i in ids if labels[judge][i] == "ungrounded")
        figures["localisation"] = {k: {"altered": hit, "of": n} for k, (hit, n) in found[judge].items()}
        out.append(figures)
    return out


def main(argv: list[str] | None = None) -> int:
    """Write the figures as JSON and print the headline."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--legal-qa", default="datasets/legal_qa/legal_qa.jsonl")
    parser.add_argument("--split", default="test")
    parser.add_argument("--train-data", nargs="+", required=True)
    parser.add_argument("--train-source", default="contractnli")
    parser.add_argument("--train-split", default="dev")
    parser.add_argument("--records", nargs="*", default=[], type=Path)
    parser.add_argument("--extra", nargs="*", default=[], metavar="FILE[+FILE...]:SPLIT:SOURCE")
    parser.add_argument("--n-boot", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)

    head = load_head(args.model)
    every = load_examples([args.legal_qa]).examples
    qa = [r for r in every if r.split == args.split]
    pairs = typed_pairs(qa, TYPES, head.settings.evidence_k)
    result = {"model_card": json.loads((Path(args.model) / "model_card.json").read_text(encoding="utf-8")),
              "leakage": leakage(args.train_data, args.train_source, args.train_split, args.legal_qa)}
    result["oracle"] = scored_pairs(head, pairs, args.n_boot, args.seed)
    result["oracle"]["predictions"] = {i: t for i, _, t in result["oracle"]["items"]}
    diagnostic = original_sentence_pairs(every, args.split)
    result["diagnostic_original_sentence"] = scored_pairs(head, diagnostic, args.n_boot, args.seed)
    gold = {p.source_id: p.label for p in pairs}
    altered = {r.id: r.meta["altered_sentence"] for r in qa if r.id in gold}
    result["end_to_end"] = [f for r in args.records for f in end_to_end(r, gold, altered, args.n_boot, args.seed)]
    result["extra"] = {}
    for item in args.extra:
        path, split, source = item.split(":")
        rows = [r for r in load_examples(path.split("+")).examples if keep(r, source or None, split or None)]
        extra = typed_pairs(rows, TYPES, head.settings.evidence_k)
        result["extra"][item] = scored_pairs(head, extra, args.n_boot, args.seed)
        replaced = source_sentence_pairs(rows)
        if replaced:
            result["extra"][item]["diagnostic_source_sentence"] = scored_pairs(head, replaced, args.n_boot, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    o = result["oracle"]
    print(f"oracle sentence, n={o['n']}: macro-F1 {o['macro_f1']:.3f} {o['macro_f1_ci95']}, acc {o['accuracy']:.3f}")
    d = result["diagnostic_original_sentence"]
    print(f"diagnostic, replaced sentence as evidence: macro-F1 {d['macro_f1']:.3f} {d['macro_f1_ci95']}")
    for e in result["end_to_end"]:
        where = ", ".join(f"{k} on the altered sentence {v['altered']}/{v['of']}" for k, v in e["localisation"].items())
        print(f"{e['judge']}: macro-F1 {e['macro_f1']:.3f} {e['macro_f1_ci95']}, none {e['n_none']}/{e['n']}; {where}")
    for k, e in result["extra"].items():
        print(f"{k}: n={e['n']} macro-F1 {e['macro_f1']:.3f} {e['macro_f1_ci95']}")
        if "diagnostic_source_sentence" in e:
            d = e["diagnostic_source_sentence"]
            print(f"  diagnostic, source sentence as evidence: macro-F1 {d['macro_f1']:.3f} {d['macro_f1_ci95']}")
    print(json.dumps(result["leakage"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
