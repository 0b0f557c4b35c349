"""Does a run of local judges scale linearly? ``groundjudge run`` over N and 10 N synthetic answers, each with a
document of its own, wall time and peak RSS of each (not a test).

The data is written by :func:`write_corpus` into a temporary folder: N native rows, each a distinct document of
``--sentences`` generated sentences (words drawn from a fixed vocabulary with a per-row seed, so no two
documents are alike), and an answer of two sentences, half of them copied from the document (grounded) and half
with words swapped for others (ungrounded). Each size runs as one ``groundjudge run --dev-fraction 0 --quiet``
subprocess (nothing calibrated: the judges keep their default thresholds); its wall time is the subprocess's and
its peak RSS that of the subprocess (``os.wait4``'s ``ru_maxrss``). The sizes are run interleaved, smallest first
in each repeat, and the ratios large / small are printed with the verdict against the issue's goal (wall <= 11x,
peak RSS <= 1.2x). With ``--verbs`` the commands that read a finished run (``summarize``, ``report``,
``export``, ``label --no-serve``) are timed on each size's run folder as well.

The nli and views judges need an NLI model: ``--nli-model DIR``, else the packaged all-MiniLM-L6-v2 with a fresh,
untrained 3-way head (seed 0; verdicts mean nothing, cost per pair is that of any MiniLM-L6 cross-encoder), or with
``--tiny-nli`` a random 2-layer BERT of hidden size 32 (with ``--settings evidence=tfidf``, no model of any size
runs: what is left is the run's own time and memory, which is what grows with the answers if anything does). The
crossencoder judge needs a trained model folder with its card: ``--crossencoder-model DIR`` (default
``models/gj-minilm``, made by ``bash scripts/train_local_judge.sh``).

    python scripts/bench_scale.py --judges quip span --sizes 5000 50000 [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
GROUNDJUDGE = [sys.executable, "-m", "groundjudge.cli"]
"""How the command is started (the installed console script's module)."""

WORDS = ("court contract party clause notice term agreement breach payment damages tenant landlord lease "
         "employer employee wage claim appeal judge ruling statute section liability insurance policy premium "
         "seller buyer goods delivery warranty defect refund license patent owner property title deed mortgage "
         "bank loan interest rate debtor creditor estate trust will heir tax return filing deadline penalty "
         "company director share holder vote meeting board report audit record evidence witness trial jury "
         "verdict sentence fine order motion hearing counsel client fee service").split()


def sentence(rng: random.Random, words: int) -> str:
    """One generated sentence of ``words`` words drawn with ``rng``, capitalised, with a number in it."""
    drawn = [rng.choice(WORDS) for _ in range(words)]
    drawn.insert(rng.randrange(1, words), str(rng.randrange(1, 10_000)))
    return " ".join(drawn).capitalize() + "."


def row(index: int, sentences: int) -> dict:
    """The native row of answer ``index``: its own document, and an answer grounded when index is even."""
    rng = random.Random(index)
    document = [sentence(rng, rng.randrange(10, 20)) for _ in range(sentences)]
    answer = [document[rng.randrange(sentences)], document[rng.randrange(sentences)]]
    grounded = index % 2 == 0
    if not grounded:
        answer = [" ".join(rng.choice(WORDS) if rng.random() < 0.4 else word for word in text.split())
                  for text in answer]
    return {"id": f"a{index:07d}", "question": f"What does section {index} say?", "context": " ".join(document),
            "answer": " ".join(answer), "label": "grounded" if grounded else "ungrounded"}


def write_corpus(path: Path, answers: int, sentences: int) -> Path:
    """``answers`` native rows with distinct documents written to ``path`` (JSON lines)."""
    with open(path, "w", encoding="utf-8") as handle:
        for index in range(answers):
            handle.write(json.dumps(row(index, sentences)) + "\n")
    return path


def build_fresh_head_model(folder: Path) -> str:
    """The packaged MiniLM-L6 with an untrained 3-way NLI head (seed 0), saved with its tokenizer."""
    from bench_local_chunks import build_fresh_head_model as build

    return build(folder)


TINY_NLI = "<random 2-layer BERT, hidden 32>"
"""How the figures name the ``--tiny-nli`` model."""


def build_tiny_nli_model(folder: Path) -> str:
    """A randomly initialised 2-layer BERT NLI model (hidden size 32, seed 0) with the packaged MiniLM's tokenizer:
    its compute is next to nothing, so a run's time and memory are those of everything around the model."""
    from groundjudge.testing.tiny_models import tiny_nli_model

    return tiny_nli_model(folder, max_positions=512)


def timed(command: list[str], env: dict, cwd: Path) -> dict:
    """Run ``command`` in ``cwd`` (not the repository: ``python -m`` would import the package from the current
    folder before ``PYTHONPATH``); its wall seconds, peak RSS (GB) and exit status (stderr's tail when it failed)."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    out = {"wall_s": round(wall, 2), "peak_rss_gb": round(usage.ru_maxrss / 1024 ** 2, 3), "exit": code}
    if code != 0:
        out["stderr"] = stderr[-2000:]
    return out


def judge_specs(judges: list[str], nli_model: str | None, crossencoder_model: str | None = None,
                settings: list[str] = ()) -> list[str]:
    """The --judge specs of the named kinds (nli and views on ``nli_model``, crossencoder on
    ``crossencoder_model``, each with a threshold, so nothing is calibrated; ``settings``, ``key=value`` each,
    added to those three)."""
    extra = "".join(f",{setting}" for setting in settings)
    specs = []
    for kind in judges:
        if kind in ("nli", "views"):
            specs.append(f"{kind}:model={nli_model},threshold=0.5{extra}")
        elif kind == "crossencoder":
            specs.append(f"crossencoder:model={crossencoder_model},threshold=0.5{extra}")
        else:
            specs.append(kind)
    return specs


def _portable(spec: str, nli_model: str | None, given_nli: str | None, crossencoder_model: str) -> str:
    """A judge spec as the figures record it: no machine path (the fresh head named, folders relative to the
    repository)."""
    if nli_model:
        spec = spec.replace(nli_model, given_nli or "<MiniLM-L6 fresh 3-way head>")
    return spec.replace(crossencoder_model, os.path.relpath(crossencoder_model, ROOT))


def main() -> int:
    """Parse the flags, write the corpora, run each size interleaved, print (and save) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judges", nargs="+", default=["quip", "span"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[5000, 50000])
    parser.add_argument("--sentences", type=int, default=6, help="sentences per document (default 6)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--extra", nargs="*", default=[], help="more flags for groundjudge run")
    parser.add_argument("--verbs", action="store_true", help="also time summarize, report, export and label --no-serve")
    parser.add_argument("--nli-model", help="the nli judge's model (default: MiniLM-L6 with a fresh head)")
    parser.add_argument("--tiny-nli", action="store_true",
                        help="nli and views on a random 2-layer BERT of hidden size 32 instead: the run's own costs")
    parser.add_argument("--settings", nargs="*", default=[],
                        help="key=value settings added to the nli, views and crossencoder judges (evidence=tfidf)")
    parser.add_argument("--crossencoder-model", default="models/gj-minilm",
                        help="the crossencoder judge's trained model folder (default models/gj-minilm)")
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--workdir", help="keep the data and run folders here (default: a temporary folder)")
    args = parser.parse_args()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1"}
    rows: dict[int, list[dict]] = {size: [] for size in args.sizes}
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(args.workdir or tmp)
        tmp_path.mkdir(parents=True, exist_ok=True)
        nli_model = str(Path(args.nli_model).resolve()) if args.nli_model else None
        if {"nli", "views"} & set(args.judges) and args.tiny_nli:
            nli_model = build_tiny_nli_model(tmp_path / "tiny-nli-model")
        elif {"nli", "views"} & set(args.judges) and nli_model is None:
            nli_model = build_fresh_head_model(tmp_path / "nli-model")
        crossencoder_model = str(Path(args.crossencoder_model).resolve())
        specs = judge_specs(args.judges, nli_model, crossencoder_model, args.settings)
        corpora = {size: write_corpus(tmp_path / f"data-{size}.jsonl", size, args.sentences) for size in args.sizes}
        for repeat in range(args.repeats):
            for size in args.sizes:
                out = tmp_path / f"run-{size}-{repeat}"
                command = [*GROUNDJUDGE, "run", str(corpora[size]), "--out", str(out),
                           "--dev-fraction", "0", "--quiet", *[f"--judge={s}" for s in specs], *args.extra]
                figures = {"run": timed(command, env, tmp_path)}
                if args.verbs and figures["run"]["exit"] == 0:
                    for verb, extra in (("summarize", []), ("report", ["--out", str(out / "report.html")]),
                                        ("export", ["--to", str(out / "tables")]),
                                        ("label", ["--no-serve"])):
                        figures[verb] = timed([*GROUNDJUDGE, verb, str(out), *extra], env, tmp_path)
                rows[size].append(figures)
                print(f"repeat {repeat} size {size}: {json.dumps(figures)}", flush=True)
    best = {size: {verb: min(r[verb]["wall_s"] for r in runs) for verb in runs[0]} for size, runs in rows.items()}
    peak = {size: {verb: max(r[verb]["peak_rss_gb"] for r in runs) for verb in runs[0]} for size, runs in rows.items()}
    small, large = args.sizes[0], args.sizes[-1]
    ratios = {verb: {"wall": round(best[large][verb] / best[small][verb], 2),
                     "peak_rss": round(peak[large][verb] / peak[small][verb], 2)} for verb in best[small]}
    scale = large / small
    for verb, ratio in ratios.items():
        print(f"{verb}: {small} -> {large} answers ({scale:g}x): wall {ratio['wall']}x, peak RSS {ratio['peak_rss']}x"
              + (f"  (goal: wall <= {1.1 * scale:g}x, RSS <= 1.2x)" if verb == "run" else ""))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({
            "date": datetime.now(timezone.utc).date().isoformat(),
            "command": "python scripts/bench_scale.py " + " ".join(sys.argv[1:]).replace(str(ROOT) + "/", ""),
            "judges": [_portable(spec, nli_model, TINY_NLI if args.tiny_nli else args.nli_model, crossencoder_model)
                       for spec in specs],
            "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                        "threads": os.environ.get("GROUNDJUDGE_THREADS", "default")},
            "sentences_per_document": args.sentences, "sizes": args.sizes, "runs": rows,
            "best_wall_s": best, "peak_rss_gb": peak, "ratios": ratios}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
