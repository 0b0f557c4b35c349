#!/usr/bin/env bash
# Token-probability judges on the answers of results/llm (issue 21): the direct yes/no prompt scored by
# P(yes) / (P(yes) + P(no)) of the first answer token (KIND=direct, the default), or the claims chain with one yes/no
# call per claim against the documents, the answer scored by its weakest claim (KIND=claims), with the local
# Qwen2.5-Coder-1.5B (scripts/local_llm.sh).
#
#   bash scripts/run_logprob_judges.sh [OUT_DIR]     (~5-40 s per answer on 2 cores)
#
# Same data, split and --sample/--seed as scripts/run_llm_judges.sh, so the answers are the committed runs' own
# (`groundjudge report --common` lines them up). The threshold is fitted on a seeded sample of CAL dev answers
# (--calibrate-sample): the dev part is never evaluated. ContractNLI is judged with evidence=chunks (the top 3
# windows of ~200 words per hypothesis sentence) instead of the whole contract. Set SETS or N to run a part;
# BUDGET_S (seconds per set) stops a set early: its summary then covers the answers judged so far, in sample order
# (`--resume` goes on later).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-results/llm}
GJ=${GJ:-.venv/bin/groundjudge}
PORT=${PORT:-8765}
N=${N:-200}
CAL=${CAL:-40}
BUDGET_S=${BUDGET_S:-0}
PORT=$PORT bash scripts/local_llm.sh start
LLM="model=openai/qwen,api_base=http://127.0.0.1:$PORT/v1,timeout=900,max_attempts=2,concurrency=1"
source scripts/datasets.sh
export GROUNDJUDGE_CACHE_DIR=${GROUNDJUDGE_CACHE_DIR:-runs/llm/cache}
KIND=${KIND:-direct}
for name in ${SETS:-nli_unseen summedits contractnli}; do
  judge="$KIND:$LLM,score=logprobs"
  [ "$KIND" = claims ] && judge="$judge,against=context"
  [ "$name" = contractnli ] && judge="$judge,evidence=chunks"
  run="runs/llm/$name/${KIND}_logprobs"
  # shellcheck disable=SC2086
  timeout "$BUDGET_S" $GJ run ${DATA[$name]} --judge "$judge" --dev-fraction 0.6 --split test --sample "$N" \
      --seed 0 --calibrate-sample "$CAL" --concurrency 1 --out "$run" --resume --quiet || [ $? = 124 ]
  [ -f "$run/records.jsonl" ] || continue
  $GJ summarize "$run" >/dev/null
  mkdir -p "$OUT/$name/${KIND}_logprobs"
  gzip -9 -c "$run/records.jsonl" > "$OUT/$name/${KIND}_logprobs/records.jsonl.gz"
  [ -f "$run/calibration.jsonl" ] && gzip -9 -c "$run/calibration.jsonl" > "$OUT/$name/${KIND}_logprobs/calibration.jsonl.gz"
  cp "$run/summary.json" "$OUT/$name/${KIND}_logprobs/"
done
