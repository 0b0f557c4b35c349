#!/usr/bin/env bash
# Regenerates results/llm/: the LLM chains with a real local model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M served by
# llama.cpp, scripts/local_llm.sh) on a fixed seeded sample of each development set's evaluation part, and the
# cascade of the best model-free local judge (quip or cosine, chosen on dev) into the claims chain.
#
#   bash scripts/run_llm_judges.sh [OUT_DIR]      (hours on 2 cores: ~3-60 s per LLM call)
#
# The sample is drawn from the same evaluation part as results/local (--dev-fraction 0.6 --split test, --sample N
# --seed 0), but for the pure LLM judges on the legal sample, which judge all its 112 answers.
# LLM judges get their decision rule in the spec (claims: every claim supported; no calibration calls), so the
# dev part is never sent to the LLM. The claims chain's calls are cached (runs/llm/cache): the cascade's
# escalated answers and the error_types chain reuse them; their summaries give the measured latency and
# `latency_s_uncached`, which adds each reused reply's original latency back. The cascade's local judge uses
# the threshold fitted in results/local and escalates the answers whose local score lies in the band that
# holds the ESCALATE share (0.4) of dev scores nearest that threshold. Set SETS, N, JUDGES to run a part.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-results/llm}
GJ=${GJ:-.venv/bin/groundjudge}
PORT=${PORT:-8765}
N=${N:-200}
PORT=$PORT bash scripts/local_llm.sh start
API="api_base=http://127.0.0.1:$PORT/v1"
LLM="model=openai/qwen,$API,timeout=900,max_attempts=2,concurrency=1"
source scripts/datasets.sh
# the cascade's local judge, its threshold and band: chosen on the dev part of results/local (scripts/cascade_local.py)
ESCALATE=${ESCALATE:-0.4}
export GROUNDJUDGE_CACHE_DIR=${GROUNDJUDGE_CACHE_DIR:-runs/llm/cache}
# cheapest sets first (short contexts), so a partial run still covers most of them
for name in ${SETS:-truthfulqa halueval nli_unseen legal_qa summedits contractnli}; do
  read -r local threshold range _ <<< "$("${PY:-.venv/bin/python}" scripts/cascade_local.py "results/local/$name" \
      --escalate "$ESCALATE")"
  [[ $local == *:* ]] && local="{$local,threshold=$threshold}" || local="$local:threshold=$threshold"
  declare -A J=(
    [direct]="direct:$LLM"
    [claims]="claims:$LLM,threshold=1.0"
    [cascade]="cascade:local=$local,llm={claims:$LLM,threshold=1.0},band=$range"
    [triplets]="triplets:$LLM"
    [error_types]="error_types:$LLM,threshold=1.0"
  )
  judges=${JUDGES:-direct claims cascade}
  [ "$name" = legal_qa ] && judges=${JUDGES:-direct claims cascade error_types triplets}
  for judge in $judges; do
    # one judge per run, one answer at a time: the server answers one request at a time, so latency is the
    # judge's own, not time spent queueing behind other answers
    run="runs/llm/$name/$judge"
    # the evaluation part of results/local (--split test: the legal test split, elsewhere 40% by group hash);
    # on the small legal sample the pure LLM judges take all 112 answers (nothing was trained or fitted on them)
    split=(--split test)
    [ "$name" = legal_qa ] && [ "$judge" != cascade ] && split=()
    # a fresh server for every run: llama-cpp-python's memory grows with every schema-constrained request
    PORT=$PORT bash scripts/local_llm.sh restart >/dev/null
    # shellcheck disable=SC2086
    $GJ run ${DATA[$name]} --judge "${J[$judge]}" --dev-fraction 0.6 "${split[@]}" --sample "$N" --seed 0 --concurrency 1 \
        --out "$run" --resume --quiet
    mkdir -p "$OUT/$name/$judge"
    gzip -9 -c "$run/records.jsonl" > "$OUT/$name/$judge/records.jsonl.gz"
    cp "$run/summary.json" "$OUT/$name/$judge/"
  done
  # the report sets the LLM judges beside every local judge of results/local on the same examples (--common)
  runs=("results/local/$name"); for d in "$OUT/$name"/*/; do [ -f "$d/summary.json" ] && runs+=("$d"); done
  $GJ report "${runs[@]}" --common --out "$OUT/$name/report" --max-examples 300
  rm -f "$OUT/$name/report/report.html"
done
