#!/usr/bin/env bash
# The in-domain cross-encoder against its 3-layer student (issue 26: the rerank stage under 300 ms per
# question on 20 candidates on an AVX2-only CPU, keeping the quality; 3 layers took 262 ms p50 there,
# docs/methods/compose.md, "Measured on an AVX2-only CPU"): the teacher's int8 ONNX export and the
# student's, each on the same 20 candidates of the same questions, 128-token pairs, fused with the
# search's score at 0.5, measured as this CPU runs them (bench/rerank_cost.py; its gold-chunk measures
# are ours, not the official rule, and do not depend on the CPU).
#   - the teacher: compose_setup's trained_in_domain_reranker (NEGATIVES near misses, default 8), made
#     when missing (about 25 min on 2 AVX-512 cores);
#   - the student: compose_setup's distilled_reranker, learning the teacher's logits on
#     DISTILL_NEGATIVES near misses a question (default here 16) for DISTILL_EPOCHS epochs (default 1),
#     made when missing.
#   -> bench/results/rerank-distill-teacher-neg$NEGATIVES-NAME.md and
#      rerank-distill-student-neg$DISTILL_NEGATIVES-epochs$DISTILL_EPOCHS-NAME.md, with .json
#   bash bench/rerank_distill.sh [NAME]     (PER_TYPE default 75: the first N questions of each type)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/compose_setup.sh   # NAME, QUESTIONS, NEGATIVES, trained_in_domain_reranker, distilled_reranker
PER_TYPE=${PER_TYPE:-75}
DISTILL_NEGATIVES=${DISTILL_NEGATIVES:-16}
distilled_reranker   # the teacher first, then its student (DISTILLED)
common=(--tokens 128 --weights 0.5 --candidates 20 --corpus "$NAME" --questions "$QUESTIONS" --per-type "$PER_TYPE"
  --isa native)
python bench/rerank_cost.py --reranker "kfold:$RERANKER-onnx" "${common[@]}" \
  --out "bench/results/rerank-distill-teacher-neg$NEGATIVES-$NAME"
python bench/rerank_cost.py --reranker "kfold:$DISTILLED-onnx" "${common[@]}" \
  --out "bench/results/rerank-distill-student$DISTILLED_TAG-$NAME"
