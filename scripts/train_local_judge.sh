#!/usr/bin/env bash
# Trains the cross-encoder published in results/: the packaged MiniLM fine-tuned on the development sets,
# only on what `groundjudge run --dev-fraction 0.6` calibrates on (so results/local/ evaluates it on unseen
# documents), with 1,500 synthetic edits and MNLI-matched rows for a 3-way head.
#
#   bash scripts/train_local_judge.sh [OUT_DIR]     (about 25 minutes on 2 cores; --resume after an interruption)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-models/gj-minilm}
S=../shared/datasets
GJ=${GJ:-.venv/bin/groundjudge}
# shellcheck disable=SC2046
$GJ train datasets/legal_qa/legal_qa.jsonl $(ls $S/summedits/summedits_*.json) $S/halueval_qa/qa_one-turn_data.jsonl \
    $S/contractnli/dev.json --out "$OUT" --recipe pairs --synthetic 1500 --nli-mix $S/nli_textfooler/mnli_matched.tsv \
    --run-dev-fraction 0.6 --max-train 5000 --epochs 3 --lr 1e-4 --time-limit 45 --eval-steps 150 --patience 3 ${RESUME:+--resume}
