#!/usr/bin/env bash
# The in-domain preset with its cross-encoder in torch int8 (--rerank-precision int8: the fold models'
# linear layers quantized dynamically as they load), the precision a CPU without AVX-512 or bf16 runs
# in time (bench/rerank_avx2.sh), its int8 products in FBGEMM's AVX2 kernels
# (FBGEMM_ENABLE_INSTRUCTIONS=AVX2: the kernels such a CPU runs; the rest runs natively, so the run's
# timings are neither this CPU's nor an AVX2 one's: rerank_avx2.sh times the stage), beside the preset
# as it ships (the same fold models exported to int8 ONNX) and the training-free preset; development
# split, official rule
#   -> bench/results/compose-int8-NAME.md and .json (about 75 min on 2 cores: TreeHop's training when
#      missing, the sentences when not prepared, about 30 min an in-domain run)
# Trains the in-domain record's 3-fold cross-encoder (about 25 min) and TreeHop when missing.
#   bash bench/compose_int8.sh [NAME]    (RESUME=1 keeps finished runs; OUT default runs)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/compose_setup.sh   # NAME, QUESTIONS, OFF, RANKS, run, trained_in_domain_reranker, train_treehop, ...
trained_in_domain_reranker      # RERANKER and RERANKER-onnx
BY_QUESTION=${BY_QUESTION:-models/treehop-$NAME-kfold}
train_treehop "$BY_QUESTION"
record_in int8
prepared_sentences
SEARCH="filter=rules:drop-words share=source candidates=hybrid:200"
# the in-domain preset's pool and fusion (the options it sets beside its line)
PRESET=(--treehop-model "$BY_QUESTION" --hops 2 --compose-candidate-k 50 --compose-expand-k 20 "${RANKS[@]}")
ids=()
run s2-preset-stored-50 --method compose --stages "$SEARCH rerank=sentences:$MODEL:50" "${OFF[@]}"
FBGEMM_ENABLE_INSTRUCTIONS=AVX2 run t8-treehop-ranks-torch-int8 --method compose \
  --stages "$SEARCH expand=treehop rerank=kfold:$RERANKER+sentences:$MODEL:70" --rerank-precision int8 "${PRESET[@]}"
run t3-treehop-ranks --method compose --stages "$SEARCH expand=treehop rerank=kfold:$RERANKER-onnx+sentences:$MODEL:70" \
  "${PRESET[@]}"
python bench/compose_report.py --name "$NAME" --questions "$QUESTIONS" --command "bash $0 $NAME" \
  --json "$record.json" --shippable s2-preset-stored-50 "${ids[@]}" > "$record.md.new"
mv "$record.md.new" "$record.md"
echo "written $record.md and .json"
