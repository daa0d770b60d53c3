"""The device the reranker trains on, and whether bfloat16 pays off on this machine, for training and
for scoring with trained models.

On a CPU with AMX or AVX512-BF16 (oneDNN uses them), bfloat16 autocast trains a MiniLM cross-encoder
about 1.7x faster and scores pairs about 3x faster than float32 (measured on a 2-core Xeon); on a CPU
without them (or with the code paths held below them, as bench/rerank_cost.py --isa avx2 holds them)
it is slower, so it is chosen per machine, never assumed.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

CPU_BF16_FLAGS = re.compile(r"\b(amx_bf16|avx512_bf16)\b")


def default_device() -> str:
    """CUDA if there is one, else the CPU: where the reranker is trained, and the device fast_bf16()
    answers for when given none."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


# the vector code oneDNN and ATen may be held to (ONEDNN_MAX_CPU_ISA, ATEN_CPU_CAPABILITY) that has no
# bf16 instructions: held there, bfloat16 is emulated and slower than float32 (about 3x, measured here)
# (upper-cased, as the variables' values are compared)
HELD_WITHOUT_BF16 = {"ONEDNN_MAX_CPU_ISA": {"SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX512_CORE", "AVX512_CORE_VNNI"},
                     "ATEN_CPU_CAPABILITY": {"DEFAULT", "AVX2"}}


@lru_cache(maxsize=None)
def fast_bf16(device: str | None = None) -> bool:
    """bfloat16 is fast on `device` (default: default_device()): a CUDA GPU with bf16, or a CPU with
    AMX or AVX512-BF16 whose code paths are not held below them."""
    import torch

    if (device or default_device()).startswith("cuda"):
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    if any(os.environ.get(name, "").strip().upper() in held for name, held in HELD_WITHOUT_BF16.items()):
        return False
    try:
        return bool(CPU_BF16_FLAGS.search(Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")))
    except OSError:   # not Linux: no cheap way to tell, so float32
        return False
