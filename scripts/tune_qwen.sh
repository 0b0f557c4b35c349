#!/usr/bin/env bash
# groundjudge tune with the local Qwen2.5-Coder-1.5B (llama.cpp, scripts/local_llm.sh) on SummEdits and nli_unseen:
# the direct judge's yes/no log-probabilities, tuned over calibration (fitted, contextual, batch), two balanced
# demonstrations and a stricter prompt by successive halving (examples/tune/<set>_qwen.toml). Writes
# runs/tune_<set>/ (tune.json, tune.md, winner.toml) and copies tune.json and tune.md to results/tune/qwen/<set>/.
# Needs ../shared/datasets and llama-cpp-python[server] (see local_llm.sh).
#
#   bash scripts/tune_qwen.sh                    # both sets
#   bash scripts/tune_qwen.sh summedits --resume # one set; --resume continues a stopped tune
set -euo pipefail
cd "$(dirname "$0")/.."
GJ=${GJ:-.venv/bin/groundjudge}
export LITELLM_LOCAL_MODEL_COST_MAP=True HF_HUB_OFFLINE=1
SETS=${1:-summedits nli_unseen}
shift || true
for name in $SETS; do
  bash scripts/local_llm.sh restart          # a fresh server per tune (its memory grows per request)
  out=runs/tune_$name
  mkdir -p "$out" "results/tune/qwen/$name"
  $GJ tune "examples/tune/${name}_qwen.toml" --dry-run
  start=$(date +%s)
  $GJ tune "examples/tune/${name}_qwen.toml" --out "$out" --concurrency 1 "$@"
  echo "$name: $(( $(date +%s) - start )) s" | tee -a "$out/hours.txt"
  cp "$out/tune.json" "$out/tune.md" "results/tune/qwen/$name/"
done
