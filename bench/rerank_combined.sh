#!/usr/bin/env bash
# The in-domain cross-encoder and the sentence reranker combined as one rerank stage
# (rerank=kfold:DIR+sentences:MODEL:30: each one's scores standardised over the 30 candidates, then
# averaged; mhgraph/rerank/combined.py) on the training-free preset's search, fused with the
# search's score at 0.5, 0.6 (the in-domain preset: the mean of its parts' own weights) and 0.7,
# and over 50 candidates at 0.6, beside the cross-encoder alone (the last in-domain preset) and the training-free preset;
# development split, official rule, with the in-domain preset's k-fold choice
#   -> bench/results/compose-combined-NAME.md and .json (about 70 min)
# Needs the in-domain record's k-fold cross-encoder exported to ONNX (RERANKER-onnx, as
# bench/compose_options.sh names it) and reads the sentences bench/sentence_store.sh prepared
# (its cache folder; prepared here, about 7 min, when it is missing). The cross-encoder alone and
# the training-free preset are those records' runs where they are there (copied, kept by RESUME=1).
#   bash bench/rerank_combined.sh [NAME]    (RESUME=1 keeps finished runs; OUT default runs)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/compose_setup.sh   # NAME, QUESTIONS, EVAL_CORPUS, OFF, run, in_domain_reranker, record_in, prepared_sentences
in_domain_reranker
record_in combined
prepared_sentences
SEARCH="filter=rules:drop-words share=source candidates=hybrid:200"
CE="kfold:$RERANKER-onnx"
SENTENCES="sentences:$MODEL"
for kept in "${OUT:-runs}/bench-compose-words/i7-filter-words-hybrid200-share-source-rerank30" \
            "${OUT:-runs}/bench-compose-stored/s2-preset-stored-50"; do
  [ -d "$kept" ] && [ ! -d "$RUNS/$(basename "$kept")" ] && cp -r "$kept" "$RUNS/"
done
ids=()
run s2-preset-stored-50 --method compose --stages "$SEARCH rerank=$SENTENCES:50" "${OFF[@]}"
run i7-filter-words-hybrid200-share-source-rerank30 --method compose --stages "$SEARCH rerank=$CE:30" \
  --rerank-tokens 128 --compose-rerank-weight 0.5 "${OFF[@]}"
run c1-ce-sentences-30 --method compose --stages "$SEARCH rerank=$CE+$SENTENCES:30" --rerank-tokens 128 \
  --compose-rerank-weight 0.5 "${OFF[@]}"
run c2-ce-sentences-30-0.7 --method compose --stages "$SEARCH rerank=$CE+$SENTENCES:30" --rerank-tokens 128 \
  --compose-rerank-weight 0.7 "${OFF[@]}"
# the in-domain preset as shipped: the combination's own weight, the mean of its parts' (the
# cross-encoder exported with --rerank-weight 0.5, as the docs make it, and the sentences' 0.7)
run c3-ce-sentences-30-0.6 --method compose --stages "$SEARCH rerank=$CE+$SENTENCES:30" --rerank-tokens 128 \
  --compose-rerank-weight 0.6 "${OFF[@]}"
# deeper: 50 candidates hold 0.86 of the gold chunks against 0.81 in 30 (our rule, the stored record)
run c4-ce-sentences-50-0.6 --method compose --stages "$SEARCH rerank=$CE+$SENTENCES:50" --rerank-tokens 128 \
  --compose-rerank-weight 0.6 "${OFF[@]}"
python bench/compose_report.py --name "$NAME" --questions "$QUESTIONS" --command "bash $0 $NAME" \
  --json "$record.json" --shippable s2-preset-stored-50 "${ids[@]}" > "$record.md.new"
mv "$record.md.new" "$record.md"
echo "written $record.md and .json"
