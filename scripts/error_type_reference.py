"""Where the local error-type head reads its diff from: the context sentence sharing the most content words (what
``error_types:backend=local`` does) against the sentence closest by sentence-embedding cosine, on the 51
hand-written ungrounded legal QA test answers (issue 44, item 5). An experiment; nothing here changes the judge.

    python scripts/error_type_reference.py --model MODEL_DIR [--embedder all-mpnet-base-v2] [--json OUT]

MODEL_DIR is a head made by ``groundjudge train-error-types`` (results/legal_types/README.md has the command).
Macro-F1 and its 95% bootstrap interval over answers (2,000 draws, seed 0) as ``scripts/eval_error_types_local.py``
computes them for the committed figures (its ``scored``).
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from eval_error_types_local import scored

from groundjudge.local_nli.error_type_data import TypedPair, context_sentence_texts, select_evidence
from groundjudge.local_nli.error_type_head import load_head
from groundjudge.local_nli.model import load_embedder

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "datasets" / "legal_qa" / "legal_qa.jsonl"


def main() -> None:
    """Type the 51 answers' altered sentences with both references and print (or write) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="an error-type head folder")
    parser.add_argument("--embedder", default="sentence-transformers/all-MiniLM-L6-v2", help="name or folder")
    parser.add_argument("--json", type=Path, help="write the figures here as well")
    args = parser.parse_args()
    head = load_head(args.model)
    embedder = load_embedder(args.embedder)
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r["split"] == "test" and r["label"] == "ungrounded" and len(r["error_types"]) == 1]
    gold = [r["error_types"][0] for r in rows]
    claims = [r["meta"]["altered_sentence"] for r in rows]

    def nearest(claim: str, context: list[str], k: int = head.settings.evidence_k) -> tuple[str, ...]:
        found = context_sentence_texts(context)
        vectors = embedder.encode([claim, *found], normalize_embeddings=True)
        return tuple(found[i] for i in np.argsort(-(vectors[1:] @ vectors[0]))[:k])

    pickers = {"word overlap (the judge's rule)": lambda c, ctx: select_evidence(c, ctx, head.settings.evidence_k),
               f"embedding cosine ({args.embedder})": nearest}
    evidence = {name: [pick(c, r["context"]) for c, r in zip(claims, rows)] for name, pick in pickers.items()}
    figures = {}
    for name, chosen in evidence.items():
        pairs = [TypedPair(claim=c, evidence=e, label=g, source_id=r["id"], group=r["id"])
                 for c, e, g, r in zip(claims, chosen, gold, rows)]
        full = scored(gold, head.predict(pairs), n_boot=2000, seed=0)
        figures[name] = {"macro_f1": round(full["macro_f1"], 3), "ci95": [round(x, 3) for x in full["macro_f1_ci95"]],
                         "accuracy": round(full["accuracy"], 3), "per_type_f1": {
                             t: round(v["f1"], 3) for t, v in full["per_type"].items()}}
    first, second = evidence.values()
    out = {"what": __doc__.split("\n\n")[0], "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "answers": len(rows), "head_card": json.loads((Path(args.model) / "model_card.json").read_text())["data"],
           "same_best_sentence": sum(a[0] == b[0] for a, b in zip(first, second)), "references": figures}
    print(json.dumps(out["references"], indent=1), f"same best sentence: {out['same_best_sentence']} of {len(rows)}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
