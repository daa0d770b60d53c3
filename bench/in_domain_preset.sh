#!/usr/bin/env bash
# The in-domain preset as it ships (`--stages in-domain`, its options unset so that the preset's own
# apply), made as its recipe says: the cross-encoder trained 3-fold by question on NEGATIVES near misses
# a question and 128-token pairs (compose_setup.sh's trained_in_domain_reranker) and exported where the
# preset's line reads it (models/reranker-onnx, a link to the export), TreeHop trained 5-fold by
# question and named by --treehop-model; beside it the training-free preset (`--stages training-free`,
# its sentences prepared); development split, official rule, every stage offline
#   -> bench/results/compose-in-domain-preset-NAME.md and .json (about 75 min on 2 AVX-512 cores from
#      nothing: the cross-encoder's training and export, 25, TreeHop's, 8, the sentences, 7, the runs 35)
#   bash bench/in_domain_preset.sh [NAME]    (RESUME=1 keeps finished runs; OUT default runs)
# STUDENT=1: the cross-encoder's 3-layer student in its place (compose_setup's distilled_reranker, on
# DISTILL_NEGATIVES near misses for DISTILL_EPOCHS epochs, default 16 and 1: bench/rerank_distill.sh's),
#   -> bench/results/compose-in-domain-preset-student-NAME.md and .json (other settings:
#      compose-in-domain-preset-student-negN-epochsE-NAME, so that neither overwrites the other)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/compose_setup.sh   # NAME, QUESTIONS, OFF, run, trained_in_domain_reranker, train_treehop, record_in, prepared_sentences
trained_in_domain_reranker
KIND=in-domain-preset SHIPS=$RERANKER-onnx COMMAND="NEGATIVES=$NEGATIVES bash $0 $NAME"
if [ -n "${STUDENT:-}" ]; then
  DISTILL_NEGATIVES=${DISTILL_NEGATIVES:-16}
  distilled_reranker
  KIND=in-domain-preset-student SHIPS=$DISTILLED-onnx
  [ "$DISTILLED_TAG" = -neg16-epochs1 ] || KIND+=$DISTILLED_TAG   # the first student record's settings: no tag
  COMMAND="STUDENT=1 NEGATIVES=$NEGATIVES DISTILL_NEGATIVES=$DISTILL_NEGATIVES DISTILL_EPOCHS=$DISTILL_EPOCHS bash $0 $NAME"
fi
BY_QUESTION=${BY_QUESTION:-models/treehop-$NAME-kfold}
train_treehop "$BY_QUESTION"
# where the in-domain preset's line reads its cross-encoder (IN_DOMAIN_RERANKER in mhgraph/retrieval/compose.py)
SHIPPED=models/reranker-onnx
if [ -e "$SHIPPED" ] && [ "$(readlink -f "$SHIPPED")" != "$(readlink -f "$SHIPS")" ]; then
  echo "error: $SHIPPED: holds another model than $SHIPS (move it away to run this record)" >&2
  exit 1
fi
[ -e "$SHIPPED" ] || ln -s "$(readlink -f "$SHIPS")" "$SHIPPED"
record_in "$KIND"
prepared_sentences
ids=()
run s2-in-domain --method compose --stages in-domain --treehop-model "$BY_QUESTION" "${OFF[@]}"
run s1-training-free --method compose --stages training-free "${OFF[@]}"
python bench/compose_report.py --name "$NAME" --questions "$QUESTIONS" --command "$COMMAND" \
  --json "$record.json" --shippable s1-training-free "${ids[@]}" > "$record.md.new"
mv "$record.md.new" "$record.md"
echo "written $record.md and .json"
