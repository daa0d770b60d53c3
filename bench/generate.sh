#!/usr/bin/env bash
# `mhgraph generate` measured (issue 25): generated questions against the real ones. On corpus NAME
# (default multihop-rag, ingested from the official corpus.json, its claim layer built) it
#   generate  writes N (default 1,000) questions offline (--llm-backend none, seed 0), timed;
#   eval      runs the eight methods on them, one run each, with the arguments of the recorded
#             development-split runs (bench/architecture_rerun.py's RUNS table); treehop uses the
#             packaged model (trained on the development split's questions, never on these);
#   dev       the same methods but treehop on the development split, fresh (per-question results, for
#             the calibration and the split-half agreement of the real questions with themselves);
#   kfold     treehop k-fold on both sets: models trained by question folds of the development split,
#             and of the generated set, each question scored by the fold model that never saw it
#             (trained here when missing; KFOLD, default "dev pair-disjoint generated evidence-disjoint",
#             picks which: the development split's ordinary and pair-disjoint folds, the generated set's
#             folds, and evidence-disjoint folds on both sets: no gold chunk of a held-out question in
#             any training example);
#   flat      corpus NAME-flat (corpus.txt, no metadata, claim layer built): N questions generated
#             offline (temporal skipped, with a note), then FLAT_METHODS on the generated-flat set
#             (treehop: evidence-disjoint k-fold models trained on each set over this corpus)
#             and on the development split scored against the flat corpus (gold matched by fact text);
#   local     LOCAL_N (default 8) questions with the local model (--llm-backend local), timed;
#             LOCAL_CHECK (default 0) of them answered from their own gold evidence.
#   harvest   the model-written set, part 1 (bench/llm_replay.py): the same generate command as `model`
#             against a recording endpoint, which answers nothing usable, so every candidate's first
#             model request is recorded; then the jobs a GPU answers (MODEL_PER_TYPE per question type,
#             default 1200) in $OUT/NAME/model/jobs.jsonl.gz. Answer them with bench/gpu_replies.py
#             (see docs/benchmarks.md) into REPLIES (default $OUT/NAME/model/replies.jsonl.gz).
#   model     part 2: the same command against an endpoint replaying REPLIES: N questions written by
#             MODEL_LABEL, the answerability of each kept question whose check was answered, then the eight
#             methods on them.
# Then bench/generate_report.py writes bench/results/generate-NAME.md and .json; each run's summary
# is copied to bench/results/generate-NAME/ (the generated question files are not: regenerate them,
# same corpus + seed + settings = same file).
#   bash bench/generate.sh [NAME] [STEP...]     (steps: generate eval dev kfold flat local harvest model report;
#                                                default all; RESUME=1 keeps finished runs and files)
# ONLY="vector bm25" limits the eight methods; OUT (default runs/bench-generate) holds files and runs;
# GEN_ARGS (e.g. "--grouping random") is added to every mhgraph generate command.
# Environment of the recorded run: source /work/gen-env.sh (its own Neo4j server, offline LLM backend).
set -euo pipefail
cd "$(dirname "$0")/.."
NAME=${1:-multihop-rag}
shift || true
STEPS=${*:-generate eval dev kfold flat local report}
DEV=${DEV:-../shared/data/multihop-rag/MultiHopRAG.json}
N=${N:-1000}
LOCAL_N=${LOCAL_N:-8}
LOCAL_CHECK=${LOCAL_CHECK:-0}   # of the local slice, questions the model answers from their own gold evidence
FLAT=${FLAT:-$NAME-flat}
FLAT_METHODS=${FLAT_METHODS:-vector bm25 hybrid ircot decompose claims treehop}
OUT=${OUT:-runs/bench-generate}
SUMMARIES=bench/results/generate-$NAME
mkdir -p "$OUT/$NAME" "$OUT/$FLAT" "$SUMMARIES"
[ -f "$DEV" ] || { echo "error: $DEV: file not found" >&2; exit 1; }
has() { [[ " $STEPS " == *" $1 "* ]]; }

