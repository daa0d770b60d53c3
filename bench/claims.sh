#!/usr/bin/env bash
# Claims on MultiHop-RAG: the claim layer of corpus NAME built offline (spaCy; resumable, so a
# finished build costs nothing); `claims` with names joined by key alone; near-duplicate names
# merged (bench/claims_merge.py records the threshold study first, as
# bench/results/claims-merge-NAME.md); then `claims` at top 8 claims beside `vector` at K = 8 and 16
# and `metarag` at K = 10 on the development split (and TreeHop's k-fold runs as bench/treehop.sh
# recorded them), both scoring rules, and the share of gold evidence facts a claim covers. Recorded
# as bench/results/claims-NAME.md (+ summaries in bench/results/claims-NAME/). The LLM path (--llm-backend local|openai on 'claims build' and
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
# the build's own record is kept from the run that did the work: a finished build re-run does nothing.
# Names are merged after the first claims run, so that run measures name keys alone.
mhgraph claims build --corpus "$NAME" --llm-backend none --no-merge --no-progress | tee "$RUNS/build.txt"
if ! grep -q "(0 extracted now)" "$RUNS/build.txt" || [ ! -f "$SUMMARIES/build.txt" ]; then
  cp "$RUNS/build.txt" "$SUMMARIES/build.txt"
fi
ids=()
EVAL_CORPUS=$NAME
source bench/eval_runs.sh
# near-duplicate names: the threshold study (read-only), then the merge, once
if [ ! -f "$SUMMARIES/merge.txt" ]; then
  run "claims-offline-keys-k8" --method claims -k 8 --llm-backend none
  python bench/claims_merge.py --corpus "$NAME" > "bench/results/claims-merge-$NAME.md"
  mhgraph claims merge --corpus "$NAME" --examples 15 | tee "$SUMMARIES/merge.txt"
else
  ids+=("$RUNS/claims-offline-keys-k8")
fi
# answers from the 8 best chunks by the offline reader (no model): a floor that compares the evidence
run "claims-offline-k8" --method claims -k 8 --llm-backend none --answer --answer-k 8
run "vector-k8" --method vector -k 8 --llm-backend none --answer
run "vector-k16" --method vector -k 16
run "metarag-k10" --method metarag -k 10
mhgraph eval --compare "${ids[@]}" --runs-dir "$RUNS" > /dev/null
latest=$(ls -d "$RUNS"/compare-* | sort | tail -n 1)
python bench/claims_report.py "$latest/compare.md" "${ids[@]}" --corpus "$NAME" --build "$SUMMARIES/build.txt" \
  --merge "$SUMMARIES/merge.txt" --recorded bench/results/treehop-multihop-rag/treehop-k5-h2.json \
  bench/results/treehop-multihop-rag/treehop-k10-h2.json --questions "$QUESTIONS" --command "bash $0 $*" > "bench/results/claims-$NAME.md"
echo "written bench/results/claims-$NAME.md (per-run summaries in $SUMMARIES/)"
