#!/usr/bin/env bash
# results/legal_types (issue 25): which judge catches which legal error type, on the benchmark of
# datasets/legal_types (ContractNLI evidence answers + the legal QA sample, one typed error per variant).
#
#   bash scripts/run_legal_types.sh [OUT_DIR]          (local part: ~20 min on 2 cores; LLM=1 adds the LLM judges on
#                                                     a seeded sample of the test split, ~10-30 s per answer)
#
# Thresholds are fitted on the dev contracts, every figure is on the test contracts (the file's own splits).
# Local judges: quip, cosine, span, a MiniLM cross-encoder fine-tuned on the dev contracts' rows
# (`groundjudge train`, gold labels; the test contracts are never seen), and the nli judge on a MiniLM NLI model
# fine-tuned on SNLI/MNLI (scripts/make_bench_nli_model.py, ~6 min on 2 cores the first time). LLM judges (local Qwen2.5-Coder-1.5B):
# direct P(yes) and the error-types chain (claims + a type per unsupported claim), on N test answers.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-results/legal_types}
GJ=${GJ:-.venv/bin/groundjudge}
PY=${PY:-.venv/bin/python}
DATA=datasets/legal_types/legal_types.jsonl
R=runs/legal_types
mkdir -p "$R" "$OUT"
# 1. the lexical and embedding baselines
$GJ run "$DATA" --judge quip:n=21 --judge cosine --judge span --split test --out "$R/local" --resume --quiet
# 2. a cross-encoder fine-tuned on the dev contracts only (their split label dropped so `train` may use them)
if [ ! -f "$R/gj-legal/groundjudge_card.json" ]; then
  "$PY" - "$DATA" "$R/train_dev_contracts.jsonl" <<'PYEOF'
import json, sys
with open(sys.argv[1]) as src, open(sys.argv[2], "w") as out:
    for line in src:
        row = json.loads(line)
        if row.get("split") == "dev":
            row.pop("split")
            out.write(json.dumps(row) + "\n")
PYEOF
  resume=(); [ -f "$R/gj-legal/pairs/meta.json" ] && resume=(--resume)
  $GJ train "$R/train_dev_contracts.jsonl" --out "$R/gj-legal" --epochs "${EPOCHS:-2}" --dev-fraction 0.2 \
      --max-train 3000 --quiet "${resume[@]}"
fi
$GJ run "$DATA" --judge "crossencoder:model=$R/gj-legal" --split test --out "$R/crossencoder" --resume --quiet
# 3. a generic NLI judge: MiniLM with a 3-way head fine-tuned on SNLI/MNLI (no legal text), built once
NLI_MODEL=${NLI_MODEL:-models/bench-minilm-nli3}
[ -f "$NLI_MODEL/config.json" ] || "$PY" scripts/make_bench_nli_model.py "$NLI_MODEL"
$GJ run "$DATA" --judge "nli:model=$NLI_MODEL,answer_score=entailment" --split test --out "$R/nli" --resume --quiet
runs=("$R/local" "$R/crossencoder" "$R/nli")
# 4. the LLM judges on a seeded sample of the test answers (LLM=1)
if [ "${LLM:-0}" = 1 ]; then
  PORT=${PORT:-8765}
  PORT=$PORT bash scripts/local_llm.sh start
  M="model=openai/qwen,api_base=http://127.0.0.1:$PORT/v1,timeout=900,max_attempts=2,concurrency=1"
  export GROUNDJUDGE_CACHE_DIR=${GROUNDJUDGE_CACHE_DIR:-runs/llm/cache}
  for judge in "direct:$M,score=logprobs" "error_types:$M,against=context,threshold=1.0"; do
    name=${judge%%:*}
    $GJ run "$DATA" --judge "$judge" --split test --sample "${N:-60}" --seed 0 --calibrate-sample "${CAL:-20}" \
        --concurrency 1 --out "$R/$name" --resume --quiet
    runs+=("$R/$name")
  done
fi
for run in "${runs[@]}"; do
  name=$(basename "$run")
  mkdir -p "$OUT/$name"
  gzip -9 -c "$run/records.jsonl" > "$OUT/$name/records.jsonl.gz"
  cp "$run/summary.json" "$OUT/$name/"
done
cp "$R/gj-legal/groundjudge_card.json" "$OUT/crossencoder/model_card.json"
# every judge on the answers all of them judged (the LLM sample, when there is one), and all local judges on all
$GJ report "${runs[@]/#$R/$OUT}" --common --out "$OUT/report" --max-examples 300
rm -f "$OUT/report/report.html"