# gen CORPUS FILE TAG ARGS...: mhgraph generate, timed into $SUMMARIES/TAG-generate.json (with its summary)
gen() {
  local corpus=$1 file=$2 tag=$3; shift 3
  if [ "${RESUME:-0}" = 1 ] && [ -f "$file" ] && [ -f "$SUMMARIES/$tag-generate.json" ]; then return; fi
  rm -f "$file"
  # shellcheck disable=SC2206
  local cmd=(mhgraph generate --corpus "$corpus" --out "$file" --seed 0 --no-progress "$@" ${GEN_ARGS:-})
  echo "${cmd[*]}" >&2
  local t0 t1 rc=0
  t0=$(date +%s.%N)
  "${cmd[@]}" > "$SUMMARIES/$tag-generate.txt" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  python - "$SUMMARIES/$tag-generate.json" "$file" "$t0" "$t1" "$rc" "${cmd[*]}" <<'EOF'
import json, sys
from pathlib import Path
out, file, t0, t1, rc, cmd = sys.argv[1:]
summary = Path(file).with_name(Path(file).stem + ".summary.json")
record = {"command": cmd, "wall_seconds": float(t1) - float(t0), "rc": int(rc),
          "summary": json.loads(summary.read_text()) if summary.is_file() else None}
Path(out).write_text(json.dumps(record, indent=1) + "\n")
print(f"{cmd}: rc {rc}, {record['wall_seconds']:.1f} s", file=sys.stderr)
EOF
  return "$rc"
}

# the eight methods, with the recorded development-split runs' arguments (architecture_rerun.RUNS);
# ONLY="vector bm25 ..." keeps those methods
pick() { if [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" ${1%%-*} "* ]]; then run "$@"; fi; }
source bench/generate_methods.sh
eight() {
  local m
  for m in $METHOD_ORDER; do
    if [ "$m" = treehop ] && [ "${1:-}" = no-treehop ]; then continue; fi
    # shellcheck disable=SC2086
    pick ${METHOD_RUN[$m]}
  done
}

ids=()
source bench/eval_runs.sh
GEN=$OUT/$NAME/questions.json
if has generate; then gen "$NAME" "$GEN" generated --n "$N" --llm-backend none; fi
if has eval; then
  RUNS=$OUT/$NAME/runs-generated EVAL_CORPUS=$NAME QUESTIONS=$GEN SUMMARIES=$SUMMARIES/generated
  mkdir -p "$RUNS" "$SUMMARIES"; eight
fi
SUMMARIES=bench/results/generate-$NAME
if has dev; then
  RUNS=$OUT/$NAME/runs-dev EVAL_CORPUS=$NAME QUESTIONS=$DEV SUMMARIES=$SUMMARIES/dev
  mkdir -p "$RUNS" "$SUMMARIES"; eight no-treehop   # treehop on these questions: the k-fold models (kfold)
fi
SUMMARIES=bench/results/generate-$NAME
kfold_has() { [[ " ${KFOLD:-dev pair-disjoint generated evidence-disjoint} " == *" $1 "* ]]; }
if has kfold && kfold_has dev; then
  MODELS=models/treehop-$NAME
  [ -f "$MODELS/folds.json" ] || mhgraph treehop train --corpus "$NAME" --questions "$DEV" --out "$MODELS" \
    --terms q,c,gate --no-final --no-progress
  RUNS=$OUT/$NAME/runs-dev EVAL_CORPUS=$NAME QUESTIONS=$DEV SUMMARIES=bench/results/generate-$NAME/dev
  mkdir -p "$RUNS" "$SUMMARIES"; run treehop-kfold-k5-h2 --method treehop --treehop-model "$MODELS" -k 5 --hops 2
fi
if has kfold && kfold_has pair-disjoint; then
  # pair-disjoint folds: no held-out question's hop (a pair of its gold chunks) among the training examples;
  # the real questions share hops, the generated ones seldom do, so this is the development figure to set
  # beside the generated set's
  MODELS=models/treehop-$NAME-pair-disjoint
  [ -f "$MODELS/folds.json" ] || mhgraph treehop train --corpus "$NAME" --questions "$DEV" --out "$MODELS" \
    --terms q,c,gate --no-final --pair-disjoint --no-progress
  RUNS=$OUT/$NAME/runs-dev EVAL_CORPUS=$NAME QUESTIONS=$DEV SUMMARIES=bench/results/generate-$NAME/dev
  mkdir -p "$RUNS" "$SUMMARIES"; run treehop-pairdisjoint-k5-h2 --method treehop --treehop-model "$MODELS" -k 5 --hops 2
