#!/usr/bin/env bash
# How `mhgraph generate --grouping` changes the generated set (issue 25): on corpus NAME (default
# multihop-rag, ingested, its claim layer built) it writes N (default 1,000) questions offline, seed 0, for
# each variant below, runs seven methods on each (the eight of bench/generate.sh but claims; treehop with the
# packaged model), and bench/generate_grouping_report.py writes bench/results/generate-grouping-NAME.md and
# .json against the development split's figures (fresh runs of bench/generate.sh's dev step when present).
#   random     --grouping random                 any articles that share the bridge (the earlier draw)
#   story      (the defaults: --grouping story --coherence 0.9)
# The story set is the file bench/generate.sh's generate step writes (same command, same file).
#   bash bench/generate_grouping.sh [NAME]       (RESUME=1 keeps finished files and runs; OUT, default
#                                                 runs/bench-generate-grouping, holds them)
# Environment of the recorded run: source /work/gen-env.sh (its own Neo4j server, offline LLM backend).
set -euo pipefail
cd "$(dirname "$0")/.."
NAME=${1:-multihop-rag}
N=${N:-1000}
OUT=${OUT:-runs/bench-generate-grouping}
DEV=${DEV:-../shared/data/multihop-rag/MultiHopRAG.json}
[ -f "$DEV" ] || { echo "error: $DEV: file not found" >&2; exit 1; }
declare -A VARIANT=([random]="--grouping random" [story]="")
ORDER=(random story)
source bench/eval_runs.sh
EVAL_CORPUS=$NAME
for v in "${ORDER[@]}"; do
  QUESTIONS=$OUT/$NAME/$v/questions.json RUNS=$OUT/$NAME/$v/runs SUMMARIES=$OUT/$NAME/$v/summaries
  mkdir -p "$RUNS" "$SUMMARIES"
  if ! { [ "${RESUME:-0}" = 1 ] && [ -f "$QUESTIONS" ]; }; then
    rm -rf "$RUNS"; mkdir -p "$RUNS"     # runs of an earlier file are not this one's
    # shellcheck disable=SC2086
    cmd=(mhgraph generate --corpus "$NAME" --out "$QUESTIONS" --seed 0 --no-progress --n "$N" --llm-backend none ${VARIANT[$v]})
    echo "${cmd[*]}" >&2
    t0=$(date +%s.%N); "${cmd[@]}" > "$OUT/$NAME/$v/generate.txt"; t1=$(date +%s.%N)
    python -c "import json, sys; print(json.dumps({\"command\": sys.argv[1], \"wall_seconds\": float(sys.argv[3]) - float(sys.argv[2])}))" "${cmd[*]}" "$t0" "$t1" > "$OUT/$NAME/$v/generate.json"
  fi
  run bm25-k10 --method bm25 -k 10
  run vector-k10 --method vector -k 10
  run hybrid-k10 --method hybrid -k 10
  run metarag-rules-k10 --method metarag --filter-extractor rules -k 10 --no-rerank
  run treehop-packaged-k5-h2 --method treehop -k 5 --hops 2
  run ircot-offline-k5 --method ircot -k 5 --llm-backend none
  run decompose-offline-n3-k5 --method decompose --sub-questions 3 -k 5 --llm-backend none
done
python bench/generate_grouping_report.py --name "$NAME" --out "$OUT" --dev "$DEV" --variants "${ORDER[@]}" \
  --json "bench/results/generate-grouping-$NAME.json" --command "bash $0 $*" > "bench/results/generate-grouping-$NAME.md"
echo "written bench/results/generate-grouping-$NAME.md"
