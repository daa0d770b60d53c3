#!/usr/bin/env bash
# The diversify stage (at most N chunks of one document kept) on the training-free preset: the
# preset alone and with N = 2 and 3 on the development split, official rule, with the k-fold
# choice among the three (bench/compose_report.py) and how each run's top 10 spread over
# documents (bench/document_spread.py).
#   bash bench/compose_diversify.sh [NAME]     (RESUME=1 keeps finished runs; OUT, default
#                                               runs/bench-compose-diversify)
# Every stage offline. Writes bench/results/compose-diversify-NAME.md and .json; per-run summaries
# in bench/results/compose-diversify-NAME/.
set -euo pipefail
cd "$(dirname "$0")/.."
NAME=${1:-multihop-rag}
QUESTIONS=${QUESTIONS:-../shared/data/multihop-rag/MultiHopRAG.json}
RUNS=${OUT:-runs/bench-compose-diversify}
EVAL_CORPUS=$NAME
SUMMARIES=bench/results/compose-diversify-$NAME
mkdir -p "$RUNS" "$SUMMARIES"
[ -f "$QUESTIONS" ] || { echo "error: $QUESTIONS: file not found" >&2; exit 1; }
ids=()
source bench/eval_runs.sh
OFF=(--llm-backend none -k 10)
run p1-filter-hybrid --method compose --stages "filter=rules candidates=hybrid" "${OFF[@]}"
run d2-filter-hybrid-diversify2 --method compose --stages "filter=rules candidates=hybrid diversify=2" "${OFF[@]}"
run d3-filter-hybrid-diversify3 --method compose --stages "filter=rules candidates=hybrid diversify=3" "${OFF[@]}"
python bench/compose_report.py --name "$NAME" --questions "$QUESTIONS" --command "bash $0 $NAME" \
  --json "bench/results/compose-diversify-$NAME.json" "${ids[@]}" > "bench/results/compose-diversify-$NAME.md.new"
python bench/document_spread.py --md "bench/results/compose-diversify-$NAME.md.new" \
  --json "bench/results/compose-diversify-$NAME.json" "${ids[@]}"
mv "bench/results/compose-diversify-$NAME.md.new" "bench/results/compose-diversify-$NAME.md"
echo "written bench/results/compose-diversify-$NAME.md and .json"
