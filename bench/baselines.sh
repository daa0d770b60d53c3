#!/usr/bin/env bash
# The vector, bm25 and hybrid (naive and linear ranker) baselines at K = 4, 10, 20 on MultiHop-RAG (or any corpus + questions
# in its formats), compared in one table and plot (our scoring and the official rule), recorded
# under bench/results/; the gold-fact coverage at the configured chunking; then the vector index's
# recall against exact search on the first 500 questions (bench/vector_index.py).
#   bash bench/baselines.sh [CORPUS_JSON] [QUESTIONS_JSON] [NAME]
# Defaults: ../shared/data/multihop-rag/{corpus.json,MultiHopRAG.json}, NAME=multihop-rag (also
# the corpus name in the graph). Uses the configured Neo4j (the local server unless NEO4J_URI is
# set); ingest is idempotent. LABEL (environment) says which question set this is in the report;
# RESUME=1 keeps the runs already in runs/bench-NAME/ (and the vector index results) and makes
# only what is missing, e.g. after an interruption.
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS=${1:-../shared/data/multihop-rag/corpus.json}
QUESTIONS=${2:-../shared/data/multihop-rag/MultiHopRAG.json}
NAME=${3:-multihop-rag}
for f in "$CORPUS" "$QUESTIONS"; do
  [ -f "$f" ] || { echo "error: $f: file not found (pass CORPUS_JSON QUESTIONS_JSON)" >&2; exit 1; }
done
RUNS=runs/bench-$NAME            # full per-question results stay out of git
SUMMARIES=bench/results/baselines-$NAME
mkdir -p "$RUNS" "$SUMMARIES"
mhgraph ingest "$CORPUS" --corpus "$NAME" --no-progress
ids=()
# "hybrid-linear": hybrid with neo4j-graphrag's linear ranker (alpha 0.5) instead of its naive one
for run in vector bm25 hybrid hybrid-linear; do
  method=${run%-linear}
  ranker=$([ "$run" = hybrid-linear ] && echo linear || echo naive)
  for k in 4 10 20; do
    [ "${RESUME:-0}" = 1 ] && [ -f "$RUNS/$NAME-$run-k$k/report.json" ] || \
    MHGRAPH_HYBRID_RANKER=$ranker mhgraph eval --method "$method" -k "$k" --corpus "$NAME" --questions "$QUESTIONS" \
      --runs-dir "$RUNS" --run-id "$NAME-$run-k$k" --no-progress > /dev/null
    ids+=("$RUNS/$NAME-$run-k$k")
    cp "$RUNS/$NAME-$run-k$k/report.json" "$SUMMARIES/$run-k$k.json"
  done
done
mhgraph eval --compare "${ids[@]}" --runs-dir "$RUNS" > /dev/null
latest=$(ls -d "$RUNS"/compare-* | sort | tail -n 1)
questions=$(python -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$QUESTIONS")
{
  echo "# Baselines on $NAME"
  echo
  echo "- questions: ${LABEL:-$questions questions} ($QUESTIONS); corpus: $CORPUS, ingested as corpus '$NAME'"
  echo "- date (UTC): $(date -u +%Y-%m-%dT%H:%MZ); machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB"
  echo "- embedding model: $(mhgraph config | awk '/^embedding_model/{print $3}'); chunks $(mhgraph config | awk '/^chunk_size/{print $3}')/$(mhgraph config | awk '/^chunk_overlap/{print $3}') tokens"
  echo "- $(mhgraph neo4j status 2>/dev/null | grep '^server:' || true)"
  echo "- command: bash bench/baselines.sh $*"
  echo
  sed -n '3,$p' "$latest/compare.md"
  echo
  echo "![F1 vs hop and recall vs K]($(basename "$latest")/compare.png)"
} > "bench/results/baselines-$NAME.md"
cp "$latest/compare.png" "bench/results/baselines-$NAME.png"
sed -i "s#($(basename "$latest")/compare.png)#(baselines-$NAME.png)#" "bench/results/baselines-$NAME.md"
echo "written bench/results/baselines-$NAME.md (+ .png, per-run summaries in $SUMMARIES/)"
python bench/gold_coverage.py "$RUNS/$NAME-vector-k10/report.json" "bench/results/gold-coverage-$NAME.md" "$NAME"
[ "${RESUME:-0}" = 1 ] && [ -f "bench/results/vector-index-$NAME.md" ] && exit 0
python bench/vector_index.py --questions "$QUESTIONS" --limit 500 --name "$NAME" --corpus "$NAME" \
  --corpus-note "$CORPUS" > /dev/null 2> "$RUNS/vector-index.log" || { tail -n 3 "$RUNS/vector-index.log" >&2; exit 1; }
echo "written bench/results/vector-index-$NAME.md"
