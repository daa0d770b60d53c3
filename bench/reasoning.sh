#!/usr/bin/env bash
# IR-CoT (`ircot`) and query decomposition (`decompose`) on MultiHop-RAG, beside the one-hop
# baselines at the same K: the offline strategies (labelled, no model) on the whole split, at
# 256/32-token chunks and, for IR-CoT, at the comparative study's 1,000/200-token chunks (corpus
# NAME-1000, ingested here when missing); then the language model on stratified slices (the first
# N questions of each type: PER_TYPE, default 5, for IR-CoT at K = 5, shown 80 words of each
# paragraph (IRCOT_LLM_ARGS), as the local model takes about half a minute per reasoning step on
# this CPU; DECOMPOSE_PER_TYPE, default 10, for decomposition at N = 3, one call per question)
# beside the offline strategy and BM25 / vector on the same slice; the model is called for every
# question (--no-cache), so its time counts. The model: MHGRAPH_LLM_BACKEND
# (default local: Qwen2.5-Coder-1.5B-Instruct from the local-llm extra; or openai with
# OPENAI_BASE_URL / OPENAI_API_KEY and LLM_ARGS="--llm-model NAME"); LLM=0 skips those runs.
# `-original` runs search every step over the whole corpus, as the published method did; the
# others restrict a step whose thought names outlets to their chunks (--step-sources, the default).
# The three demonstration questions (mhgraph/reasoning/demonstrations.json) are left out of the
# ircot and decompose runs. Recorded as bench/results/reasoning-NAME.md (+ summaries in
# bench/results/reasoning-NAME/).
#   bash bench/reasoning.sh [QUESTIONS_JSON] [NAME]        (RESUME=1 keeps finished runs)
set -euo pipefail
cd "$(dirname "$0")/.."
QUESTIONS=${1:-../shared/data/multihop-rag/MultiHopRAG.json}
NAME=${2:-multihop-rag}
PER_TYPE=${PER_TYPE:-5}
DECOMPOSE_PER_TYPE=${DECOMPOSE_PER_TYPE:-10}
IRCOT_LLM_ARGS=${IRCOT_LLM_ARGS:---paragraph-words 80}
BACKEND=${MHGRAPH_LLM_BACKEND:-local}
[ -f "$QUESTIONS" ] || { echo "error: $QUESTIONS: file not found" >&2; exit 1; }
CORPUS_FILE=$(dirname "$QUESTIONS")/corpus.json
RUNS=runs/bench-reasoning-$NAME
SUMMARIES=bench/results/reasoning-$NAME
mkdir -p "$RUNS" "$SUMMARIES"
if ! mhgraph corpora | grep -q "^$NAME-1000 "; then
  mhgraph ingest "$CORPUS_FILE" --corpus "$NAME-1000" --chunk-size 1000 --chunk-overlap 200 --no-progress
fi
ids=()
source bench/eval_runs.sh
offline=(--llm-backend none)
EVAL_CORPUS=$NAME
for k in 5 10; do
  run "bm25-k$k" --method bm25 -k "$k"
  run "vector-k$k" --method vector -k "$k"
  run "ircot-offline-k$k" --method ircot -k "$k" "${offline[@]}"
  run "ircot-offline-original-k$k" --method ircot -k "$k" --no-step-sources "${offline[@]}"
done
for n in 3 4 5; do run "decompose-offline-n$n-k5" --method decompose --sub-questions "$n" -k 5 "${offline[@]}"; done
EVAL_CORPUS=$NAME-1000
for k in 5 10; do
  run "c1000-bm25-k$k" --method bm25 -k "$k"
  run "c1000-ircot-offline-k$k" --method ircot -k "$k" "${offline[@]}"
  run "c1000-ircot-offline-original-k$k" --method ircot -k "$k" --no-step-sources "${offline[@]}"
done
if [ "${LLM:-1}" = 1 ]; then
  EVAL_CORPUS=$NAME
  slice=(--per-type "$DECOMPOSE_PER_TYPE")
  # shellcheck disable=SC2086
  run "slice$DECOMPOSE_PER_TYPE-decompose-llm-n3-k5" --method decompose --sub-questions 3 -k 5 \
    --llm-backend "$BACKEND" --no-cache ${LLM_ARGS:-} "${slice[@]}"
  run "slice$DECOMPOSE_PER_TYPE-decompose-offline-n3-k5" --method decompose --sub-questions 3 -k 5 "${offline[@]}" \
    "${slice[@]}"
  run "slice$DECOMPOSE_PER_TYPE-vector-k15" --method vector -k 15 "${slice[@]}"
  slice=(--per-type "$PER_TYPE")
  # shellcheck disable=SC2086
  run "slice$PER_TYPE-ircot-llm-k5" --method ircot -k 5 --llm-backend "$BACKEND" --no-cache ${LLM_ARGS:-} ${IRCOT_LLM_ARGS} \
    "${slice[@]}"
  run "slice$PER_TYPE-ircot-offline-k5" --method ircot -k 5 "${offline[@]}" "${slice[@]}"
  run "slice$PER_TYPE-bm25-k5" --method bm25 -k 5 "${slice[@]}"
fi
mhgraph eval --compare "${ids[@]}" --runs-dir "$RUNS" > /dev/null
latest=$(ls -d "$RUNS"/compare-* | sort | tail -n 1)
python bench/reasoning_report.py "$latest/compare.md" "${ids[@]}" --questions "$QUESTIONS" --name "$NAME" \
  --command "bash $0 $*" > "bench/results/reasoning-$NAME.md"
echo "written bench/results/reasoning-$NAME.md (per-run summaries in $SUMMARIES/)"
