"""Did any evaluation document reach a ``groundjudge train --from-documents`` model? (issue 44, goal 1)

The model folder's ``pairs/units.jsonl`` lists every document its pairs were made from (train and dev), by unit key
(a hash of the document's text) and group. This script compares them with the documents ``scripts/signal_steps.py``
scores: the run's test part of SummEdits and ContractNLI ``dev.json`` (the card's ``run_dev_fraction``), and every
row of MNLI-mismatched and SNLI (``nli_unseen``, never given to training at all). It fails (exit 1) when a held-out
document's text or group is among the paired ones, and counts the held-out sentences that also occur, normalised,
in a training or dev premise or claim (shared boilerplate, not a leaked document: reported, not a failure).

    python scripts/document_leaks.py --model models/gj-docs [--out results/models/gj-docs/document_leaks.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from signal_steps import ROOT, SET_FILES, held_out

from groundjudge.formats.load import load_examples
from groundjudge.local_nli.doc_sources import real_sentences, unit_key
from groundjudge.local_nli.doc_store import UNITS_FILE, read_units
from groundjudge.local_nli.pairs import document_sentences, source_group
from groundjudge.text import normalize


def evaluation_pool(name: str, run_dev_fraction: float) -> list:
    """The examples of a set that must never reach training: the run's test part, or the whole set for
    ``nli_unseen`` (its files are never given to training)."""
    examples = load_examples([str(ROOT / f) for f in SET_FILES[name]]).examples
    return list(examples) if name == "nli_unseen" else held_out(examples, run_dev_fraction)


def leaks(units: Sequence, pool: Sequence) -> dict:
    """Document keys, groups and normalised sentences that the paired units share with the held-out pool."""
    keys, groups = {u.key for u in units}, {u.group for u in units}
    seen_text = {normalize(s) for u in units for p in u.pairs for t in (p.premise, p.hypothesis)
                 for s in document_sentences(t)}
    pool_keys = {unit_key(ex) for ex in pool}
    pool_groups = {source_group(ex) for ex in pool}
    sentences = {normalize(s) for ex in pool for doc in ex.context for s in real_sentences(doc)}
    shared = sentences & seen_text
    return {"held_out_examples": len(pool), "held_out_documents": len(pool_keys), "held_out_groups": len(pool_groups),
            "documents_in_training": len(pool_keys & keys), "groups_in_training": len(pool_groups & groups),
            "held_out_sentences": len(sentences), "sentences_also_in_training_pairs": len(shared),
            "examples_of_shared_sentences": sorted(shared, key=len, reverse=True)[:3]}


def main(argv: Sequence[str] | None = None) -> int:
    """Compare the model's paired documents with every evaluation set's held-out documents."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="models/gj-docs", help="a folder written by train --from-documents")
    parser.add_argument("--out", help="write the counts here as JSON")
    args = parser.parse_args(argv)
    folder = ROOT / args.model
    card = json.loads((folder / "pairs" / "meta.json").read_text(encoding="utf-8"))
    run_dev_fraction = card["split"]["run_dev_fraction"]
    if run_dev_fraction is None:
        parser.error(f"--model: {args.model} was not trained with --run-dev-fraction: its test part is not defined")
    units = read_units(folder / "pairs" / UNITS_FILE)
    result = {"model": args.model, "documents_paired": len({u.key for u in units}),
              "run_dev_fraction": run_dev_fraction,
              "sets": {name: leaks(units, evaluation_pool(name, run_dev_fraction)) for name in SET_FILES}}
    text = json.dumps(result, indent=1)
    if args.out:
        (ROOT / args.out).parent.mkdir(parents=True, exist_ok=True)
        (ROOT / args.out).write_text(text + "\n", encoding="utf-8")
    print(text)
    bad = [n for n, s in result["sets"].items() if s["documents_in_training"] or s["groups_in_training"]]
    if bad:
        print(f"LEAK: held-out documents of {', '.join(bad)} were paired for training", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
