# Sourced by the metarag bench scripts (metarag.sh, metarag_llm.sh, metarag_reranker.sh,
# embed_header.sh) and reasoning.sh: run ID ARGS... evaluates one run of
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

# write_report TITLE OUT ARGS...: one compare table over the runs in ids, rendered with
# bench/metarag_report.py into OUT; ARGS are the calling script's own (recorded as its command).
write_report() {
  local title=$1 out=$2 latest; shift 2
  mhgraph eval --compare "${ids[@]}" --runs-dir "$RUNS" > /dev/null
  latest=$(ls -d "$RUNS"/compare-* | sort | tail -n 1)
  python bench/metarag_report.py "$latest/compare.md" "${ids[@]}" --questions "$QUESTIONS" --name "$NAME" \
    --title "$title" --command "bash $0 $*" > "$out"
  echo "written $out (per-run summaries in $SUMMARIES/)"
}
