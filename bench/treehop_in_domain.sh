#!/usr/bin/env bash
# The in-domain preset with TreeHop as its expansion (issue 26's in-domain pipeline: TreeHop and the
# cross-encoder trained k-fold by question): the preset's search, TreeHop's hops fused in, the
# k-fold cross-encoder and the sentence reranker together scoring every fused chunk (rerank ...:40),
# fused at 0.6 as the preset then was; with TreeHop's folds cut two ways:
#   - by question, as the cross-encoder's are: other questions on a held-out question's evidence
#     (MultiHop-RAG has many on the same articles) are in its fold model's training;
#   - pair-disjoint: no fold model saw a pair of a held-out question's gold chunks as a hop;
# and the in-domain preset as it ships (t3: a deeper pool, the rerankers fused by ranks; t4 pair-disjoint;
# t5: its cross-encoder's folds 5 as TreeHop's, not 3, so each fold model learns from 4/5 of the questions;
# t7: t5 with TreeHop's 30 chunks, not 20;
# t6: a cross-encoder of half the layers, for CPUs without AVX-512: the backbone's first 3 of 6, 3-fold).
# Beside them the training-free preset and the in-domain preset over 30 and over 50 candidates
# without TreeHop (bench/rerank_combined.sh's s2, c3 and c4 runs, copied); development split,
# official rule, with the k-fold choices
#   -> bench/results/compose-treehop-NAME.md and .json (about 4 h in all on 2 cores: TreeHop's two
#      trainings, the 5-fold cross-encoder's, about 50 min, and the 3-layer one's, 15, and about 30 min
#      a run; PAIR_DISJOINT_PRESET=0 leaves t4 out, SMALL_RERANKER=0 t6 and its training)
# Needs the in-domain record's k-fold cross-encoder exported to ONNX (RERANKER-onnx) and the
# sentences bench/sentence_store.sh prepared (prepared here when missing, about 7 min).
#   bash bench/treehop_in_domain.sh [NAME]    (RESUME=1 keeps finished runs; OUT default runs)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/compose_setup.sh   # NAME, QUESTIONS, EVAL_CORPUS, OFF, run, in_domain_reranker, train_treehop, record_in, prepared_sentences
in_domain_reranker
BY_QUESTION=${BY_QUESTION:-models/treehop-$NAME-kfold}
PAIR_DISJOINT=${PAIR_DISJOINT:-models/treehop-$NAME-pair-disjoint}
train_treehop "$BY_QUESTION"
train_treehop "$PAIR_DISJOINT" --pair-disjoint
# the cross-encoder 5-fold by question, as the in-domain record's 3-fold one is trained otherwise
RERANKER5=${RERANKER5:-models/reranker-$NAME-kfold5-128}
[ -f "$RERANKER5/folds.json" ] || mhgraph reranker train --corpus "$NAME" --questions "$QUESTIONS" --out "$RERANKER5" \
  --folds 5 --negatives "$NEGATIVES" --max-length 128 --no-final
[ -d "$RERANKER5-onnx" ] || mhgraph reranker export "$RERANKER5" --out "$RERANKER5-onnx" --max-length 128
record_in treehop
prepared_sentences
SEARCH="filter=rules:drop-words share=source candidates=hybrid:200"
RERANK="rerank=kfold:$RERANKER-onnx+sentences:$MODEL"
IN_DOMAIN=(--rerank-tokens 128 --compose-rerank-weight 0.6 "${OFF[@]}")
for kept in s2-preset-stored-50 c3-ce-sentences-30-0.6 c4-ce-sentences-50-0.6; do
  [ -d "${OUT:-runs}/bench-compose-combined/$kept" ] && [ ! -d "$RUNS/$kept" ] && \
    cp -r "${OUT:-runs}/bench-compose-combined/$kept" "$RUNS/"
