#!/usr/bin/env bash
# results/distill (issue 22): the local Qwen claims chain (the teacher) labels unlabelled training answers of
# SummEdits and nli_unseen (claims verified against the documents), a MiniLM cross-encoder (the student) learns its claim verdicts, and the student is
# measured on the held-out documents of both sets beside the teacher and the MiniLM trained on gold labels.
#
#   bash scripts/run_distill.sh [OUT_DIR]      (the teacher is the slow part: about 10-60 s per answer on 2 cores;
#                                               N answers in all, sampled over both sets' training groups)
#
# Training text: only what `groundjudge run --dev-fraction 0.6` calibrates on (--run-dev-fraction 0.6), so the
# evaluation answers (--split test --sample 200 --seed 0, the same 200 per set as results/llm) are of documents
# neither the teacher's labels nor the student ever saw. No gold label is read for training.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-results/distill}
GJ=${GJ:-.venv/bin/groundjudge}
PORT=${PORT:-8765}
N=${N:-30}
EPOCHS=${EPOCHS:-3}
PORT=$PORT bash scripts/local_llm.sh start
LLM="model=openai/qwen,api_base=http://127.0.0.1:$PORT/v1,timeout=900,max_attempts=2,concurrency=1"
source scripts/datasets.sh
export GROUNDJUDGE_CACHE_DIR=${GROUNDJUDGE_CACHE_DIR:-runs/llm/cache}
STUDENT=runs/distill/student
# shellcheck disable=SC2086
$GJ train ${DATA[summedits]} ${DATA[nli_unseen]} --teacher "claims:$LLM,against=context,threshold=1.0" \
    --teacher-sample "$N" --teacher-concurrency 1 \
    --run-dev-fraction 0.6 --dev-fraction 0.2 --epochs "$EPOCHS" --out "$STUDENT" --resume --quiet
mkdir -p "$OUT/student"
cp "$STUDENT/groundjudge_card.json" "$STUDENT/README.md" "$OUT/student/"
gzip -9 -c "$STUDENT/teacher/records.jsonl" > "$OUT/student/teacher_records.jsonl.gz"
for name in nli_unseen summedits; do
  run="runs/distill/$name/student"
  # shellcheck disable=SC2086
  $GJ run ${DATA[$name]} --judge "crossencoder:model=$STUDENT" --dev-fraction 0.6 --split test --sample 200 \
      --seed 0 --out "$run" --resume --quiet
  mkdir -p "$OUT/$name/student"
  gzip -9 -c "$run/records.jsonl" > "$OUT/$name/student/records.jsonl.gz"
  cp "$run/summary.json" "$OUT/$name/student/"
  # beside the teacher (results/llm claims chain) and the gold-trained MiniLM (results/local), same answers
  $GJ report "$OUT/$name/student" "results/llm/$name/claims" "results/local/$name" --common \
      --out "$OUT/$name/report" --max-examples 200
  rm -f "$OUT/$name/report/report.html"
done
