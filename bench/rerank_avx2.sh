#!/usr/bin/env bash
# The rerank stage's cost with the code paths held to AVX2 (issue 26: under 300 ms per question on
# 20 candidates on a CPU without AVX-512, AMX or bf16 as on one with them), each beside the same
# measure as this CPU runs it (bench/rerank_cost.py --isa native,avx2):
#   - the training-free preset's sentence reranker on its prepared sentences, 20 and 50 candidates;
#   - the in-domain cross-encoder's torch folds at 128-token pairs, 20 candidates, in float32 (bfloat16
#     natively) and with int8 weights (--precision int8: torch's dynamic quantization, FBGEMM held to
#     AVX2 too);
#   - the same at half the layers (reranker train --layers 3; bench/treehop_in_domain.sh trains it), when there.
#   -> bench/results/rerank-avx2-{sentences-20,sentences-50,kfold-20,kfold-int8-20,kfold-3-layers-20}-NAME.md
#      and .json (about 12 min; ONLY=RECORD, e.g. ONLY=kfold-int8-20, runs that one alone)
# The records of the ONNX exports below run on ONNX Runtime, which has no switch and picks its kernels
# from CPUID: on an AVX-512 CPU they are held by answering CPUID without the wider extensions
# (bench/cpuid_avx2.c, which needs the kernel's CPUID faulting: cpuid_fault in /proc/cpuinfo), into
# rerank-avx2-RECORD-NAME, and left out where it has none.
# On a CPU without AVX-512 (no avx512f in /proc/cpuinfo) nothing needs holding: each record is measured as
# the CPU runs it, into rerank-avx2-cpu-RECORD-NAME, ONNX ones included: kfold-onnx-20, the int8 ONNX
# export the in-domain preset names (pairs cut to
# 128, 96 and 64 tokens), kfold-onnx-focus-20 (the same at 128 and 80, each passage read from its start
# and focused: --rerank-focus), kfold-onnx-10 (128-token pairs on 10 candidates),
# kfold-distilled-onnx-20 (its student of 3 layers: compose_setup's distilled_reranker, trained here
# when missing, about 45 min; with DISTILL_NEGATIVES or DISTILL_EPOCHS set otherwise,
# kfold-distilled-negN-epochsE-onnx-20), and
# packaged-20, the cross-encoder the package carries (multihop-rag-minilm, 512- and 128-token pairs).
# Reads the sentences bench/sentence_store.sh prepared (prepared here when missing, about 7 min) and
# the in-domain record's k-fold cross-encoder (bench/compose_options.sh trains it).
# TAG: put in each record's name before NAME (TAG=-amx: rerank-avx2-packaged-20-amx-NAME), so that a
# second machine's records stand beside the first's rather than replace them.
#   bash bench/rerank_avx2.sh [NAME]     (PER_TYPE default 75: the first N questions of each type)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/compose_setup.sh   # NAME, QUESTIONS, MODEL, SENTENCE_CACHE
PER_TYPE=${PER_TYPE:-75}
TAG=${TAG:-}
RECORDS=(sentences-20 sentences-50 kfold-20 kfold-int8-20 kfold-3-layers-20)
ONNX_RECORDS=(kfold-onnx-20 kfold-onnx-focus-20 kfold-onnx-10 kfold-distilled-onnx-20 packaged-20)
if grep -qw avx512f /proc/cpuinfo; then
  ISA=native,avx2 PREFIX=rerank-avx2
  if grep -qw cpuid_fault /proc/cpuinfo; then RECORDS+=("${ONNX_RECORDS[@]}"); fi
else
  ISA=native PREFIX=rerank-avx2-cpu
  RECORDS+=("${ONNX_RECORDS[@]}")
fi
if [ -n "${ONLY:-}" ] && [[ ! " ${RECORDS[*]} " == *" $ONLY "* ]]; then
  echo "error: ONLY=$ONLY: not a record of this script (${RECORDS[*]})" >&2; exit 1
