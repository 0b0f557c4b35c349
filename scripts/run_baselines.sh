#!/usr/bin/env bash
# Regenerates results/baselines/: the three local baselines on every development set in ../shared/datasets.
# Thresholds are fitted on each set's dev part (its own split, or 30% of its documents/questions by hash)
# and reported on the rest. Usage: bash scripts/run_baselines.sh [OUT_DIR]   (about 20 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-results/baselines}
J=(--judge quip:n=21 --judge cosine --judge span)
source scripts/datasets.sh
for name in legal_qa summedits halueval contractnli truthfulqa nli_textfooler; do
  run="runs/baselines/$name"
  rm -rf "$run"
  # shellcheck disable=SC2086
  groundjudge run ${DATA[$name]} "${J[@]}" --out "$run" --quiet
  mkdir -p "$OUT/$name"
  gzip -9 -c "$run/records.jsonl" > "$OUT/$name/records.jsonl.gz"
  [ -f "$run/calibration.jsonl" ] && gzip -9 -c "$run/calibration.jsonl" > "$OUT/$name/calibration.jsonl.gz"
  cp "$run/summary.json" "$OUT/$name/"
  groundjudge report "$OUT/$name" --out "$OUT/$name/report" --max-examples 300
  rm -f "$OUT/$name/report/report.html"   # regenerate it locally; the PNGs and report.md are kept
done
