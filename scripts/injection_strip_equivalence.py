"""What the default ``on_injection=strip`` leaves of the attacks: which attacked answers it turns back into the
plain answer, and so which flips it can still make.

Under ``strip`` an LLM judge sees the attacked answer with every finding cut out (``injection_guard.stripped``).
When that is the plain answer, character for character, the judge makes the plain answer's calls (same prompts,
same cache keys), so at temperature 0 its verdict is the plain verdict: the attack cannot flip it. This script
checks that, with the detectors of this commit:

* for every attacked answer of the committed batteries (``results/security/<set>/battery.jsonl``), and from each
  judge's committed records, counts the pairs (plain copy judged ungrounded, attacked copy) whose stripped answer
  is not the plain one: only those can flip under the default, and only they need the model;
* for every phrasing of the frozen held-out set (``results/security/heldout_phrasings.json``) attached (as
  ``groundjudge attack`` attaches them) to every plain answer of a battery, the share strip restores;
  ``--battery-out`` writes a held-out battery (each plain answer of the first set and one attacked copy per
  held-out family) for a model run (``scripts/run_injection_battery.sh`` with ``HELD_OUT=1``).

    python scripts/injection_strip_equivalence.py [--out results/security/strip_equivalence.json]
        [--battery-out runs/security/nli_unseen_heldout/battery.jsonl]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from groundjudge.judges.injection_guard import screen, stripped  # noqa: E402
from groundjudge.runs.records import read_records  # noqa: E402
from groundjudge.security.attacks import attack, load_phrasings, place  # noqa: E402
from groundjudge.types import Example  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SETS = ("nli_unseen", "halueval")
HELD_OUT_FILE = ROOT / "results" / "security" / "heldout_phrasings.json"
CONTENT_CHAINS = ("claims", "triplets", "error_types")
"""Judges that take claims from the answer's content only (findings cut) even under ``flag``."""


