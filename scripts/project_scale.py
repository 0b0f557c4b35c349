"""Project a corpus-sized run of the claims chain from recorded runs (issue 23): calls, tokens, dollars online and
through the providers' batch APIs, and wall time at a given rate limit.

The per-answer figures are measured, not guessed: they are read from the committed runs of the claims chain
(``results/llm/<set>/claims/summary.json``: LLM calls, input and output tokens over the answers judged, on the
local Qwen2.5-Coder-1.5B). Prices are litellm's list prices for the models named (batch = half of online, as
OpenAI and Anthropic sell it); wall time online is the larger of calls / RPM and tokens / TPM, assuming the rate
limit is the bottleneck (a cluster with enough concurrency, see docs/scaling.md); batch results arrive within the
providers' 24-hour window.

    python scripts/project_scale.py [--answers 100000] [--rpm 5000] [--tpm 4000000] [--out results/scale/projection.json]
"""

from __future__ import annotations

import argparse
import json
import os
from datetime import date
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MODELS = ("gpt-4o-mini", "gpt-4.1-mini", "claude-haiku-4-5", "claude-sonnet-4-5")
"""Models priced in the projection (litellm's price table)."""


def per_answer(summary_path: Path) -> dict[str, float]:
    """Calls and tokens per answer judged, from one run's summary."""
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    judge = next(iter(summary["judges"].values()))
    n = judge["n"]
    calls = judge["llm_calls"] + judge.get("llm_calls_cached", 0)   # a call replayed from the cache still counts
    return {"answers": n, "calls": calls / n, "input_tokens": judge["tokens"]["input"] / n,
            "output_tokens": judge["tokens"]["output"] / n}


def price(model: str, input_tokens: float, output_tokens: float) -> float:
    """Dollars at litellm's list price."""
    cost_in, cost_out = litellm.cost_per_token(model=model, prompt_tokens=int(input_tokens),
                                               completion_tokens=int(output_tokens))
    return cost_in + cost_out


def project(measured: dict[str, float], answers: int, rpm: float, tpm: float) -> dict:
    """The corpus-sized figures for one data set's per-answer measurement."""
    calls = measured["calls"] * answers
    tin, tout = measured["input_tokens"] * answers, measured["output_tokens"] * answers
    minutes = max(calls / rpm, (tin + tout) / tpm)
    costs = {m: {"online_usd": round(price(m, tin, tout), 2), "batch_usd": round(price(m, tin, tout) / 2, 2)}
             for m in MODELS}
    return {"calls": round(calls), "input_tokens": round(tin), "output_tokens": round(tout),
            "wall_hours_online": round(minutes / 60, 2), "bound_by": "requests" if calls / rpm >= (tin + tout) / tpm
            else "tokens", "cost": costs}


def main() -> None:
    """Print and write the projection for every data set with a recorded claims run."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--rpm", type=float, default=5000, help="requests per minute the account may send")
    parser.add_argument("--tpm", type=float, default=4_000_000, help="tokens per minute the account may send")
    parser.add_argument("--out", default="results/scale/projection.json")
    args = parser.parse_args()
    rows = {}
    for path in sorted((ROOT / "results" / "llm").glob("*/claims/summary.json")):
        name = path.parent.parent.name
        measured = per_answer(path)
        rows[name] = {"measured_per_answer": {k: round(v, 1) for k, v in measured.items()},
                      "projected": project(measured, args.answers, args.rpm, args.tpm)}
    result = {"date": date.today().isoformat(), "answers": args.answers, "rpm": args.rpm, "tpm": args.tpm,
              "source": "results/llm/<set>/claims/summary.json (claims chain, local Qwen2.5-Coder-1.5B, "
                        "test answers of each set)",
              "command": "python scripts/project_scale.py " + " ".join(
                  f"--{k} {v}" for k, v in (("answers", args.answers), ("rpm", args.rpm), ("tpm", args.tpm))),
              "sets": rows}
    out = ROOT / args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    head = f"| set | calls/answer | tokens in/out per answer | {args.answers:,} answers: calls | tokens | hours online @ " \
           f"{args.rpm:g} RPM, {args.tpm:g} TPM | " + " | ".join(f"{m} online / batch $" for m in MODELS) + " |"
    print(head)
    print("|" + "---|" * (5 + len(MODELS)))
    for name, row in rows.items():
        m, p = row["measured_per_answer"], row["projected"]
        print(f"| {name} | {m['calls']} | {m['input_tokens']:.0f} / {m['output_tokens']:.0f} | {p['calls']:,} | "
              f"{p['input_tokens'] + p['output_tokens']:,} | {p['wall_hours_online']} ({p['bound_by']}) | "
              + " | ".join(f"{p['cost'][mm]['online_usd']:,.0f} / {p['cost'][mm]['batch_usd']:,.0f}" for mm in MODELS)
              + " |")


if __name__ == "__main__":
    main()
