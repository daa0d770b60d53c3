"""Giving freed heap memory back to the system between ingest batches.

Embedding a batch allocates and frees hundreds of MiB of activations whose sizes vary with the
batch's longest chunk. glibc's malloc keeps what was freed in its arenas, fragmented, so a
long ingest's resident memory creeps up although nothing is held (bench/results/ingest-x10.json).
`malloc_trim(0)` returns the free pages of every arena (not only the top of the heap) to the
system; it costs a few milliseconds, once per batch.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import lru_cache
from typing import Callable


@lru_cache(maxsize=1)
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None where the C library has none (musl, macOS, Windows)."""
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def release_free_memory() -> bool:
    """Return the heap's free pages to the system; False where the C library cannot."""
    trim = _malloc_trim()
    return bool(trim is not None and trim(0) >= 0)
