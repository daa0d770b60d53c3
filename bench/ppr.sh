#!/usr/bin/env bash
# Graph traversal (`ppr`) beside vector, claims and metarag on the development split, per question
# type (issue: "ppr alone, beside metarag and vector, per question type"): ppr with its defaults
# (100 candidate chunks seeded), as HippoRAG 2 seeds (every chunk, --ppr-candidates 0), and with
# the dense seeds weighted ten times HippoRAG 2's (0.5), with 5 and 3 seed facts; then whether the
# graph's names join a question's gold chunks more than they join vector's near misses
# (bench/ppr_bridges.py: bench/results/ppr-bridges-NAME.md and .json).
# Needs the corpus's claim layer with its synonym edges (mhgraph claims build / claims synonyms).
#   bash bench/ppr.sh [NAME]     (RESUME=1 keeps finished runs; OUT, default runs/bench-ppr)
# Writes bench/results/ppr-NAME.md and .json (bench/ppr_report.py); per-run summaries in
# bench/results/ppr-NAME/.
set -euo pipefail
cd "$(dirname "$0")/.."
NAME=${1:-multihop-rag}
QUESTIONS=${QUESTIONS:-../shared/data/multihop-rag/MultiHopRAG.json}
RUNS=${OUT:-runs/bench-ppr}
EVAL_CORPUS=$NAME
SUMMARIES=bench/results/ppr-$NAME
mkdir -p "$RUNS" "$SUMMARIES"
[ -f "$QUESTIONS" ] || { echo "error: $QUESTIONS: file not found" >&2; exit 1; }
ids=()
source bench/eval_runs.sh
run ppr-k10 --method ppr -k 10
run ppr-all-k10 --method ppr --ppr-candidates 0 -k 10
run ppr-dense-k10 --method ppr --ppr-passage-weight 0.5 -k 10
run ppr-dense-facts3-k10 --method ppr --ppr-passage-weight 0.5 --ppr-facts 3 -k 10
run vector-k10 --method vector -k 10
run metarag-rules-k10 --method metarag --filter-extractor rules -k 10 --no-rerank
run claims-offline-k8 --method claims -k 8 --llm-backend none
python bench/ppr_report.py --name "$NAME" --questions "$QUESTIONS" --command "bash $0 $NAME" \
  --json "bench/results/ppr-$NAME.json" "${ids[@]}" > "bench/results/ppr-$NAME.md"
echo "written bench/results/ppr-$NAME.md and .json"
python bench/ppr_bridges.py "$RUNS/vector-k10" --corpus "$NAME" --questions "$QUESTIONS" --command "bash $0 $NAME" \
  --out "bench/results/ppr-bridges-$NAME"
