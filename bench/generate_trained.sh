#!/usr/bin/env bash
# Models trained without a single benchmark question (issue 26), from the question set bench/generate.sh
# made with the current templates: TreeHop (k-fold over the generated questions: bench/generate.sh kfold
# trains models/treehop-NAME-generated) and the cross-encoder (trained here on every generated question),
# each as a stage of compose.sh's pipelines p6 and p10, scored on the development split beside the
# training-free p1 run again the same day. bench/generate_trained_report.py sets them beside the compose
# record's in-domain pipelines and its earlier generated-trained figures.
#   bash bench/generate_trained.sh [NAME] [TAG]    (TAG names the question set's models and runs; default
#                                                   describe; RESUME=1 keeps finished runs; TRAINED_RUNS=DIR
#                                                   the runs' folder; NOTES=FILE adds
#                                                   a verdict written after the runs)
set -euo pipefail
cd "$(dirname "$0")/.."
NAME=${1:-multihop-rag}
TAG=${2:-describe}
QUESTIONS=${QUESTIONS:-../shared/data/multihop-rag/MultiHopRAG.json}
GEN_QUESTIONS=${GEN_QUESTIONS:-runs/bench-generate/$NAME/questions.json}
TREEHOP=${TREEHOP:-models/treehop-$NAME-generated}
RERANK_TOKENS=${RERANK_TOKENS:-128}
RERANK_WEIGHT=${RERANK_WEIGHT:-0.5}
GEN_RERANKER=${GEN_RERANKER:-models/reranker-$NAME-generated-$TAG-$RERANK_TOKENS}
RUNS=${TRAINED_RUNS:-runs/bench-generate-trained/$NAME/$TAG}
EVAL_CORPUS=$NAME
SUMMARIES=bench/results/generate-trained-$NAME/$TAG
mkdir -p "$RUNS" "$SUMMARIES"
for f in "$QUESTIONS" "$GEN_QUESTIONS" "$TREEHOP/folds.json"; do
  [ -f "$f" ] || { echo "error: $f: file not found (bash bench/generate.sh $NAME generate kfold makes the last two)" >&2; exit 1; }
done
# the TreeHop folds must be those of this question set
trained_on=$(python -c 'import json, sys; print(json.load(open(sys.argv[1]))["questions_file"])' "$TREEHOP/folds.json")
if [ "$trained_on" != "$GEN_QUESTIONS" ] || [ "$GEN_QUESTIONS" -nt "$TREEHOP/folds.json" ]; then
  echo "error: $TREEHOP was trained on $trained_on, or before $GEN_QUESTIONS last changed: remove it and run" \
    "KFOLD=generated bash bench/generate.sh $NAME kfold" >&2; exit 1
fi
ids=()
source bench/eval_runs.sh
if [ -d "$GEN_RERANKER-onnx" ] && [ "$GEN_QUESTIONS" -nt "$GEN_RERANKER-onnx" ]; then
  echo "error: $GEN_RERANKER-onnx is older than $GEN_QUESTIONS: remove it (and $GEN_RERANKER) to train it again" >&2
  exit 1
fi
if [ ! -d "$GEN_RERANKER-onnx" ]; then
  mhgraph reranker train --corpus "$NAME" --questions "$GEN_QUESTIONS" --out "$GEN_RERANKER" --only-final \
    --negatives 4 --max-length "$RERANK_TOKENS"
  mhgraph reranker export "$GEN_RERANKER/all" --out "$GEN_RERANKER-onnx" --max-length "$RERANK_TOKENS"
fi
OFF=(--llm-backend none -k 10)
# the same arguments as bench/compose.sh's p1, p6 and p10
run p1-filter-hybrid --method compose --stages "filter=rules candidates=hybrid" "${OFF[@]}"
run p6-filter-hybrid-treehop-generated --method compose --stages "filter=rules candidates=hybrid expand=treehop" \
  --treehop-model "$TREEHOP" --hops 2 "${OFF[@]}"
run p10-filter-hybrid-rerank-generated --method compose \
  --stages "filter=rules candidates=hybrid rerank=$GEN_RERANKER-onnx" --rerank-tokens "$RERANK_TOKENS" \
  --compose-rerank-weight "$RERANK_WEIGHT" "${OFF[@]}"
python bench/generate_trained_report.py --name "$NAME" --tag "$TAG" --generated "$GEN_QUESTIONS" \
  --treehop "$TREEHOP" --reranker "$GEN_RERANKER-onnx" --rerank-tokens "$RERANK_TOKENS" --rerank-weight "$RERANK_WEIGHT" \
  --command "bash $0 $NAME $TAG" ${NOTES:+--notes "$NOTES"} --json "bench/results/generate-trained-$NAME.json" \
  "${ids[@]}" > "bench/results/generate-trained-$NAME.md.new"
mv "bench/results/generate-trained-$NAME.md.new" "bench/results/generate-trained-$NAME.md"
echo "written bench/results/generate-trained-$NAME.md and .json"
