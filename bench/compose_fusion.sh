#!/usr/bin/env bash
# Fusion that weights the expansions below the candidates (compose's expand_weight): the
# training-free preset, and IR-CoT, and PPR with IR-CoT, as expansions fused at weight 1 and 0.5,
# on the development split, official rule, with the k-fold choice among them (bench/compose_report.py).
#   bash bench/compose_fusion.sh [NAME]     (RESUME=1 keeps finished runs; OUT, default
#                                            runs/bench-compose-fusion)
# Needs the corpus's claim layer with synonym edges (ppr). Every stage offline.
# Writes bench/results/compose-fusion-NAME.md and .json; per-run summaries in bench/results/compose-fusion-NAME/.
set -euo pipefail
cd "$(dirname "$0")/.."
NAME=${1:-multihop-rag}
QUESTIONS=${QUESTIONS:-../shared/data/multihop-rag/MultiHopRAG.json}
RUNS=${OUT:-runs/bench-compose-fusion}
EVAL_CORPUS=$NAME
SUMMARIES=bench/results/compose-fusion-$NAME
mkdir -p "$RUNS" "$SUMMARIES"
[ -f "$QUESTIONS" ] || { echo "error: $QUESTIONS: file not found" >&2; exit 1; }
ids=()
source bench/eval_runs.sh
OFF=(--llm-backend none -k 10)
run p1-filter-hybrid --method compose --stages "filter=rules candidates=hybrid" "${OFF[@]}"
run p3-filter-hybrid-ircot --method compose --stages "filter=rules candidates=hybrid expand=ircot" "${OFF[@]}"
run p4-filter-hybrid-ppr-ircot --method compose --stages "filter=rules candidates=hybrid expand=ppr,ircot" "${OFF[@]}"
run w3-filter-hybrid-ircot-half --method compose --stages "filter=rules candidates=hybrid expand=ircot" \
  --compose-expand-weight 0.5 "${OFF[@]}"
run w4-filter-hybrid-ppr-ircot-half --method compose --stages "filter=rules candidates=hybrid expand=ppr,ircot" \
  --compose-expand-weight 0.5 "${OFF[@]}"
python bench/compose_report.py --name "$NAME" --questions "$QUESTIONS" --command "bash $0 $NAME" \
  --json "bench/results/compose-fusion-$NAME.json" "${ids[@]}" > "bench/results/compose-fusion-$NAME.md.new"
mv "bench/results/compose-fusion-$NAME.md.new" "bench/results/compose-fusion-$NAME.md"
echo "written bench/results/compose-fusion-$NAME.md and .json"
