# Sourced by bench/metarag.sh and bench/embed_header.sh: run ID ARGS... evaluates one run of
# $QUESTIONS on corpus $EVAL_CORPUS into $RUNS/ID (skipped with RESUME=1 when its report exists),
# copies its summary to $SUMMARIES/ID.json and appends the run's folder to the array ids.
run() {
  local id=$1; shift
  if ! { [ "${RESUME:-0}" = 1 ] && [ -f "$RUNS/$id/report.json" ]; }; then
    echo "$id" >&2
    mhgraph eval --corpus "$EVAL_CORPUS" --questions "$QUESTIONS" --runs-dir "$RUNS" --run-id "$id" --no-progress \
      --no-trace "$@" > /dev/null
  fi
  cp "$RUNS/$id/report.json" "$SUMMARIES/$id.json"
  ids+=("$RUNS/$id")
}
