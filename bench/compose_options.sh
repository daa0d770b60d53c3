#!/usr/bin/env bash
# Compose's options measured against the filtered hybrid search (filter=rules candidates=hybrid) on the development split,
# official rule, each its own record with the k-fold choice among its runs (bench/compose_report.py):
#   fusion     IR-CoT and PPR + IR-CoT expansions fused at expand_weight 1 and 0.5
#              -> bench/results/compose-fusion-NAME.md and .json (about 40 min)
#   diversify  the diversify stage at 2 and 3 chunks per document, and how each run's top 10
#              spread over documents (bench/document_spread.py)
#              -> bench/results/compose-diversify-NAME.md and .json (about 15 min)
#   balance    the balance stage by source, alone and after the IR-CoT expansion at weight 0.5,
#              and the preset's choice among the pipelines without IR-CoT (its offline strategy
#              reads questions by MultiHop-RAG's wording, and it calls a language model when one
#              is configured) -> bench/results/compose-balance-NAME.md and .json (about 25 min)
#   sources    the candidates shared among the sources the question's filter names (share=source:
#              each searched apart for its share), alone and with balance by source, and the
#              training-free preset's choice among these four pipelines
#              -> bench/results/compose-sources-NAME.md and .json (about 25 min)
#   in-domain  share=source in the in-domain pipelines: the k-fold cross-encoder fused at 0.5, with and
#              without TreeHop (both k-fold by question), beside the two training-free ones, and the
#              in-domain preset's choice among the four in-domain ones -> bench/results/compose-in-domain-NAME.md and .json (about 45 min; TRAIN_RERANKER=1
#              trains the cross-encoder first when it is missing, about 40 min more)
#   depth      the shared hybrid search fusing each side's first 100 or 200 hits (candidates=hybrid:N),
#              the deeper search's ablations (without share, without the filter, vector candidates),
#              the training-free preset's choice among these and the sources record's two, and the
#              in-domain cross-encoder on the deeper search beside it without, and the cross-encoder
#              trained only on generated questions on the deeper search (needs the in-domain record's
#              cross-encoder and bench/generate_trained.sh's) -> bench/results/compose-depth-NAME.md
#              and .json (about 70 min)
#   pool       the in-domain cross-encoder scoring all 30 candidates of the deeper search
#              (rerank=kfold:DIR:30) beside its 20, and the in-domain preset's choice between them, with
#              the training-free preset beside them (needs the in-domain record's cross-encoder)
#              -> bench/results/compose-pool-NAME.md and .json (about 35 min)
#   words      the words naming the filter's sources and dates left out of the BM25 query
#              (filter=rules:drop-words) in the training-free preset's pipeline, the preset's choice
#              among the pipelines with and without, and the ablations of the pipeline with the words
#              left out; where the in-domain record's cross-encoder is there, the in-domain preset's
#              pipeline with and without them too -> bench/results/compose-words-NAME.md and .json
#              (about 30 min; 25 more with the cross-encoder)
#   sentences  the training-free preset's 30 candidates rescored by their best sentence
#              (rerank=sentences:all-MiniLM-L6-v2:30, mhgraph/rerank/sentence_windows.py: windows of
#              the question's words against each chunk's sentences, and the question's rare words
#              held in one sentence), alone and fused with the search's score at 0.7 and 0.5, and the
#              preset's choice among these and the pipeline without them
#              -> bench/results/compose-sentences-NAME.md and .json (about 70 min)
#   bash bench/compose_options.sh [NAME] [fusion] [diversify] [balance] [sources] [in-domain] [depth] [pool] [words] [sentences]
#        (default: all but in-domain, depth, pool, words and sentences; RESUME=1 keeps
#        finished runs; runs in OUT/bench-compose-KIND, OUT default runs)
# Needs the corpus's claim layer with synonym edges (ppr). Every stage offline.
set -euo pipefail
cd "$(dirname "$0")/.."
NAME=${1:-multihop-rag}
[ $# -gt 0 ] && shift
KINDS=("$@")
[ ${#KINDS[@]} -gt 0 ] || KINDS=(fusion diversify balance sources)
source bench/compose_setup.sh "$NAME"   # QUESTIONS, EVAL_CORPUS, OFF, run, trained_in_domain_reranker
# ppr as the fusion record's runs had it (HippoRAG 2's dense weight, no metadata seeds: its defaults
# before they were chosen in bench/ppr.sh), so that a rerun repeats the record
PPR_AS_RECORDED=(--ppr-metadata-weight 0 --ppr-passage-weight 0.05)
BASE="filter=rules candidates=hybrid"
# the in-domain parts, as bench/compose.sh makes and names them
TREEHOP=${TREEHOP:-models/treehop-$NAME-pair-disjoint}
RERANKER=${RERANKER:-$IN_DOMAIN_RERANKER}   # trained on NEGATIVES near misses a question (these records' runs had 4)
GEN_RERANKER=${GEN_RERANKER:-models/reranker-$NAME-generated-describe-128}   # as bench/generate_trained.sh names it
IN_DOMAIN=(--treehop-model "$TREEHOP" --hops 2 --rerank-tokens 128 --compose-rerank-weight 0.5)

for kind in "${KINDS[@]}"; do
  RUNS=${OUT:-runs}/bench-compose-$kind
  SUMMARIES=bench/results/compose-$kind-$NAME
  record=bench/results/compose-$kind-$NAME
  mkdir -p "$RUNS" "$SUMMARIES"
  ids=()
  run p1-filter-hybrid --method compose --stages "$BASE" "${OFF[@]}"
  case $kind in
    fusion)
      run p3-filter-hybrid-ircot --method compose --stages "$BASE expand=ircot" "${OFF[@]}"
      run p4-filter-hybrid-ppr-ircot --method compose --stages "$BASE expand=ppr,ircot" "${PPR_AS_RECORDED[@]}" "${OFF[@]}"
      run w3-filter-hybrid-ircot-half --method compose --stages "$BASE expand=ircot" \
        --compose-expand-weight 0.5 "${OFF[@]}"
      run w4-filter-hybrid-ppr-ircot-half --method compose --stages "$BASE expand=ppr,ircot" \
        --compose-expand-weight 0.5 "${PPR_AS_RECORDED[@]}" "${OFF[@]}" ;;
    diversify)
      run d2-filter-hybrid-diversify2 --method compose --stages "$BASE diversify=2" "${OFF[@]}"
      run d3-filter-hybrid-diversify3 --method compose --stages "$BASE diversify=3" "${OFF[@]}" ;;
    balance)
      run b1-filter-hybrid-balance --method compose --stages "$BASE balance=source" "${OFF[@]}"
      run w3-filter-hybrid-ircot-half --method compose --stages "$BASE expand=ircot:0.5" "${OFF[@]}"
      run b2-filter-hybrid-ircot-half-balance --method compose --stages "$BASE expand=ircot:0.5 balance=source" \
        "${OFF[@]}" ;;
    sources)
      run b1-filter-hybrid-balance --method compose --stages "$BASE balance=source" "${OFF[@]}"
      run s1-filter-hybrid-share-source --method compose --stages "$BASE share=source" "${OFF[@]}"
      run s2-filter-hybrid-share-source-balance --method compose --stages "$BASE share=source balance=source" \
        "${OFF[@]}" ;;
    in-domain)
      [ -d "$TREEHOP" ] || { echo "error: $TREEHOP is missing (bash bench/generate.sh $NAME kfold trains it)" >&2; exit 1; }
      if [ ! -d "$RERANKER-onnx" ] && [ "${TRAIN_RERANKER:-0}" = 1 ]; then trained_in_domain_reranker; fi
      [ -d "$RERANKER-onnx" ] || { echo "error: $RERANKER-onnx is missing (TRAIN_RERANKER=1 trains it)" >&2; exit 1; }
      run s1-filter-hybrid-share-source --method compose --stages "$BASE share=source" "${OFF[@]}"
      run i1-filter-hybrid-rerank --method compose --stages "$BASE rerank=kfold:$RERANKER-onnx" \
        "${IN_DOMAIN[@]}" "${OFF[@]}"
      run i2-filter-hybrid-share-source-rerank --method compose \
        --stages "$BASE share=source rerank=kfold:$RERANKER-onnx" "${IN_DOMAIN[@]}" "${OFF[@]}"
      run i3-filter-hybrid-treehop-rerank --method compose --stages "$BASE expand=treehop rerank=kfold:$RERANKER-onnx" \
        "${IN_DOMAIN[@]}" "${OFF[@]}"
      run i4-filter-hybrid-share-source-treehop-rerank --method compose \
        --stages "$BASE share=source expand=treehop rerank=kfold:$RERANKER-onnx" "${IN_DOMAIN[@]}" "${OFF[@]}" ;;
    depth)
      [ -d "$RERANKER-onnx" ] || { echo "error: $RERANKER-onnx is missing (the in-domain record trains it)" >&2; exit 1; }
      [ -d "$GEN_RERANKER-onnx" ] || { echo "error: $GEN_RERANKER-onnx is missing (bash bench/generate_trained.sh trains it)" >&2; exit 1; }
      SHARED="filter=rules share=source candidates=hybrid"
      run s1-filter-hybrid-share-source --method compose --stages "$SHARED" "${OFF[@]}"
      run d1-filter-hybrid100-share-source --method compose --stages "$SHARED:100" "${OFF[@]}"
      run d2-filter-hybrid200-share-source --method compose --stages "$SHARED:200" "${OFF[@]}"
      # ablations of the chosen pipeline, one stage at a time (share; the filter, which share needs; hybrid)
      run a1-filter-hybrid200 --method compose --stages "filter=rules candidates=hybrid:200" "${OFF[@]}"
      run a2-hybrid200 --method compose --stages "candidates=hybrid:200" "${OFF[@]}"
      run a3-filter-vector-share-source --method compose --stages "filter=rules share=source candidates=vector" \
        "${OFF[@]}"
      run i2-filter-hybrid-share-source-rerank --method compose --stages "$SHARED rerank=kfold:$RERANKER-onnx" \
        "${IN_DOMAIN[@]}" "${OFF[@]}"
      run i5-filter-hybrid200-share-source-rerank --method compose \
        --stages "$SHARED:200 rerank=kfold:$RERANKER-onnx" "${IN_DOMAIN[@]}" "${OFF[@]}"
      run g1-filter-hybrid200-share-source-rerank-generated --method compose \
        --stages "$SHARED:200 rerank=$GEN_RERANKER-onnx" "${IN_DOMAIN[@]}" "${OFF[@]}" ;;
    pool)
      [ -d "$RERANKER-onnx" ] || { echo "error: $RERANKER-onnx is missing (the in-domain record trains it)" >&2; exit 1; }
      SHARED="filter=rules share=source candidates=hybrid:200"
      run d2-filter-hybrid200-share-source --method compose --stages "$SHARED" "${OFF[@]}"
      run i5-filter-hybrid200-share-source-rerank --method compose --stages "$SHARED rerank=kfold:$RERANKER-onnx" \
        "${IN_DOMAIN[@]}" "${OFF[@]}"
      run i6-filter-hybrid200-share-source-rerank30 --method compose \
        --stages "$SHARED rerank=kfold:$RERANKER-onnx:30" "${IN_DOMAIN[@]}" "${OFF[@]}" ;;
    words)
      SHARED="share=source candidates=hybrid:200"
      run d2-filter-hybrid200-share-source --method compose --stages "filter=rules $SHARED" "${OFF[@]}"
      run w1-filter-words-hybrid200-share-source --method compose --stages "filter=rules:drop-words $SHARED" \
        "${OFF[@]}"
      # ablations of w1, one stage at a time (the words: d2; share; the depth; the filter, which the
      # other two need; hybrid, whose BM25 side the words leave)
      run a4-filter-words-hybrid200 --method compose --stages "filter=rules:drop-words candidates=hybrid:200" \
        "${OFF[@]}"
      run a5-filter-words-hybrid-share-source --method compose \
        --stages "filter=rules:drop-words share=source candidates=hybrid" "${OFF[@]}"
      run a2-hybrid200 --method compose --stages "candidates=hybrid:200" "${OFF[@]}"
      run a3-filter-vector-share-source --method compose --stages "filter=rules share=source candidates=vector" \
        "${OFF[@]}"
      if [ -d "$RERANKER-onnx" ]; then
        run i6-filter-hybrid200-share-source-rerank30 --method compose \
          --stages "filter=rules $SHARED rerank=kfold:$RERANKER-onnx:30" "${IN_DOMAIN[@]}" "${OFF[@]}"
        run i7-filter-words-hybrid200-share-source-rerank30 --method compose \
          --stages "filter=rules:drop-words $SHARED rerank=kfold:$RERANKER-onnx:30" "${IN_DOMAIN[@]}" "${OFF[@]}"
      else
        echo "skipping i6, i7 (in-domain): $RERANKER-onnx is missing (the in-domain record trains it)" >&2
      fi ;;
    sentences)
      PRESET="filter=rules:drop-words share=source candidates=hybrid:200"
      SENTENCES="rerank=sentences:all-MiniLM-L6-v2:30"
      run w1-filter-words-hybrid200-share-source --method compose --stages "$PRESET" "${OFF[@]}"
      run r1-preset-sentences --method compose --stages "$PRESET $SENTENCES" --compose-rerank-weight 1 "${OFF[@]}"
      run r2-preset-sentences-0.7 --method compose --stages "$PRESET $SENTENCES" --compose-rerank-weight 0.7 \
        "${OFF[@]}"
      run r3-preset-sentences-0.5 --method compose --stages "$PRESET $SENTENCES" --compose-rerank-weight 0.5 \
        "${OFF[@]}" ;;
    *) echo "error: unknown record '$kind' (fusion, diversify, balance, sources, in-domain, depth, pool, words, sentences)" >&2; exit 1 ;;
  esac
  shippable=()   # expanded as ${shippable[@]+...}: an empty array under set -u fails on bash before 4.4
  [ "$kind" = balance ] && shippable=(--shippable p1-filter-hybrid --shippable b1-filter-hybrid-balance)
  [ "$kind" = sources ] && shippable=(--shippable p1-filter-hybrid --shippable b1-filter-hybrid-balance \
    --shippable s1-filter-hybrid-share-source --shippable s2-filter-hybrid-share-source-balance)
  [ "$kind" = depth ] && shippable=(--shippable p1-filter-hybrid --shippable s1-filter-hybrid-share-source \
    --shippable d1-filter-hybrid100-share-source --shippable d2-filter-hybrid200-share-source \
    --ablation a1-filter-hybrid200 --ablation a2-hybrid200 --ablation a3-filter-vector-share-source \
    --generated g1-filter-hybrid200-share-source-rerank-generated)
  [ "$kind" = pool ] && shippable=(--shippable p1-filter-hybrid --shippable d2-filter-hybrid200-share-source)
  [ "$kind" = sentences ] && shippable=(--shippable w1-filter-words-hybrid200-share-source \
    --shippable r1-preset-sentences --shippable r2-preset-sentences-0.7 --shippable r3-preset-sentences-0.5)
  [ "$kind" = words ] && shippable=(--shippable p1-filter-hybrid --shippable d2-filter-hybrid200-share-source \
    --shippable w1-filter-words-hybrid200-share-source --ablation a4-filter-words-hybrid200 \
    --ablation a5-filter-words-hybrid-share-source --ablation a2-hybrid200 --ablation a3-filter-vector-share-source)
  python bench/compose_report.py --name "$NAME" --questions "$QUESTIONS" --command "bash $0 $NAME $kind" \
    --json "$record.json" ${shippable[@]+"${shippable[@]}"} "${ids[@]}" > "$record.md.new"
  if [ "$kind" = diversify ]; then
    python bench/document_spread.py --md "$record.md.new" --json "$record.json" "${ids[@]}"
  fi
  mv "$record.md.new" "$record.md"
  echo "written $record.md and .json"
done