done
ids=()
run s2-preset-stored-50 --method compose --stages "$SEARCH rerank=sentences:$MODEL:50" "${OFF[@]}"
run c3-ce-sentences-30-0.6 --method compose --stages "$SEARCH $RERANK:30" "${IN_DOMAIN[@]}"
run c4-ce-sentences-50-0.6 --method compose --stages "$SEARCH $RERANK:50" "${IN_DOMAIN[@]}"
run t1-treehop-by-question --method compose --stages "$SEARCH expand=treehop $RERANK:40" \
  --treehop-model "$BY_QUESTION" --hops 2 "${IN_DOMAIN[@]}"
run t2-treehop-pair-disjoint --method compose --stages "$SEARCH expand=treehop $RERANK:40" \
  --treehop-model "$PAIR_DISJOINT" --hops 2 "${IN_DOMAIN[@]}"
# RANKS (compose_setup.sh): the preset's fusion as it ships, shared by the runs below
# the in-domain preset: TreeHop's 20 chunks with 50 candidates, the rerankers' rankings fused with
# the candidates' and TreeHop's by reciprocal rank (k 5), the rerankers together half the weight;
# chosen k-fold by question from the trace of bench/rerank_weights.sh's deep run
run t3-treehop-ranks --method compose --stages "$SEARCH expand=treehop $RERANK:70" \
  --treehop-model "$BY_QUESTION" --hops 2 --compose-candidate-k 50 --compose-expand-k 20 "${RANKS[@]}"
[ "${PAIR_DISJOINT_PRESET:-1}" = 0 ] || run t4-treehop-ranks-pair-disjoint --method compose --stages "$SEARCH expand=treehop $RERANK:70" \
  --treehop-model "$PAIR_DISJOINT" --hops 2 --compose-candidate-k 50 --compose-expand-k 20 "${RANKS[@]}"
run t5-treehop-ranks-ce-5-fold --method compose --stages "$SEARCH expand=treehop rerank=kfold:$RERANKER5-onnx+sentences:$MODEL:70" \
  --treehop-model "$BY_QUESTION" --hops 2 --compose-candidate-k 50 --compose-expand-k 20 "${RANKS[@]}"
# ... and TreeHop's 30 chunks, not 20 (the weights record: TreeHop's chunks matter more than more candidates)
run t7-treehop-30-ranks-ce-5-fold --method compose --stages "$SEARCH expand=treehop rerank=kfold:$RERANKER5-onnx+sentences:$MODEL:80" \
  --treehop-model "$BY_QUESTION" --hops 2 --compose-candidate-k 50 --compose-expand-k 30 "${RANKS[@]}"
# the cross-encoder of the backbone's first 3 layers (reranker train --layers 3), 3-fold as the record's
if [ "${SMALL_RERANKER:-1}" = 1 ]; then
  SMALL=${SMALL:-models/reranker-$NAME-kfold-128-3-layers}
  [ -f "$SMALL/folds.json" ] || mhgraph reranker train --corpus "$NAME" --questions "$QUESTIONS" --out "$SMALL" \
    --layers 3 --folds 3 --negatives "$NEGATIVES" --max-length 128 --no-final
  [ -d "$SMALL-onnx" ] || mhgraph reranker export "$SMALL" --out "$SMALL-onnx" --max-length 128
  run t6-treehop-ranks-ce-3-layers --method compose --stages "$SEARCH expand=treehop rerank=kfold:$SMALL-onnx+sentences:$MODEL:70" \
    --treehop-model "$BY_QUESTION" --hops 2 --compose-candidate-k 50 --compose-expand-k 20 "${RANKS[@]}"
fi
python bench/compose_report.py --name "$NAME" --questions "$QUESTIONS" --command "bash $0 $NAME" \
  --json "$record.json" --shippable s2-preset-stored-50 "${ids[@]}" > "$record.md.new"
mv "$record.md.new" "$record.md"
echo "written $record.md and .json"
