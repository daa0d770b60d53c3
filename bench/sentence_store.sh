#!/usr/bin/env bash
# The training-free preset with every chunk's sentences embedded ahead of the questions
# (mhgraph reranker prepare), on the development split, official rule: how long preparing the
# corpus takes, the preset's latency without the cold cost (a passage's sentences embedded the
# first time it is scored), and its sentence reranker over 30 and over 50 candidates (the
# training-free preset), beside the search alone; the preset's choice k-fold among the three
#   -> bench/results/compose-stored-NAME.md and .json, the preparation's summary in
#      bench/results/compose-stored-NAME/prepare.txt (about 30 min)
# The store is kept in a cache folder of its own (OUT/bench-compose-stored/cache), so that the
# preparation is timed from nothing and no run reads sentences another process embedded.
#   bash bench/sentence_store.sh [NAME]    (RESUME=1 keeps finished runs; OUT default runs)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/compose_setup.sh   # NAME, QUESTIONS, EVAL_CORPUS, OFF, run, in_domain_reranker, record_in, prepared_sentences
record_in stored
export MHGRAPH_CACHE_DIR=$SENTENCE_CACHE
if ! { [ "${RESUME:-0}" = 1 ] && [ -f "$SUMMARIES/prepare.txt" ]; }; then
  echo prepare >&2
  mhgraph reranker prepare "sentences:$MODEL" --corpus "$NAME" --no-progress > "$SUMMARIES/prepare.txt.new"
  mv "$SUMMARIES/prepare.txt.new" "$SUMMARIES/prepare.txt"
fi
PRESET="filter=rules:drop-words share=source candidates=hybrid:200"
ids=()
run w1-filter-words-hybrid200-share-source --method compose --stages "$PRESET" "${OFF[@]}"
run s1-preset-stored --method compose --stages "$PRESET rerank=sentences:$MODEL:30" "${OFF[@]}"
# without an expansion, rerank=RERANKER:50 reads 50 candidates: the training-free preset's line
run s2-preset-stored-50 --method compose --stages "$PRESET rerank=sentences:$MODEL:50" "${OFF[@]}"
python bench/compose_report.py --name "$NAME" --questions "$QUESTIONS" --command "bash $0 $NAME" \
  --json "$record.json" --shippable w1-filter-words-hybrid200-share-source --shippable s1-preset-stored \
  --shippable s2-preset-stored-50 "${ids[@]}" > "$record.md.new"
mv "$record.md.new" "$record.md"
echo "written $record.md and .json"
