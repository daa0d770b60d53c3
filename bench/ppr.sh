#!/usr/bin/env bash
# Graph traversal (`ppr`) beside vector, claims and metarag on the development split, per question
# type (issue: "ppr alone, beside metarag and vector, per question type"): ppr with its defaults
# (100 candidate chunks seeded at 0.5, the named sources and dates seeded at 32), with metadata
# weights 8 and 64, 8 with HippoRAG 2's dense weight (0.05), without the metadata seeds, with
# HippoRAG 2's dense weight and no metadata seeds, and as HippoRAG 2 seeds (every chunk,
# --ppr-candidates 0), the defaults chosen among these 5-fold by question; the seeds alone without
# the walk (damping 0); the filtered hybrid search with and without ppr as its expansion; then
# whether the graph's names join a question's gold chunks more than they join vector's near misses
# (bench/ppr_bridges.py: bench/results/ppr-bridges-NAME.md and .json).
# Needs the corpus's claim layer with its synonym edges (mhgraph claims build / claims synonyms).
#   bash bench/ppr.sh [NAME]     (RESUME=1 keeps finished runs; OUT, default runs/bench-ppr)
# RESUME=1 reuses a run by its name: after ppr's defaults change, start from an empty OUT.
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
run ppr-meta8-k10 --method ppr --ppr-metadata-weight 8 -k 10
run ppr-meta64-k10 --method ppr --ppr-metadata-weight 64 -k 10
run ppr-meta8-pw005-k10 --method ppr --ppr-metadata-weight 8 --ppr-passage-weight 0.05 -k 10
run ppr-no-metadata-k10 --method ppr --ppr-metadata-weight 0 -k 10
run ppr-hipporag2-k10 --method ppr --ppr-metadata-weight 0 --ppr-passage-weight 0.05 -k 10
run ppr-all-hipporag2-k10 --method ppr --ppr-candidates 0 --ppr-metadata-weight 0 --ppr-passage-weight 0.05 -k 10
# The walk's ablation: damping 0 keeps the seeds' own weights (no step along an edge). Not a
# candidate setting, so not among those chosen below.
run ppr-nowalk-k10 --method ppr --ppr-damping 0 -k 10
run vector-k10 --method vector -k 10
run metarag-rules-k10 --method metarag --filter-extractor rules -k 10 --no-rerank
run claims-offline-k8 --method claims -k 8 --llm-backend none
# ppr with its defaults as an expansion of the filtered hybrid search (bench/compose.sh's p1 and p2,
# whose ppr had no metadata seeds): whether the walk adds to a search the filter already narrowed
run compose-filter-hybrid-k10 --method compose --stages "filter=rules candidates=hybrid" --llm-backend none -k 10
run compose-filter-hybrid-ppr-k10 --method compose --stages "filter=rules candidates=hybrid expand=ppr" \
  --llm-backend none -k 10
# ppr's settings (the metadata and dense seed weights) chosen 5-fold by question among its runs.
choose=()
for id in ppr-k10 ppr-meta8-k10 ppr-meta64-k10 ppr-meta8-pw005-k10 ppr-no-metadata-k10 ppr-hipporag2-k10 \
  ppr-all-hipporag2-k10; do
  choose+=(--choose "$id")
done
python bench/ppr_report.py --name "$NAME" --questions "$QUESTIONS" --command "bash $0 $NAME" "${choose[@]}" \
  --json "bench/results/ppr-$NAME.json" "${ids[@]}" > "bench/results/ppr-$NAME.md"
echo "written bench/results/ppr-$NAME.md and .json"
python bench/ppr_bridges.py "$RUNS/vector-k10" --corpus "$NAME" --questions "$QUESTIONS" --command "bash $0 $NAME" \
  --out "bench/results/ppr-bridges-$NAME"
