"""Hand-check the types of generated one-error variants (issue 44, item 5): list them for a reader, then write the
variants that the reader confirmed as errors, each labelled with the type the reader gave.

A generator's type is what it was asked for, not what it made (a small LLM asked for a Reasoning Error often
changes a number), so a typing figure on generated variants means something only against a reader's types.

    # 1. one block per variant: the asked type, the edited sentence before and after, the generator's note
    python scripts/hand_check_variants.py list VARIANTS.jsonl
    # 2. the reader writes HAND.jsonl, one line per variant:
    #    {"id": ..., "error": true|false, "type": "<taxonomy name>" or null, "note": "..."}
    # 3. the confirmed variants with the reader's type (meta.asked_type keeps the generator's), and the counts
    python scripts/hand_check_variants.py apply VARIANTS.jsonl HAND.jsonl --out CONFIRMED.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from groundjudge.formats.load import load_examples
from groundjudge.judges.error_types import load_taxonomy
from groundjudge.local_nli.error_type_data import edited_sentence, source_sentence
from groundjudge.types import Example

TYPES = tuple(t.name for t in load_taxonomy(None))


def variants(path: str) -> list[Example]:
    """The ungrounded rows (one-error variants) of a `perturb` output file."""
    return [r for r in load_examples([path]).examples if r.label == "ungrounded"]


def list_variants(path: str) -> None:
    """Print one block per variant for the reader."""
    for row in variants(path):
        record = row.meta["perturbation"]
        print(f"## {row.id}  asked: {row.error_types[0]}  ({record['generator']})")
        print(f"   before: {source_sentence(row)}")
        print(f"   after:  {edited_sentence(row)}")
        print(f"   edit:   {record['edit']['before']!r} -> {record['edit']['after']!r}")
        print(f"   note:   {record.get('note') or ''}\n")


def read_hand(path: Path) -> dict[str, dict]:
    """The reader's labels by variant id; a line without id, error or a known type is an error naming it."""
    out = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise SystemExit(f"{where}: not a JSON object ({err.msg})") from None
        if "id" not in row or not isinstance(row.get("error"), bool):
            raise SystemExit(f"{where}: field 'id' and a true/false 'error' are required")
        if row["error"] and row.get("type") not in TYPES:
            raise SystemExit(f"{where}: field 'type' must be one of {', '.join(TYPES)}, got {row.get('type')!r}")
        out[row["id"]] = row
    return out


def apply(path: str, hand_path: Path, out: Path) -> dict:
    """Write the confirmed variants with the reader's type; return the counts (asked vs given, dropped)."""
    rows, hand = variants(path), read_hand(hand_path)
    missing = [r.id for r in rows if r.id not in hand]
    if missing:
        raise SystemExit(f"{hand_path}: no label for {len(missing)} variants, first {missing[0]!r}")
    kept, agree = [], Counter()
    with out.open("w", encoding="utf-8") as handle:
        for row in rows:
            label = hand[row.id]
            asked = row.error_types[0]
            agree[(asked, label["type"] if label["error"] else "(no error)")] += 1
            if not label["error"]:
                continue
            meta = {**row.meta, "asked_type": asked, "hand_check": {"type": label["type"], "note": label.get("note")}}
            confirmed = row.model_copy(update={"error_types": (label["type"],), "meta": meta})
            kept.append(confirmed)
            handle.write(json.dumps(confirmed.model_dump(mode="json"), ensure_ascii=False) + "\n")
    return {"variants": len(rows), "confirmed_errors": len(kept),
            "type_as_asked": sum(n for (a, g), n in agree.items() if a == g),
            "per_type_given": dict(Counter(r.error_types[0] for r in kept)),
            "asked_vs_given": [{"asked": a, "given": g, "n": n} for (a, g), n in sorted(agree.items())]}


def main(argv: list[str] | None = None) -> int:
    """``list`` or ``apply``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    listing = verbs.add_parser("list")
    listing.add_argument("variants")
    applying = verbs.add_parser("apply")
    applying.add_argument("variants")
    applying.add_argument("hand", type=Path)
    applying.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.verb == "list":
        list_variants(args.variants)
    else:
        json.dump(apply(args.variants, args.hand, args.out), sys.stdout, indent=1)
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
