#!/usr/bin/env bash
# Multi-Meta-RAG on MultiHop-RAG: every filter extractor (rules, reference, gold; llm where
# MHGRAPH_LLM_BACKEND / an endpoint is configured and WITH_LLM=1), in-index filtering, K = 20
# candidates by vector (the original) and by hybrid search, K' = 6 and 10; each reranker in
# RERANKERS on the rules filter at K' = 10; the exact form once; the vector baseline beside them; one table (our scoring and the official rule) and the filter quality per extractor,
# recorded as bench/results/metarag-NAME.md (+ per-run summaries in bench/results/metarag-NAME/).
#   bash bench/metarag.sh [QUESTIONS_JSON] [NAME]
# Defaults: ../shared/data/multihop-rag/MultiHopRAG.json, NAME=multihop-rag (the corpus name;
# ingest it first: mhgraph ingest ../shared/data/multihop-rag/corpus.json). RESUME=1 keeps the
# runs already in runs/bench-metarag-NAME/. RERANKERS (space-separated specs run on the whole
# split, default "bi-encoder:bge-small-en-v1.5"), SLICE_RERANKERS (on the first 50 questions of
# each type, default "nanoranker": 33 pairs/s here), EXTRACTORS (default "rules reference gold").
set -euo pipefail
cd "$(dirname "$0")/.."
QUESTIONS=${1:-../shared/data/multihop-rag/MultiHopRAG.json}
NAME=${2:-multihop-rag}
RERANKERS=${RERANKERS-bi-encoder:bge-small-en-v1.5}
SLICE_RERANKERS=${SLICE_RERANKERS-nanoranker}
EXTRACTORS=${EXTRACTORS:-rules reference gold}
[ "${WITH_LLM:-0}" = 1 ] && EXTRACTORS="$EXTRACTORS llm"
[ -f "$QUESTIONS" ] || { echo "error: $QUESTIONS: file not found" >&2; exit 1; }
RUNS=runs/bench-metarag-$NAME
SUMMARIES=bench/results/metarag-$NAME
mkdir -p "$RUNS" "$SUMMARIES"
ids=()
EVAL_CORPUS=$NAME
source bench/eval_runs.sh
for k in 6 10; do run "vector-k$k" --method vector -k "$k"; done
for extractor in $EXTRACTORS; do
  for k in 6 10; do
    run "metarag-$extractor-k$k" --method metarag --filter-extractor "$extractor" -k "$k" --no-rerank
    run "metarag-$extractor-hybrid-k$k" --method metarag --filter-extractor "$extractor" -k "$k" --no-rerank \
      --metarag-search hybrid
  done
done
# rerankers cost up to seconds per question on this CPU: the rules filter, K' = 10 only; those in
# SLICE_RERANKERS on a stratified slice (the first 50 questions of each type) only
for reranker in $RERANKERS; do
  run "metarag-rules-$(echo "$reranker" | tr ':/' '--')-k10" --method metarag --filter-extractor rules -k 10 \
    --reranker "$reranker"
done
for reranker in $SLICE_RERANKERS; do
  run "slice50-metarag-rules-k10" --method metarag --filter-extractor rules -k 10 --no-rerank --per-type 50
  run "slice50-metarag-rules-$(echo "$reranker" | tr ':/' '--')-k10" --method metarag --filter-extractor rules \
    -k 10 --reranker "$reranker" --per-type 50
done
run "metarag-rules-exact-k10" --method metarag --filter-extractor rules --filter-mode exact -k 10 --no-rerank
write_report "Multi-Meta-RAG" "bench/results/metarag-$NAME.md" "$@"