fi
if has kfold && kfold_has generated; then
  # the same training on the generated questions (what a user without questions of their own would do),
  # each generated question scored by the fold model that never saw it
  MODELS=models/treehop-$NAME-generated
  [ -f "$MODELS/folds.json" ] || mhgraph treehop train --corpus "$NAME" --questions "$GEN" --out "$MODELS" \
    --terms q,c,gate --no-final --no-progress
  RUNS=$OUT/$NAME/runs-generated EVAL_CORPUS=$NAME QUESTIONS=$GEN SUMMARIES=bench/results/generate-$NAME/generated
  mkdir -p "$RUNS" "$SUMMARIES"; run treehop-kfold-k5-h2 --method treehop --treehop-model "$MODELS" -k 5 --hops 2
fi
# evidence_disjoint_treehop CORPUS QUESTIONS MODELS: treehop scored by evidence-disjoint k-fold models of CORPUS
# over QUESTIONS (trained into MODELS when missing), as run treehop-evidencedisjoint-k5-h2 into $RUNS
evidence_disjoint_treehop() {
  [ -f "$3/folds.json" ] || mhgraph treehop train --corpus "$1" --questions "$2" --out "$3" \
    --terms q,c,gate --no-final --evidence-disjoint --no-progress
  run treehop-evidencedisjoint-k5-h2 --method treehop --treehop-model "$3" -k 5 --hops 2
}
if has kfold && kfold_has evidence-disjoint; then
  # evidence-disjoint folds on both sets: each fold model kept from every training example that touches a gold
  # chunk of a question it scores (the real questions reuse their evidence: question folds let a model learn a
  # held-out question's gold chunks from other questions)
  for set in dev generated; do
    if [ "$set" = dev ]; then QUESTIONS=$DEV MODELS=models/treehop-$NAME-evidence-disjoint
    else QUESTIONS=$GEN MODELS=models/treehop-$NAME-generated-evidence-disjoint; fi
    RUNS=$OUT/$NAME/runs-$set EVAL_CORPUS=$NAME SUMMARIES=bench/results/generate-$NAME/$set
    mkdir -p "$RUNS" "$SUMMARIES"; evidence_disjoint_treehop "$NAME" "$QUESTIONS" "$MODELS"
  done
fi
SUMMARIES=bench/results/generate-$NAME
if has flat; then
  GEN_FLAT=$OUT/$FLAT/questions.json
  gen "$FLAT" "$GEN_FLAT" flat-generated --n "$N" --llm-backend none
  for set in generated dev; do
    if [ "$set" = generated ]; then QUESTIONS=$GEN_FLAT; else QUESTIONS=$DEV; fi
    RUNS=$OUT/$FLAT/runs-$set EVAL_CORPUS=$FLAT SUMMARIES=bench/results/generate-$NAME/flat-$set
    mkdir -p "$RUNS" "$SUMMARIES"
    for m in $FLAT_METHODS; do
      if [ "$m" != treehop ]; then
        # shellcheck disable=SC2086
        pick ${METHOD_RUN[$m]}
      elif [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" treehop "* ]]; then
        # not the packaged model (trained on the real questions): evidence-disjoint k-fold models of this corpus
        MODELS=models/treehop-$FLAT-$([ "$set" = dev ] && echo evidence-disjoint || echo generated-evidence-disjoint)
        evidence_disjoint_treehop "$FLAT" "$QUESTIONS" "$MODELS"
      fi
    done
  done
fi
SUMMARIES=bench/results/generate-$NAME
if has local; then   # the local model's seconds per question (a stratified slice of LOCAL_N; --no-cache: all calls count)
  gen "$NAME" "$OUT/$NAME/questions-local.json" local --n "$LOCAL_N" --llm-backend local --no-cache --answer-check "$LOCAL_CHECK" \
    || echo "local generation failed (see $SUMMARIES/local-generate.txt)" >&2
