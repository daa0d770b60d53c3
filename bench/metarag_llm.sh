#!/usr/bin/env bash
# Multi-Meta-RAG's own filter extractor, the LLM (`--filter-extractor llm`), on a stratified slice:
# the local model reads a question in several seconds on this CPU, hours for the whole split. The
# first PER_TYPE questions of each type (default 20), each extractor (rules, reference, llm) with
# vector and hybrid candidates, K' = 10, no reranker; filter quality against the evidence and the
# agreement with the original's GPT-3.5 filters (reference). The llm runs use MHGRAPH_LLM_BACKEND
# (default local: Qwen2.5-Coder-1.5B-Instruct from the local-llm extra; or openai with
# OPENAI_BASE_URL / OPENAI_API_KEY / --llm-model via LLM_ARGS). The first llm run calls the model
# (--no-cache) and is the one whose filter time counts; the second reads the same replies from the
# reply cache. Recorded as bench/results/metarag-llm-NAME.md (+ summaries in bench/results/metarag-llm-NAME/).
#   bash bench/metarag_llm.sh [QUESTIONS_JSON] [NAME]        (RESUME=1 keeps finished runs)
set -euo pipefail
cd "$(dirname "$0")/.."
QUESTIONS=${1:-../shared/data/multihop-rag/MultiHopRAG.json}
NAME=${2:-multihop-rag}
PER_TYPE=${PER_TYPE:-20}
BACKEND=${MHGRAPH_LLM_BACKEND:-local}
[ -f "$QUESTIONS" ] || { echo "error: $QUESTIONS: file not found" >&2; exit 1; }
RUNS=runs/bench-metarag-llm-$NAME
SUMMARIES=bench/results/metarag-llm-$NAME
mkdir -p "$RUNS" "$SUMMARIES"
ids=()
EVAL_CORPUS=$NAME
source bench/eval_runs.sh
slice=(--per-type "$PER_TYPE" -k 10 --no-rerank)
# shellcheck disable=SC2086
run "slice$PER_TYPE-metarag-llm-hybrid-k10" --method metarag --filter-extractor llm --llm-backend "$BACKEND" \
  ${LLM_ARGS:-} --no-cache --metarag-search hybrid "${slice[@]}"
# shellcheck disable=SC2086
run "slice$PER_TYPE-metarag-llm-k10" --method metarag --filter-extractor llm --llm-backend "$BACKEND" \
  ${LLM_ARGS:-} "${slice[@]}"
for extractor in rules reference; do
  run "slice$PER_TYPE-metarag-$extractor-k10" --method metarag --filter-extractor "$extractor" "${slice[@]}"
  run "slice$PER_TYPE-metarag-$extractor-hybrid-k10" --method metarag --filter-extractor "$extractor" \
    --metarag-search hybrid "${slice[@]}"
done
write_report "Multi-Meta-RAG's LLM filter extractor ($BACKEND)" "bench/results/metarag-llm-$NAME.md" "$@"
