#!/usr/bin/env bash
# How one `mhgraph generate` option changes the generated set (issue 25). On corpus NAME (default
# multihop-rag, ingested, its claim layer built) it writes N (default 1,000) questions offline, seed 0, for
# each variant of STUDY, runs the methods on each (treehop with the packaged model), and
# bench/generate_variants_report.py writes bench/results/generate-STUDY-NAME.md and .json against the
# development split's figures (fresh runs of bench/generate.sh's dev step when present).
#   grouping   random: --grouping random (any articles that share the bridge); story: the default
#              (--grouping story --coherence 0.9); both with --wording quote, the wording of the recorded
#              run; seven methods (bench/generate.sh's eight but claims)
#   wording    quote: --wording quote (each fact cut into the question); describe: the default (articles by
#              source and headline, facts by their rarest names); all eight methods, claims too (it searches
#              the layer the questions are built from: how much a wording hands it)
# The default variant's set is the file bench/generate.sh's generate step writes (same command, same file).
#   bash bench/generate_variants.sh STUDY [NAME]   (RESUME=1 keeps finished files and runs; OUT, default
#                                                   runs/bench-generate-STUDY, holds them)
# Environment of the recorded runs: source /work/gen-env.sh (its own Neo4j server, offline LLM backend).
set -euo pipefail
cd "$(dirname "$0")/.."
STUDY=${1:?usage: bash bench/generate_variants.sh grouping|wording [NAME]}
NAME=${2:-multihop-rag}
N=${N:-1000}
OUT=${OUT:-runs/bench-generate-$STUDY}
DEV=${DEV:-../shared/data/multihop-rag/MultiHopRAG.json}
[ -f "$DEV" ] || { echo "error: $DEV: file not found" >&2; exit 1; }
declare -A VARIANT
case $STUDY in
  grouping) VARIANT=([random]="--grouping random --wording quote" [story]="--wording quote"); ORDER=(random story)
            METHODS="bm25 vector hybrid metarag treehop ircot decompose";;
  wording)  VARIANT=([quote]="--wording quote" [describe]=""); ORDER=(quote describe)
            METHODS="bm25 vector hybrid metarag treehop ircot decompose claims";;
  *) echo "error: unknown study '$STUDY' (grouping or wording)" >&2; exit 2;;
esac
source bench/eval_runs.sh
EVAL_CORPUS=$NAME
source bench/generate_methods.sh
for v in "${ORDER[@]}"; do
  QUESTIONS=$OUT/$NAME/$v/questions.json RUNS=$OUT/$NAME/$v/runs SUMMARIES=$OUT/$NAME/$v/summaries
  mkdir -p "$RUNS" "$SUMMARIES"
  if ! { [ "${RESUME:-0}" = 1 ] && [ -f "$QUESTIONS" ]; }; then
    rm -rf "$RUNS"; mkdir -p "$RUNS"     # runs of an earlier file are not this one's
    # shellcheck disable=SC2206
    cmd=(mhgraph generate --corpus "$NAME" --out "$QUESTIONS" --seed 0 --no-progress --n "$N" --llm-backend none ${VARIANT[$v]})
    echo "${cmd[*]}" >&2
    t0=$(date +%s.%N); "${cmd[@]}" > "$OUT/$NAME/$v/generate.txt"; t1=$(date +%s.%N)
    python -c "import json, sys; print(json.dumps({\"command\": sys.argv[1], \"wall_seconds\": float(sys.argv[3]) - float(sys.argv[2])}))" "${cmd[*]}" "$t0" "$t1" > "$OUT/$NAME/$v/generate.json"
  fi
  # shellcheck disable=SC2086
  for m in $METHODS; do run ${METHOD_RUN[$m]}; done
done
# shellcheck disable=SC2086
python bench/generate_variants_report.py --study "$STUDY" --name "$NAME" --out "$OUT" --dev "$DEV" \
  --variants "${ORDER[@]}" --methods $METHODS --json "bench/results/generate-$STUDY-$NAME.json" \
  --command "bash $0 $*" > "bench/results/generate-$STUDY-$NAME.md"
echo "written bench/results/generate-$STUDY-$NAME.md"
