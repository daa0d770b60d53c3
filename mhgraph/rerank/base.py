"""What every reranker provides: scores for (query, passage) pairs, higher is more relevant."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Protocol, Sequence, runtime_checkable

from mhgraph.retrieval.base import RetrievedChunk


@runtime_checkable
class Reranker(Protocol):
    name: str      # as reports record it: the model's name or path, and its kind

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


def rerank(reranker: Reranker, query: str, chunks: Sequence[RetrievedChunk],
           keep: int) -> tuple[list[RetrievedChunk], float]:
    """The `keep` best chunks by the reranker's scores (ties keep the retrieval order), re-ranked
    from 1, with the seconds the scoring took."""
    if not chunks:
        return [], 0.0
    started = time.perf_counter()
    scores = reranker.score(query, [c.text for c in chunks])
    seconds = time.perf_counter() - started
    order = sorted(range(len(chunks)), key=lambda i: (-scores[i], i))[:keep]
    return [replace(chunks[i], score=float(scores[i]), rank=rank) for rank, i in enumerate(order, start=1)], seconds
