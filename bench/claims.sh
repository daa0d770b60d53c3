#!/usr/bin/env bash
# Claims on MultiHop-RAG: the claim layer of corpus NAME built offline (spaCy; resumable, so a
# finished build costs nothing), then `claims` at top 8 claims beside `vector` at K = 8 and 16 and
# `metarag` at K = 10 on the development split, both scoring rules, and the share of gold
# evidence facts a claim covers. Recorded as bench/results/claims-NAME.md (+ summaries in
# bench/results/claims-NAME/). The LLM path (--llm-backend local|openai on 'claims build' and
# 'eval') is not part of this run: the local model is far too slow for 6,500 chunks here.
#   bash bench/claims.sh [QUESTIONS_JSON] [NAME]        (RESUME=1 keeps finished runs)
set -euo pipefail
cd "$(dirname "$0")/.."
QUESTIONS=${1:-../shared/data/multihop-rag/MultiHopRAG.json}
NAME=${2:-multihop-rag}
[ -f "$QUESTIONS" ] || { echo "error: $QUESTIONS: file not found" >&2; exit 1; }
RUNS=runs/bench-claims-$NAME
SUMMARIES=bench/results/claims-$NAME
mkdir -p "$RUNS" "$SUMMARIES"
# the build's own record is kept from the run that did the work: a finished build re-run does nothing
mhgraph claims build --corpus "$NAME" --llm-backend none --no-progress | tee "$RUNS/build.txt"
if ! grep -q "(0 extracted now)" "$RUNS/build.txt" || [ ! -f "$SUMMARIES/build.txt" ]; then
  cp "$RUNS/build.txt" "$SUMMARIES/build.txt"
fi
ids=()
EVAL_CORPUS=$NAME
source bench/eval_runs.sh
run "claims-offline-k8" --method claims -k 8 --llm-backend none
run "vector-k8" --method vector -k 8
run "vector-k16" --method vector -k 16
run "metarag-k10" --method metarag -k 10
mhgraph eval --compare "${ids[@]}" --runs-dir "$RUNS" > /dev/null
latest=$(ls -d "$RUNS"/compare-* | sort | tail -n 1)
python bench/claims_report.py "$latest/compare.md" "${ids[@]}" --corpus "$NAME" --build "$SUMMARIES/build.txt" \
  --questions "$QUESTIONS" --command "bash $0 $*" > "bench/results/claims-$NAME.md"
echo "written bench/results/claims-$NAME.md (per-run summaries in $SUMMARIES/)"
