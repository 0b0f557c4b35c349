"""Build groundjudge/local_nli/check_set.jsonl: the fixed (premise, hypothesis) pairs on which ``dtype=auto``
checks that a faster precision gives the same verdicts as float32 (groundjudge.local_nli.backend_check).

The pairs are what a local judge scores: an answer sentence (a claim, split as the judges split answers) and
a context window of whole sentences (about 90 words) chosen by word overlap with it, as evidence selection
would. From the bundled data only (both Apache-2.0, see their cards):

* datasets/legal_qa/legal_qa.jsonl: every distinct claim of the 112 answers (grounded and altered) with its
  best window, then with its second-best window (a weaker, often neutral premise, as top_k > 1 gives);
* datasets/summedits_sample/*.json: every distinct summary sentence with its best window of the document.

A seeded sample (seed 0) keeps 200 legal and 100 SummEdits pairs. Deterministic: rerunning it rewrites the
same file. The first line is a header saying where the pairs come from.

    python scripts/make_check_set.py
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from groundjudge.local_nli.segment import claims_of, windows

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "groundjudge" / "local_nli" / "check_set.jsonl"
WINDOW_WORDS = 90
COUNTS = {"legal_qa": 200, "summedits": 100}
_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> set[str]:
    """Lower-case words of a text."""
    return set(_WORD.findall(text.lower()))


def ranked_windows(context: list[str], claim: str) -> list[str]:
    """The context's windows, most word overlap with the claim first (ties in document order)."""
    wins = windows(tuple(context), WINDOW_WORDS, lambda t: len(t.split()))
    claim_words = words(claim)
    order = sorted(range(len(wins)), key=lambda i: (-len(claim_words & words(wins[i].text)), i))
    return [wins[i].text for i in order]


def legal_pairs() -> list[dict]:
    """Claim x best and second-best window pairs of the legal QA sample."""
    pairs, seen = [], set()
    rows = [json.loads(line) for line in (ROOT / "datasets/legal_qa/legal_qa.jsonl").read_text().splitlines()]
    for rank in (0, 1):
        for row in rows:
            for start, end in claims_of(row["answer"]):
                claim = row["answer"][start:end].strip()
                ranked = ranked_windows(row["context"], claim)
                if rank < len(ranked) and (ranked[rank], claim) not in seen:
                    seen.add((ranked[rank], claim))
                    pairs.append({"premise": ranked[rank], "hypothesis": claim, "source": f"legal_qa:{row['id']}"})
    return pairs


def summedits_pairs() -> list[dict]:
    """Summary sentence x best document window pairs of the SummEdits sample."""
    pairs, seen = [], set()
    for path in sorted((ROOT / "datasets/summedits_sample").glob("summedits_*.json")):
        for row in json.loads(path.read_text()):
            for start, end in claims_of(row["summary"]):
                claim = row["summary"][start:end].strip()
                best = ranked_windows([row["doc"]], claim)[0]
                if (best, claim) not in seen:
                    seen.add((best, claim))
                    pairs.append({"premise": best, "hypothesis": claim, "source": f"summedits:{row['id']}"})
    return pairs


def build() -> list[dict]:
    """The check set's pairs: a seeded sample of each source's pairs, in their order."""
    rng = random.Random(0)
    chosen = []
    for name, pool in (("legal_qa", legal_pairs()), ("summedits", summedits_pairs())):
        keep = sorted(rng.sample(range(len(pool)), min(COUNTS[name], len(pool))))
        chosen += [pool[i] for i in keep]
    return chosen


def main() -> None:
    """Write the check set."""
    chosen = build()
    header = {"header": {
        "what": "fixed (premise, hypothesis) pairs on which dtype=auto checks that a faster precision gives the "
                "same verdicts as float32",
        "source": "datasets/legal_qa/legal_qa.jsonl (written for groundjudge, Apache-2.0) and "
                  "datasets/summedits_sample (SummEdits, Laban et al. 2023, salesforce/factualNLG, Apache-2.0): "
                  "answer or summary sentences with their best (and, for legal_qa, second-best) context window "
                  f"of about {WINDOW_WORDS} words by word overlap",
        "made_by": "python scripts/make_check_set.py (seed 0)",
        "licence": "Apache-2.0",
        "pairs": len(chosen)}}
    with OUT.open("w", encoding="utf-8") as out:
        for row in [header, *chosen]:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(chosen)} pairs to {OUT.relative_to(ROOT)}")

if __name__ == "__main__":
    main()
