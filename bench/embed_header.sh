#!/usr/bin/env bash
# Metadata in the embedding (ingest's embed_header): the corpus ingested once per header (none,
# title, title+source+date, each under its own corpus name), then `vector` and `metarag` (rules
# filters; vector and hybrid candidates) at K = 10 on each, both scoring rules, in one table:
# bench/results/embed-header-NAME.md (+ per-run summaries in bench/results/embed-header-NAME/).
#   bash bench/embed_header.sh [CORPUS_JSON] [QUESTIONS_JSON] [NAME]
# Defaults: ../shared/data/multihop-rag/{corpus.json,MultiHopRAG.json}, NAME=multihop-rag; the
# corpus with no header is NAME itself (ingested if missing, unchanged if there), the others
# NAME-header-title and NAME-header-title-source-date (deleted first with FRESH=1). About 5 min of
# embedding per header here, 10 min of evaluation in all. RESUME=1 keeps finished runs.
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS=${1:-../shared/data/multihop-rag/corpus.json}
QUESTIONS=${2:-../shared/data/multihop-rag/MultiHopRAG.json}
NAME=${3:-multihop-rag}
for f in "$CORPUS" "$QUESTIONS"; do [ -f "$f" ] || { echo "error: $f: file not found" >&2; exit 1; }; done
RUNS=runs/bench-embed-header-$NAME
SUMMARIES=bench/results/embed-header-$NAME
mkdir -p "$RUNS" "$SUMMARIES"
ids=()
source bench/eval_runs.sh
for header in none title title+source+date; do
  corpus=$NAME
  [ "$header" = none ] || corpus="$NAME-header-${header//+/-}"
  if [ "${FRESH:-0}" = 1 ] && [ "$header" != none ] && mhgraph corpora | grep -q "^$corpus "; then
    mhgraph corpora delete "$corpus"
  fi
  echo "ingest $corpus (embed_header $header)" >&2
  mhgraph ingest "$CORPUS" --corpus "$corpus" --embed-header "$header" --no-progress >&2
  EVAL_CORPUS=$corpus
  tag=${header//+/-}
  run "header-$tag-vector-k10" --method vector -k 10
  run "header-$tag-metarag-rules-k10" --method metarag --filter-extractor rules -k 10 --no-rerank
  run "header-$tag-metarag-rules-hybrid-k10" --method metarag --filter-extractor rules -k 10 --no-rerank \
    --metarag-search hybrid
done
write_report "Metadata embedded with each chunk (embed_header)" "bench/results/embed-header-$NAME.md" "$@"
