#!/usr/bin/env bash
# The in-domain preset with TreeHop as its expansion (issue 26's in-domain pipeline: TreeHop and the
# cross-encoder trained k-fold by question): the preset's search, TreeHop's hops fused in, the
# k-fold cross-encoder and the sentence reranker together scoring every fused chunk (rerank ...:40),
# fused at 0.6 as the preset then was; with TreeHop's folds cut two ways:
#   - by question, as the cross-encoder's are: other questions on a held-out question's evidence
#     (MultiHop-RAG has many on the same articles) are in its fold model's training;
#   - pair-disjoint: no fold model saw a pair of a held-out question's gold chunks as a hop;
# and the in-domain preset as it ships (t3: a deeper pool, the rerankers fused by ranks; t4 pair-disjoint).
# Beside them the training-free preset and the in-domain preset over 30 and over 50 candidates
# without TreeHop (bench/rerank_combined.sh's s2, c3 and c4 runs, copied); development split,
# official rule, with the k-fold choices
#   -> bench/results/compose-treehop-NAME.md and .json (about 70 min with the two trainings)
# Needs the in-domain record's k-fold cross-encoder exported to ONNX (RERANKER-onnx) and the
# sentences bench/sentence_store.sh prepared (prepared here when missing, about 7 min).
#   bash bench/treehop_in_domain.sh [NAME]    (RESUME=1 keeps finished runs; OUT default runs)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/compose_setup.sh   # NAME, QUESTIONS, EVAL_CORPUS, OFF, run, in_domain_reranker, record_in, prepared_sentences
in_domain_reranker
BY_QUESTION=${BY_QUESTION:-models/treehop-$NAME-kfold}
PAIR_DISJOINT=${PAIR_DISJOINT:-models/treehop-$NAME-pair-disjoint}
train() {   # FOLDER [FLAGS]: TreeHop 5-fold by question, once (its folds.json marks it done)
  [ -f "$1/folds.json" ] || mhgraph treehop train --corpus "$NAME" --questions "$QUESTIONS" --out "$1" --no-final \
    --no-progress "${@:2}"
}
train "$BY_QUESTION"
train "$PAIR_DISJOINT" --pair-disjoint
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
# the in-domain preset: TreeHop's 20 chunks with 50 candidates, the rerankers' rankings fused with
# the candidates' and TreeHop's by reciprocal rank (k 5), the rerankers together half the weight;
# chosen k-fold by question from the trace of bench/rerank_weights.sh's deep run
run t3-treehop-ranks --method compose --stages "$SEARCH expand=treehop $RERANK:70" \
  --treehop-model "$BY_QUESTION" --hops 2 --compose-candidate-k 50 --compose-expand-k 20 \
  --compose-rerank-fusion ranks --compose-rerank-rrf-k 5 --rerank-tokens 128 --compose-rerank-weight 0.5 "${OFF[@]}"
run t4-treehop-ranks-pair-disjoint --method compose --stages "$SEARCH expand=treehop $RERANK:70" \
  --treehop-model "$PAIR_DISJOINT" --hops 2 --compose-candidate-k 50 --compose-expand-k 20 \
  --compose-rerank-fusion ranks --compose-rerank-rrf-k 5 --rerank-tokens 128 --compose-rerank-weight 0.5 "${OFF[@]}"
python bench/compose_report.py --name "$NAME" --questions "$QUESTIONS" --command "bash $0 $NAME" \
  --json "$record.json" --shippable s2-preset-stored-50 "${ids[@]}" > "$record.md.new"
mv "$record.md.new" "$record.md"
echo "written $record.md and .json"
