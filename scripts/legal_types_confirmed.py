"""Per-type figures of the committed legal_types judge runs on the rows a blind reader confirmed, beside all rows.

A row is *confirmed* when it is a typed variant of the key's sample that the reader (part A) labelled ungrounded
with its intended error type. For each run's judges: recall per intended type (share of the type's test variants
judged ungrounded) on every test variant, on the reader-labelled ones, the confirmed and the rejected
(labelled, not confirmed) ones; for a judge that
names error types (the error_types chain): the share of variants it typed as the intended type.

    .venv/bin/python scripts/legal_types_confirmed.py results/legal_types/confirmed/round1_key.jsonl \
        results/legal_types/confirmed/labels_A.jsonl results/legal_types/{local,nli,crossencoder,direct,error_types} \
        --out results/legal_types/confirmed/judges_on_confirmed
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections import defaultdict
from pathlib import Path

from groundjudge.labels.benchmark_check import wilson
from groundjudge.perturb import ERROR_TYPES

TYPES = tuple(ERROR_TYPES.values())


def read_jsonl(path: Path) -> list[dict]:
    """Every JSON line of a file (gzip when it ends in .gz)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def confirmed_rows(key: Path, labels: Path) -> tuple[set[str], set[str]]:
    """(row ids the reader labelled, row ids the reader confirmed): variants only; the last label of an id counts."""
    items = {r["id"]: r for r in read_jsonl(key) if r.get("kind") == "variant"}
    last = {lab["id"]: lab for lab in read_jsonl(labels)}
    labelled, confirmed = set(), set()
    for item_id, lab in last.items():
        item = items.get(item_id)
        if item is None:
            continue
        labelled.add(item["row_id"])
        if lab["label"] == "ungrounded" and item["intended_type"] in lab.get("error_types", []):
            confirmed.add(item["row_id"])
    return labelled, confirmed


def judged(run: Path) -> dict[str, dict[str, tuple[str, str, set[str]]]]:
    """judge name -> row id -> (gold type, verdict label, error types the judge named) for the run's variants."""
    out: dict[str, dict] = defaultdict(dict)
    for rec in read_jsonl(run / "records.jsonl.gz"):
        if rec.get("kind") != "result" or rec["example"]["label"] != "ungrounded":
            continue
        verdict = rec["result"]["verdict"]
        named = {c["error_type"] for c in verdict.get("claims") or [] if c.get("error_type")}
        name = rec["judge"].split(":", 1)[0]
        out[name][rec["example"]["id"]] = (rec["example"]["error_types"][0], verdict["label"], named)
    return out


def cell(hits: int, n: int) -> dict:
    """k/n with its Wilson 95% interval."""
    low, high = wilson(hits / n, n) if n else (0.0, 1.0)
    return {"k": hits, "n": n, "share": hits / n if n else None, "low": low, "high": high}


def figures(rows: dict, subset: set[str] | None, typing: bool) -> dict[str, dict]:
    """Per intended type: recall (and typing accuracy) over ``rows`` restricted to ``subset``."""
    out = {}
    for kind in TYPES:
        ids = [r for r, v in rows.items() if v[0] == kind and (subset is None or r in subset)]
        caught = sum(rows[r][1] == "ungrounded" for r in ids)
        out[kind] = {"recall": cell(caught, len(ids))}
        if typing:
            out[kind]["typed"] = cell(sum(kind in rows[r][2] for r in ids), len(ids))
    return out


def fmt(c: dict) -> str:
    """A cell as '0.73 [0.65, 0.80] (n 135)', or '-' when empty."""
    if not c["n"]:
        return "- (n 0)"
    return f"{c['share']:.2f} [{c['low']:.2f}, {c['high']:.2f}] (n {c['n']})"


def main() -> None:
    """Read the key, the labels and the runs; write OUT.json and OUT.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("key", type=Path)
    parser.add_argument("labels", type=Path)
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    labelled, confirmed = confirmed_rows(args.key, args.labels)
    result: dict = {"labelled_rows": len(labelled), "confirmed_rows": len(confirmed), "judges": {}}
    lines = ["| judge | type | all test variants | reader-labelled | confirmed | rejected |",
             "|---|---|---:|---:|---:|---:|"]
    for run in args.runs:
        for name, rows in judged(run).items():
            typing = any(v[2] for v in rows.values()) or name == "error_types"
            views = {"all": figures(rows, None, typing), "labelled": figures(rows, labelled, typing),
                     "confirmed": figures(rows, confirmed, typing),
                     "rejected": figures(rows, labelled - confirmed, typing)}
            result["judges"][f"{run.name}/{name}"] = views
            for kind in TYPES:
                for metric in ("recall", "typed") if typing else ("recall",):
                    lines.append(f"| {name} ({run.name}) {metric} | {kind} | " + " | ".join(
                        fmt(views[v][kind][metric]) for v in ("all", "labelled", "confirmed", "rejected")) + " |")
    args.out.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(labelled)} labelled variants, {len(confirmed)} confirmed; wrote {args.out}.md/.json")


if __name__ == "__main__":
    main()