fi
# wanted RECORD: a record of this CPU's list, and the one ONLY names when set
wanted() { [[ " ${RECORDS[*]} " == *" $1 "* ]] && { [ -z "${ONLY:-}" ] || [ "$ONLY" = "$1" ]; }; }
RERANKER=${RERANKER:-$IN_DOMAIN_RERANKER}
if { wanted kfold-20 || wanted kfold-int8-20 || wanted kfold-onnx-20 || wanted kfold-onnx-focus-20 ||
  wanted kfold-onnx-10 || wanted kfold-distilled-onnx-20; } &&
  [ ! -f "$RERANKER/folds.json" ]; then
  echo "error: $RERANKER: not found (bash bench/in_domain_preset.sh trains it)" >&2; exit 1
fi
if wanted sentences-20 || wanted sentences-50; then
  MHGRAPH_CACHE_DIR=$SENTENCE_CACHE mhgraph reranker prepare "sentences:$MODEL" --corpus "$NAME" --no-progress
fi
# record_path RECORD: where RECORD's record is written (bench/results/PREFIX-RECORD[TAG]-NAME, .md and .json)
record_path() { echo "bench/results/$PREFIX-$1$TAG-$NAME"; }
common=(--corpus "$NAME" --questions "$QUESTIONS" --per-type "$PER_TYPE" --isa "$ISA")
for k in 20 50; do
  wanted "sentences-$k" || continue
  python bench/rerank_cost.py --reranker "sentences:$MODEL" --cache-dir "$SENTENCE_CACHE" --tokens none --weights 0.7 \
    --candidates "$k" "${common[@]}" --out "$(record_path sentences-$k)"
done
wanted kfold-20 && python bench/rerank_cost.py --reranker "kfold:$RERANKER" --tokens 128 --weights 0.5 --candidates 20 \
  "${common[@]}" --out "$(record_path kfold-20)"
wanted kfold-int8-20 && python bench/rerank_cost.py --reranker "kfold:$RERANKER" --precision int8 --tokens 128 \
  --weights 0.5 --candidates 20 "${common[@]}" --out "$(record_path kfold-int8-20)"
# the ONNX export, made from the folds checked above when missing (they exist, so nothing is trained)
if wanted kfold-onnx-20 || wanted kfold-onnx-focus-20 || wanted kfold-onnx-10; then trained_in_domain_reranker; fi
wanted kfold-onnx-20 && python bench/rerank_cost.py --reranker "kfold:$RERANKER-onnx" --tokens 128,96,64 --weights 0.5 \
  --candidates 20 "${common[@]}" --out "$(record_path kfold-onnx-20)"
wanted kfold-onnx-focus-20 && python bench/rerank_cost.py --reranker "kfold:$RERANKER-onnx" --tokens 128,80 \
  --focus plain,focused --weights 0.5 --candidates 20 "${common[@]}" --out "$(record_path kfold-onnx-focus-20)"
wanted kfold-onnx-10 && python bench/rerank_cost.py --reranker "kfold:$RERANKER-onnx" --tokens 128 --weights 0.5 \
  --candidates 10 "${common[@]}" --out "$(record_path kfold-onnx-10)"
# the cross-encoder distilled to 3 layers (compose_setup's distilled_reranker), made when missing
if wanted kfold-distilled-onnx-20; then
  distilled_reranker
  python bench/rerank_cost.py --reranker "kfold:$DISTILLED-onnx" --tokens 128 --weights 0.5 --candidates 20 \
    "${common[@]}" --out "$(record_path kfold-distilled$DISTILLED_SETTINGS-onnx-20)"
fi
wanted packaged-20 && python bench/rerank_cost.py --reranker multihop-rag-minilm --tokens 512,128 --weights 1,0.5 \
  --candidates 20 "${common[@]}" --out "$(record_path packaged-20)"
SMALL=${SMALL:-models/reranker-$NAME-kfold-128-3-layers}
if wanted kfold-3-layers-20; then
  if [ -f "$SMALL/folds.json" ]; then
    python bench/rerank_cost.py --reranker "kfold:$SMALL" --tokens 128 --weights 0.5 --candidates 20 "${common[@]}" \
      --out "$(record_path kfold-3-layers-20)"
  else
    echo "skipping the 3-layer cross-encoder: $SMALL not found (bench/treehop_in_domain.sh trains it)" >&2
  fi
fi