def read_battery(path: Path) -> list[Example]:
    """The examples of a battery file, in order."""
    return [Example.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def restored(example: Example, plain_answer: str) -> tuple[bool, str, bool]:
    """Whether stripping the attacked example's findings gives back the plain answer, what it gives, and whether
    the findings were in the answer alone and the stripped answer screens clean (then a chain that takes claims
    from the answer's content makes the same calls under ``flag`` and ``strip``)."""
    findings = screen(example)
    cut = stripped(example, findings) if findings else example
    answer_only = all(f.field == "answer" for f in findings) and not screen(cut)
    return cut.answer == plain_answer.strip(), cut.answer, answer_only


def battery_pairs(examples: list[Example]) -> dict[str, dict]:
    """Per attacked copy of a battery: its style, its source, whether strip restores the plain answer, and
    whether flag and strip give a content-only chain the same calls."""
    plain = {ex.id: ex for ex in examples if ex.meta.get("attack_style") == "plain"}
    out = {}
    for ex in examples:
        if ex.meta.get("attack_style") in (None, "plain"):
            continue
        ok, cut, answer_only = restored(ex, plain[ex.meta["attack_source"]].answer)
        out[ex.id] = {"style": ex.meta["attack_style"], "source": ex.meta["attack_source"], "restored": ok,
                      "answer_only": answer_only, **({} if ok else {"stripped": cut})}
    return out


def judge_rows(set_dir: Path, pairs: dict[str, dict]) -> dict[str, dict]:
    """Per judge run of a set: its on_injection, the plain-ungrounded pairs, how many strip restores, the flips
    recorded, and the flips still possible under the default (pairs not restored)."""
    rows = {}
    for records_path in sorted(set_dir.glob("*/records.jsonl.gz")):
        records = read_records(records_path)
        labels = {r.example.id: r.result.verdict.label for r in records.results}
        settings = records.header.judges[0].settings
        kind = records.header.judges[0].name
        strip_recorded = settings.get("on_injection") == "strip"
        counted = [(aid, p) for aid, p in pairs.items() if labels.get(p["source"]) == "ungrounded" and aid in labels]
        flips = [aid for aid, _ in counted if labels[aid] == "grounded"]
        known_flips, unknown = [], []
        for aid, pair in counted:
            if strip_recorded or (kind in CONTENT_CHAINS and pair["answer_only"]):
                # the recorded verdict is the strip verdict (a content-only chain made the strip calls under flag)
                known_flips += [aid] if labels[aid] == "grounded" else []
            elif not pair["restored"]:
                unknown.append(aid)
            # restored: the strip verdict is the plain one, ungrounded
        rows[records_path.parent.name] = {
            "kind": kind, "on_injection": settings.get("on_injection", "flag"),
            "pairs": len(counted), "restored": sum(p["restored"] for _, p in counted),
            "flips_recorded": len(flips), "flips_recorded_ids": flips,
            "flips_under_strip": len(known_flips), "flips_under_strip_ids": known_flips,
            "pairs_needing_the_model": unknown,
        }
    return rows


def held_out_pairs(examples: list[Example], families: dict) -> dict[str, dict]:
    """Every held-out phrasing appended to every plain answer of a battery: per family, restored of attached."""
    plain = [ex for ex in examples if ex.meta.get("attack_style") == "plain"]
    per_family: dict[str, dict] = {}
    for family, (style, phrasings) in families.items():
        done = total = 0
        for text in phrasings:
            for ex in plain:
                answer, start = place(ex.answer, text, style, "append")
                attacked = ex.model_copy(update={"answer": answer})
                done += restored(attacked, ex.answer)[0]
                total += 1
        per_family[family] = {"attached": total, "restored": done}
    return per_family


def held_out_battery(examples: list[Example], families: dict, seed: int = 0) -> list[Example]:
    """The battery's plain answers, each followed by one attacked copy per held-out family (phrasing and place
    picked as ``groundjudge attack`` picks them); ids ``{source}~{family}``, meta ``attack_family``."""
    out = []
    for ex in (e for e in examples if e.meta.get("attack_style") == "plain"):
        out.append(ex)
        for family, (style, phrasings) in families.items():
            attacked = attack(ex.model_copy(update={"meta": {k: v for k, v in ex.meta.items()
                                                             if not k.startswith("attack_")}}),
                              style, seed, {style: phrasings})
            out.append(attacked.model_copy(update={"id": f"{ex.id}~{family}",
                                                   "meta": {**attacked.meta, "attack_family": family}}))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="results/security/strip_equivalence.json")
    parser.add_argument("--battery-out", help="write the held-out battery of the first set here (JSON lines): its "
                                              "plain answers and one attacked copy per held-out family")
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    families = load_phrasings(HELD_OUT_FILE)
    result: dict = {"command": " ".join(["python scripts/injection_strip_equivalence.py",
                                         *(argv if argv is not None else sys.argv[1:])]),
                    "date": dt.date.today().isoformat(), "what": __doc__.split("\n\n")[1].replace("\n", " "),
                    "sets": {}}
    for name in SETS:
        set_dir = ROOT / "results" / "security" / name
        examples = read_battery(set_dir / "battery.jsonl")
        pairs = battery_pairs(examples)
        held = held_out_pairs(examples, families)
        if args.battery_out and name == SETS[0]:
            battery = held_out_battery(examples, families)
            path = Path(args.battery_out)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(ex.model_dump_json() + "\n" for ex in battery), encoding="utf-8")
            print(f"wrote {len(battery)} examples to {path}")
        result["sets"][name] = {
            "battery": {"attacked": len(pairs), "restored": sum(p["restored"] for p in pairs.values()),
                        "not_restored": {k: v for k, v in pairs.items() if not v["restored"]}},
            "judges": judge_rows(set_dir, pairs),
            "held_out_2": {"by_family": held, "attached": sum(v["attached"] for v in held.values()),
                           "restored": sum(v["restored"] for v in held.values())},
        }
        row = result["sets"][name]
        print(f"{name}: battery {row['battery']['restored']}/{row['battery']['attacked']} restored; held-out "
              f"{row['held_out_2']['restored']}/{row['held_out_2']['attached']} restored")
        for judge, j in row["judges"].items():
            print(f"  {judge:24s} ({j['on_injection']}) pairs {j['pairs']}, restored {j['restored']}, flips "
                  f"recorded {j['flips_recorded']}, under strip {j['flips_under_strip']} + up to "
                  f"{len(j['pairs_needing_the_model'])} unknown")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
