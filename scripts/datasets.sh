# Sourced by the benchmark scripts: the development sets of ../shared/datasets, each read in its own public
# format. DATA[name] = the files of one set (space-separated).
S=${SHARED_DATASETS:-../shared/datasets}
declare -A DATA=(
  [legal_qa]="datasets/legal_qa/legal_qa.jsonl"
  [summedits]="$(ls "$S"/summedits/summedits_*.json | tr '\n' ' ')"
  [halueval]="$S/halueval_qa/qa_one-turn_data.jsonl $S/halueval_qa/qa_multi-turn_data.jsonl"
  [contractnli]="$S/contractnli/dev.json"
  [truthfulqa]="$S/truthfulqa/TruthfulQA.csv"
  [nli_textfooler]="$(ls "$S"/nli_textfooler/*.tsv | tr '\n' ' ')"
  # MNLI matched is the fine-tuned model's NLI training data: the unseen NLI rows are the other two files
  [nli_unseen]="$S/nli_textfooler/mnli_mismatched.tsv $S/nli_textfooler/snli.tsv"
)
