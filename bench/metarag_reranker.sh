#!/usr/bin/env bash
# Multi-Meta-RAG with the cross-encoder trained here: `mhgraph reranker train` (k-fold by question,
# so every question is reranked by the fold model that never saw it: in-domain trained, and the
# report says so), its order alone and fused with the search's score (--rerank-weight), beside the
# same searches without it and the vector baseline. One table (our
# scoring and the official rule), recorded as bench/results/metarag-reranker-NAME.md (+ per-run
# summaries in bench/results/metarag-reranker-NAME/).
#   bash bench/metarag_reranker.sh [QUESTIONS_JSON] [NAME]
# Defaults: ../shared/data/multihop-rag/MultiHopRAG.json, NAME=multihop-rag (the corpus name; ingest
# it first). MODEL (default models/reranker-NAME) is trained first when it holds no folds.json:
# 3 folds, 4 near misses per question from the hybrid candidates, 256 tokens, bfloat16 where the
# CPU has AMX (about 25 min a fold on 2 cores). RESUME=1 keeps the runs already in runs/.
set -euo pipefail
cd "$(dirname "$0")/.."
QUESTIONS=${1:-../shared/data/multihop-rag/MultiHopRAG.json}
NAME=${2:-multihop-rag}
MODEL=${MODEL:-models/reranker-$NAME}
[ -f "$QUESTIONS" ] || { echo "error: $QUESTIONS: file not found" >&2; exit 1; }
if [ ! -f "$MODEL/folds.json" ]; then
  mhgraph reranker train --corpus "$NAME" --questions "$QUESTIONS" --out "$MODEL" --folds 3 --negatives 4 \
    --max-length 256 --no-final --metarag-search hybrid
fi
RUNS=runs/bench-metarag-reranker-$NAME
SUMMARIES=bench/results/metarag-reranker-$NAME
mkdir -p "$RUNS" "$SUMMARIES"
ids=()
EVAL_CORPUS=$NAME
source bench/eval_runs.sh
run "vector-k10" --method vector -k 10
run "metarag-rules-k10" --method metarag --filter-extractor rules -k 10 --no-rerank
run "metarag-rules-hybrid-k10" --method metarag --filter-extractor rules -k 10 --no-rerank --metarag-search hybrid
# reranked by the fold models: their order alone (as the original ranks), and fused with the
# search's score (--rerank-weight 0.5, an mhgraph option), on vector candidates (the original
# pipeline) and hybrid ones
kfold=(--reranker "kfold:$MODEL")
run "metarag-rules-hybrid-kfold-k10" --method metarag --filter-extractor rules -k 10 "${kfold[@]}" \
  --metarag-search hybrid
run "metarag-rules-kfold-w0.5-k10" --method metarag --filter-extractor rules -k 10 "${kfold[@]}" --rerank-weight 0.5
# K' = 6 is the first 6 of the K' = 10 list (the same order, cut): Hits@4 is the same
run "metarag-rules-hybrid-kfold-w0.5-k10" --method metarag --filter-extractor rules -k 10 "${kfold[@]}" \
  --rerank-weight 0.5 --metarag-search hybrid
write_report "Multi-Meta-RAG with the cross-encoder trained here" "bench/results/metarag-reranker-$NAME.md" "$@"
