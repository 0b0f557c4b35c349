#!/usr/bin/env bash
# groundjudge tune on SummEdits with the local Qwen2.5-Coder-1.5B (llama.cpp, scripts/local_llm.sh): the direct
# judge's yes/no log-probabilities, tuned over calibration (fitted, contextual, batch), balanced demonstrations
# and a stricter prompt, by successive halving within MAX_CALLS calls. Writes runs/tune_summedits/ (tune.json,
# tune.md, winner.toml). Needs ../shared/datasets/summedits and llama-cpp-python[server] (see local_llm.sh).
#
#   bash scripts/tune_qwen.sh            # MAX_CALLS=1500 SAMPLE=400 by default; --resume continues a stopped tune
set -euo pipefail
cd "$(dirname "$0")/.."
GJ=${GJ:-.venv/bin/groundjudge}
PORT=${PORT:-8765}
MAX_CALLS=${MAX_CALLS:-1500}
SAMPLE=${SAMPLE:-400}
OUT=${OUT:-runs/tune_summedits}
export LITELLM_LOCAL_MODEL_COST_MAP=True HF_HUB_OFFLINE=1
mkdir -p "$OUT"
FILES=$(ls "$PWD"/../shared/datasets/summedits/summedits_*.json | sed 's/.*/"&"/' | paste -sd, -)
cat > "$OUT/summedits_tune.toml" <<TOML
# written by scripts/tune_qwen.sh
[data]
files = [$FILES]
sample = $SAMPLE
seed = 0

[judges.direct]
kind = "direct"
model = "openai/qwen"
api_base = "http://127.0.0.1:$PORT/v1"
score = "logprobs"
timeout = 900
max_attempts = 2
concurrency = 1

[tune]
judge = "direct"
seed = 0
max_calls = $MAX_CALLS
parts = { optimise = 0.3, select = 0.4, test = 0.3 }
first_rung = 16
fit_examples = 32

[tune.calibration]
methods = ["threshold", "contextual", "batch"]

[tune.demos]
k = [2]

[tune.instructions]
prompts = ["$PWD/examples/tune/prompts/strict"]
TOML
PORT=$PORT bash scripts/local_llm.sh start
$GJ tune "$OUT/summedits_tune.toml" --dry-run
$GJ tune "$OUT/summedits_tune.toml" --out "$OUT" --concurrency 1 "$@"
