#!/usr/bin/env bash
# Regenerates results/local/: every local judge on every development set of ../shared/datasets, with the
# cross-encoder fine-tuned here (scripts/train_local_judge.sh) evaluated only on data it never saw.
#
#   bash scripts/run_local_judges.sh MODEL_DIR [OUT_DIR]      (about an hour on 2 cores)
#
# Split: --dev-fraction 0.6, the fraction the model was trained with (--run-dev-fraction 0.6): thresholds are
# fitted on each set's dev part (60% of its documents / questions by hash; the legal sample's own dev split),
# which is also the only part the model trained on, and every number is on the other 40% (the legal sample's
# test split). TruthfulQA, MNLI mismatched and SNLI were never trained on at all; MNLI matched was (--nli-mix)
# and is left out here.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:?usage: run_local_judges.sh MODEL_DIR [OUT_DIR]}
OUT=${2:-results/local}
GJ=${GJ:-.venv/bin/groundjudge}
# nli and crossencoder score an answer by its weakest claim's entailment probability (continuous, so the
# threshold fitted on dev has something to work with); views by its lowest support mass.
J=(--judge quip:n=21 --judge cosine --judge span --judge "nli:model=$MODEL,answer_score=entailment"
   --judge "views:model=$MODEL" --judge "crossencoder:model=$MODEL,answer_score=entailment")
source scripts/datasets.sh
for name in ${SETS:-legal_qa summedits halueval contractnli truthfulqa nli_unseen}; do
  run="runs/local/$name"
  if [ ! -f "$run/summary.json" ]; then
    # shellcheck disable=SC2086
    $GJ run ${DATA[$name]} "${J[@]}" --dev-fraction 0.6 --out "$run" --resume --quiet
  fi
  mkdir -p "$OUT/$name"
  gzip -9 -c "$run/records.jsonl" > "$OUT/$name/records.jsonl.gz"
  [ -f "$run/calibration.jsonl" ] && gzip -9 -c "$run/calibration.jsonl" > "$OUT/$name/calibration.jsonl.gz"
  cp "$run/summary.json" "$OUT/$name/"
  $GJ report "$OUT/$name" --out "$OUT/$name/report" --max-examples 300
  rm -f "$OUT/$name/report/report.html"   # regenerate it locally; the PNGs and report.md are kept
done
