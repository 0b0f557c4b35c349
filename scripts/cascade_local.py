"""Pick the cascade's local judge and its escalation band from a committed local run, on dev data only.

The local judge is the best of the judges that need no trained model (``quip``, ``cosine``) by balanced
accuracy on the dev part of ``results/local/SET`` (its ``calibration.jsonl.gz``: the verdicts the threshold
was fitted on), so the choice never looks at the evaluation part the cascade is measured on. The band is
the interval around that judge's fitted threshold holding the ``--escalate`` share of dev scores nearest
to it: answers whose score falls in it go to the LLM, so about that share is escalated.

The band is chosen without an LLM call, so it cannot tell whether the LLM is any better than the local
judge on the answers it would escalate (on HaluEval it was worse, and the cascade lost to quip alone).
``--probe N --llm SPEC`` checks that for the price of N LLM-judged answers: it judges N labelled dev answers
from inside the band with the LLM judge (``groundjudge run`` into ``--out``, default RUN_DIR/probe: records and
summary as for any run), and prints how many each judge got right, with McNemar's p.

    python scripts/cascade_local.py results/local/truthfulqa [--escalate 0.4]
    # prints: SPEC THRESHOLD LO-HI DEV_BALANCED_ACCURACY
    python scripts/cascade_local.py results/local/halueval --probe 30 --llm "claims:model=openai/qwen,api_base=..."
    # adds: PROBE_N LLM_RIGHT LOCAL_RIGHT MCNEMAR_P (and a verdict on stderr)
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

from sklearn.metrics import balanced_accuracy_score

from groundjudge.metrics import mcnemar_p
from groundjudge.runs.records import find_records, read_records
from groundjudge.types import Example, ResultRecord

CANDIDATES = ("quip", "cosine")
"""Local judges that run with no trained model: the cascade must not depend on weights that are not committed."""


def dev_records(run_dir: Path) -> list[ResultRecord]:
    """The run's dev verdicts (``calibration.jsonl``, plain or gzipped): what every threshold was fitted on."""
    return read_records(find_records(run_dir, "calibration.jsonl")).results


def dev_scores(dev: list[ResultRecord], spec: str) -> list[tuple[Example, float]]:
    """The labelled dev answers the judge ``spec`` scored (its threshold was fitted on them), with their scores."""
    return [(r.example, r.result.verdict.score) for r in dev
            if r.judge == spec and r.example.label and r.result.verdict.score is not None]


def choose(run_dir: Path, dev: list[ResultRecord], escalate: float) -> tuple[str, float, float, float, float]:
    """(spec, threshold, band low, band high, dev balanced accuracy) of the best model-free local judge."""
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    best: tuple[str, float, float, float, float] | None = None
    for spec, row in summary["judges"].items():
        if spec.split(":")[0] not in CANDIDATES or row.get("threshold") is None:
            continue
        threshold = float(row["threshold"])
        scored = [(score, example.label) for example, score in dev_scores(dev, spec)]
        if not scored:
            continue
        gold = [label == "grounded" for _, label in scored]
        predicted = [score >= threshold for score, _ in scored]
        accuracy = float(balanced_accuracy_score(gold, predicted))
        nearest = sorted((abs(score - threshold), score) for score, _ in scored)[:max(1, round(escalate * len(scored)))]
        low, high = min(s for _, s in nearest), max(s for _, s in nearest)
        if best is None or accuracy > best[4]:
            best = (spec, threshold, max(low, 0.0), min(high, 1.0), accuracy)
    if best is None:
        raise SystemExit(f"{run_dir}: no dev verdicts of {' or '.join(CANDIDATES)}")
    return best


def probe(dev: list[ResultRecord], spec: str, threshold: float, low: float, high: float, llm_spec: str, n: int,
          out: Path, seed: int = 0) -> tuple[int, int, int, float]:
    """(answers probed, LLM right, local right, McNemar p) on n seeded dev answers from inside the band.

    The sample is written to ``out/probe.jsonl`` and judged by ``groundjudge run`` into ``out`` (records, summary,
    call cache), so the probe is a run like any other. An LLM abstention counts as wrong, as in every score."""
    pool = [(example, score) for example, score in dev_scores(dev, spec) if low <= score <= high]
    if not pool:
        raise SystemExit(f"no labelled dev answers of {spec} inside {low:.6f}-{high:.6f}")
    sample = random.Random(seed).sample(pool, min(n, len(pool)))
    out.mkdir(parents=True, exist_ok=True)
    data = out / "probe.jsonl"
    data.write_text("".join(json.dumps(e.model_dump(mode="json") | {"split": None}) + "\n" for e, _ in sample),
                    encoding="utf-8")
    command = [sys.executable, "-m", "groundjudge.cli", "run", str(data), "--judge", llm_spec, "--dev-fraction", "0",
               "--concurrency", "1", "--out", str(out), "--resume", "--quiet"]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    verdicts = {r.example.id: r.result.verdict.label for r in read_records(find_records(out, "records.jsonl")).results}
    llm_right = [verdicts.get(e.id) == e.label for e, _ in sample]
    local_right = [(score >= threshold) == (e.label == "grounded") for e, score in sample]
    return len(sample), sum(llm_right), sum(local_right), mcnemar_p(llm_right, local_right)


def main() -> None:
    """Print the choice for one set, and with --probe the LLM-against-local check of its band."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--escalate", type=float, default=0.4, help="share of dev answers inside the band")
    parser.add_argument("--probe", type=int, default=0, metavar="N",
                        help="judge N labelled dev answers inside the band with --llm and compare (N LLM-judged answers)")
    parser.add_argument("--llm", help="the cascade's LLM judge spec, for --probe")
    parser.add_argument("--out", type=Path, help="the probe's run directory (default: RUN_DIR/probe)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the probe's sample")
    args = parser.parse_args()
    if args.probe and not args.llm:
        parser.error("--probe needs --llm SPEC")
    dev = dev_records(args.run_dir)
    spec, threshold, low, high, accuracy = choose(args.run_dir, dev, args.escalate)
    line = f"{spec} {threshold:.6f} {low:.6f}-{high:.6f} {accuracy:.4f}"
    if args.probe:
        n, llm, local, p = probe(dev, spec, threshold, low, high, args.llm, args.probe,
                                 args.out or args.run_dir / "probe", args.seed)
        line += f" {n} {llm} {local} {p:.4g}"
        better = "helps" if llm > local else "does not help"
        print(f"probe: on {n} dev answers inside the band the LLM judge is right on {llm}, {spec} on {local} "
              f"(McNemar p = {p:.3g}): escalating them {better}", file=sys.stderr)
    print(line)


if __name__ == "__main__":
    main()