fi
MODEL_DIR=$OUT/$NAME/model
REPLIES=${REPLIES:-$MODEL_DIR/replies.jsonl.gz}
MODEL_LABEL=${MODEL_LABEL:-qwen2.5-coder-1.5b-instruct-q4_k_m@transformers-bf16-gpu-replay}
# replay TABLE... -- CMD...: CMD with OPENAI_BASE_URL at bench/llm_replay.py serving TABLEs (recording the rest)
replay() {
  local tables=() url
  while [ "$1" != -- ]; do tables+=(--table "$1"); shift; done; shift
  rm -f "$MODEL_DIR/url"
  python bench/llm_replay.py serve "${tables[@]}" --record "$MODEL_DIR/unanswered.jsonl" \
    --port-file "$MODEL_DIR/url" > "$MODEL_DIR/server-$4.log" 2>&1 &
  local server=$!
  trap "kill $server 2>/dev/null" EXIT
  while [ ! -s "$MODEL_DIR/url" ]; do kill -0 "$server" 2>/dev/null || { cat "$MODEL_DIR/server-$4.log"; return 1; }; sleep 0.2; done
  url=$(cat "$MODEL_DIR/url")
  local rc=0
  export OPENAI_BASE_URL=$url OPENAI_API_KEY=replay
  "$@" || rc=$?
  unset OPENAI_BASE_URL OPENAI_API_KEY
  kill "$server" 2>/dev/null || true; wait "$server" || true
  trap - EXIT
  return "$rc"
}
MODEL_ARGS=(--n "$N" --llm-backend openai --answer-check 0 --no-cache)
if has harvest && ! { [ "${RESUME:-0}" = 1 ] && [ -s "$MODEL_DIR/jobs.jsonl.gz" ]; }; then
  mkdir -p "$MODEL_DIR"; rm -f "$MODEL_DIR/unanswered.jsonl"
  replay -- gen "$NAME" "$MODEL_DIR/harvest.json" model-harvest "${MODEL_ARGS[@]}" --llm-model harvest
  mv "$MODEL_DIR/unanswered.jsonl" "$MODEL_DIR/requests.jsonl"
  python bench/llm_replay.py jobs --requests "$MODEL_DIR/requests.jsonl" --out "$MODEL_DIR/jobs.jsonl" \
    --per-type "${MODEL_PER_TYPE:-1200}"
  gzip -f "$MODEL_DIR/jobs.jsonl"
fi
if has model; then
  [ -f "$REPLIES" ] || { echo "error: $REPLIES: file not found (run the harvest step and bench/gpu_replies.py)" >&2; exit 1; }
  rm -f "$MODEL_DIR/unanswered.jsonl"
  replay "$REPLIES" -- gen "$NAME" "$MODEL_DIR/questions.json" model "${MODEL_ARGS[@]}" \
    --llm-model "$MODEL_LABEL"
  # the checks may come from more replies (CHECK_REPLIES: another device run of the same model)
  checks=(--table "$REPLIES"); for t in ${CHECK_REPLIES:-}; do checks+=(--table "$t"); done
  python bench/llm_replay.py answerable --questions "$MODEL_DIR/questions.json" "${checks[@]}" \
    --out "$SUMMARIES/model-answerable.json"
  RUNS=$MODEL_DIR/runs EVAL_CORPUS=$NAME QUESTIONS=$MODEL_DIR/questions.json SUMMARIES=$SUMMARIES/model
  mkdir -p "$RUNS" "$SUMMARIES"; eight
fi
SUMMARIES=bench/results/generate-$NAME
if has report; then
  python bench/generate_report.py --name "$NAME" --flat "$FLAT" --out "$OUT" --dev "$DEV" \
    --command "bash $0 $NAME" ${NOTES:+--notes "$NOTES"} --json "bench/results/generate-$NAME.json" > "bench/results/generate-$NAME.md"
  echo "written bench/results/generate-$NAME.md and .json"
fi
