#!/usr/bin/env bash
# The in-domain preset's rerank stage weighed again from one deep run's trace: the preset's search
# with 50 candidates, TreeHop's 20 chunks (trained 5-fold by question, as
# bench/treehop_in_domain.sh trains it) and the combined rerankers scoring all of them (rerank ...:70,
# fused at 0.6); then bench/compose_weights.py re-orders what they scored under other weights (the
# rerankers against the search, the cross-encoder against the sentences, TreeHop's fusion weight),
# shallower pools (30 to 50 candidates, TreeHop's 10 or 20) and a per-document cap, scores each
# ordering under the official rule and chooses k-fold by question; development split
#   -> bench/results/compose-weights-NAME.md and .json (about 35 min; the TreeHop folds and the
#      sentences as bench/treehop_in_domain.sh leaves them, made here when missing)
#   bash bench/rerank_weights.sh [NAME]    (RESUME=1 keeps a finished run; OUT default runs)
# CANDIDATES and EXPANDED (default 50 and 20) set the deep run's pool; another pool is recorded as
# compose-weights-CANDIDATES-EXPANDED-NAME, beside the record of the preset's; RERANKER another k-fold
# cross-encoder (exported beside it as RERANKER-onnx), recorded as compose-weights[-POOL]-FOLDER-NAME
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/compose_setup.sh   # NAME, QUESTIONS, EVAL_CORPUS, OFF, run, in_domain_reranker, record_in, prepared_sentences
in_domain_reranker
BY_QUESTION=${BY_QUESTION:-models/treehop-$NAME-kfold}
[ -f "$BY_QUESTION/folds.json" ] || mhgraph treehop train --corpus "$NAME" --questions "$QUESTIONS" \
  --out "$BY_QUESTION" --no-final --no-progress
CANDIDATES=${CANDIDATES:-50} EXPANDED=${EXPANDED:-20}
pool=$CANDIDATES-$EXPANDED
# the record's name and command: the pool, and the cross-encoder when it is not the in-domain record's
kind=weights setting="CANDIDATES=$CANDIDATES EXPANDED=$EXPANDED"
[ "$pool" = 50-20 ] || kind+="-$pool"
[ "$RERANKER" = "$IN_DOMAIN_RERANKER" ] || { kind+="-$(basename "$RERANKER")"; setting="RERANKER=$RERANKER $setting"; }
record_in "$kind"
prepared_sentences
SEARCH="filter=rules:drop-words share=source candidates=hybrid:200"
ids=()
run "d1-treehop-$pool-scored" --method compose \
  --stages "$SEARCH expand=treehop rerank=kfold:$RERANKER-onnx+sentences:$MODEL:$((CANDIDATES + EXPANDED))" \
  --treehop-model "$BY_QUESTION" --hops 2 --compose-candidate-k "$CANDIDATES" --compose-expand-k "$EXPANDED" \
  --rerank-tokens 128 --compose-rerank-weight 0.6 "${OFF[@]}"
python bench/compose_weights.py "${ids[0]}" --name "$NAME" --questions "$QUESTIONS" \
  --command "$setting bash $0 $NAME" --json "$record.json" > "$record.md.new"
mv "$record.md.new" "$record.md"
echo "written $record.md and .json"
