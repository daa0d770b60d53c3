# Sourced by the compose records' scripts (compose.sh, compose_options.sh, sentence_store.sh,
# rerank_combined.sh, treehop_in_domain.sh, rerank_weights.sh, in_domain_preset.sh, rerank_avx2.sh, ...)
# once in the checkout: NAME (the script's first argument, default
# multihop-rag), QUESTIONS (default the development split; checked), EVAL_CORPUS, OFF (every stage
# offline, K = 10), MODEL and SENTENCE_CACHE (the sentence reranker's) and eval_runs.sh's run; in_domain_reranker sets RERANKER, the in-domain record's
# k-fold cross-encoder (default models/reranker-NAME-kfold-128), and checks its ONNX export and that it
# was trained on NEGATIVES near misses a question (default 8);
# trained_in_domain_reranker makes both; distilled_reranker its 3-layer student; train_treehop trains
# TreeHop k-fold once; RANKS holds the
# in-domain preset's fusion options.
NAME=${1:-multihop-rag}
QUESTIONS=${QUESTIONS:-../shared/data/multihop-rag/MultiHopRAG.json}
EVAL_CORPUS=$NAME
[ -f "$QUESTIONS" ] || { echo "error: $QUESTIONS: file not found" >&2; exit 1; }
source bench/eval_runs.sh
OFF=(--llm-backend none -k 10)
# the sentence reranker's model, and the cache folder bench/sentence_store.sh prepares its sentences in
MODEL=all-MiniLM-L6-v2
SENTENCE_CACHE=${OUT:-runs}/bench-compose-stored/cache
# the in-domain record's k-fold cross-encoder, where RERANKER names none, and the near misses a question
# it is trained on (8: compose-weights-reranker-NAME-kfold-128-neg8-NAME.md; the records before
# 2026-12-02 used 4, NEGATIVES=4 repeats them)
IN_DOMAIN_RERANKER=models/reranker-$NAME-kfold-128
NEGATIVES=${NEGATIVES:-8}

in_domain_reranker() {
  RERANKER=${RERANKER:-$IN_DOMAIN_RERANKER}
  [ -d "$RERANKER-onnx" ] || {
    echo "error: $RERANKER-onnx: not found (bash bench/in_domain_preset.sh trains and exports it)" >&2
    exit 1
  }
  [ ! -f "$RERANKER/folds.json" ] || trained_on_negatives "$RERANKER"
}

# the in-domain preset's fusion (the options it sets beside its line): the rerankers' rankings fused
# with the candidates' and TreeHop's by reciprocal rank (k 5), the rerankers together half the weight
RANKS=(--compose-rerank-fusion ranks --compose-rerank-rrf-k 5 --rerank-tokens 128 --compose-rerank-weight 0.5 "${OFF[@]}")

# trained_in_domain_reranker: RERANKER (default models/reranker-NAME-kfold-128), the in-domain record's
# cross-encoder (3-fold by question, NEGATIVES near misses, 128-token pairs; about 25 min on 2 AVX-512
# cores) and its ONNX export (RERANKER-onnx), each made once; a folder trained on other near misses is refused
trained_in_domain_reranker() {
  RERANKER=${RERANKER:-$IN_DOMAIN_RERANKER}
  [ -f "$RERANKER/folds.json" ] || mhgraph reranker train --corpus "$NAME" --questions "$QUESTIONS" --out "$RERANKER" \
    --folds 3 --negatives "$NEGATIVES" --max-length 128 --no-final
  trained_on_negatives "$RERANKER"
  [ -d "$RERANKER-onnx" ] || mhgraph reranker export "$RERANKER" --out "$RERANKER-onnx" --max-length 128
}

# trained_on_negatives FOLDER: fails, naming FOLDER, unless its folds.json says it was trained on NEGATIVES
# near misses a question (a folder left by an earlier record would otherwise stand in for this one)
trained_on_negatives() {
  python - "$1/folds.json" "$NEGATIVES" <<'PY'
import json, sys
trained = json.load(open(sys.argv[1]))["options"]["negatives"]
if trained != int(sys.argv[2]):
    sys.exit(f"error: {sys.argv[1]}: trained on {trained} near misses a question, not NEGATIVES={sys.argv[2]} "
             "(remove the folder, or set RERANKER to another)")
PY
}

# distilled_reranker: DISTILLED (default RERANKER-distilled-3-layers, -negN-epochsE after it for other
# settings), the in-domain cross-encoder
# distilled to its first 3 layers (reranker train --teacher: each fold from the teacher's fold,
# learning its logits; 3-fold as the teacher, about 45 min on 2 AVX2 cores) and its ONNX export
# (DISTILLED-onnx), each made once, on DISTILL_NEGATIVES near misses a question for DISTILL_EPOCHS
# epochs (defaults 4 and 1, as its first record's); trained_in_domain_reranker first
distilled_reranker() {
  trained_in_domain_reranker
  DISTILL_NEGATIVES=${DISTILL_NEGATIVES:-4}
  DISTILL_EPOCHS=${DISTILL_EPOCHS:-1}
  # DISTILLED_TAG: the student's settings, as its records name them; DISTILLED_SETTINGS: the same, empty for
  # the first record's settings (4/1), as its folder and rerank_avx2.sh's record take it, so that neither
  # stands in for the other
  DISTILLED_TAG=-neg$DISTILL_NEGATIVES-epochs$DISTILL_EPOCHS
  DISTILLED_SETTINGS=
  [ "$DISTILLED_TAG" = -neg4-epochs1 ] || DISTILLED_SETTINGS=$DISTILLED_TAG
  DISTILLED=${DISTILLED:-$RERANKER-distilled-3-layers$DISTILLED_SETTINGS}
  [ -f "$DISTILLED/folds.json" ] || mhgraph reranker train --corpus "$NAME" --questions "$QUESTIONS" --out "$DISTILLED" \
    --teacher "$RERANKER" --layers 3 --folds 3 --negatives "$DISTILL_NEGATIVES" --epochs "$DISTILL_EPOCHS" \
    --max-length 128 --no-final
  [ -d "$DISTILLED-onnx" ] || mhgraph reranker export "$DISTILLED" --out "$DISTILLED-onnx" --max-length 128
}

# train_treehop FOLDER [FLAGS]: TreeHop 5-fold by question into FOLDER, once (its folds.json marks it done)
train_treehop() {
  [ -f "$1/folds.json" ] || mhgraph treehop train --corpus "$NAME" --questions "$QUESTIONS" --out "$1" --no-final \
    --no-progress "${@:2}"
}

# record_in KIND: RUNS (OUT/bench-compose-KIND, default OUT runs), SUMMARIES and record
# (bench/results/compose-KIND-NAME), made
record_in() {
  RUNS=${OUT:-runs}/bench-compose-$1
  SUMMARIES=bench/results/compose-$1-$NAME
  record=$SUMMARIES
  mkdir -p "$RUNS" "$SUMMARIES"
}

# prepared_sentences: MHGRAPH_CACHE_DIR set to SENTENCE_CACHE; what it lacks prepared now (about
# 7 min from nothing), the summary in SUMMARIES/prepare.txt
prepared_sentences() {
  export MHGRAPH_CACHE_DIR=$SENTENCE_CACHE
  mhgraph reranker prepare "sentences:$MODEL" --corpus "$NAME" --no-progress > "$SUMMARIES/prepare.txt"
}
