# Sourced by bench/generate.sh and bench/generate_variants.sh: the methods a generated question set is
# scored with, name -> "RUN_ID ARGS..." (the arguments of its recorded development-split run,
# bench/architecture_rerun.py's RUNS; treehop with the packaged model), and the order they run in.
# shellcheck disable=SC2034
declare -A METHOD_RUN=([vector]="vector-k10 --method vector -k 10" [bm25]="bm25-k10 --method bm25 -k 10"
  [hybrid]="hybrid-k10 --method hybrid -k 10"
  [metarag]="metarag-rules-k10 --method metarag --filter-extractor rules -k 10 --no-rerank"
  [treehop]="treehop-packaged-k5-h2 --method treehop -k 5 --hops 2"
  [ircot]="ircot-offline-k5 --method ircot -k 5 --llm-backend none"
  [decompose]="decompose-offline-n3-k5 --method decompose --sub-questions 3 -k 5 --llm-backend none"
  [claims]="claims-offline-k8 --method claims -k 8 --llm-backend none")
# shellcheck disable=SC2034
METHOD_ORDER="vector bm25 hybrid metarag treehop ircot decompose claims"
