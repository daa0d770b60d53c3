"""Several rankings of chunks fused into one. Reciprocal rank fusion is the project's one
(mhgraph/retrieval/merge.py, as IR-CoT and decomposition fuse); linear fusion normalises each
ranking's scores to [0, 1] (min-max) and sums them. Not ranx's `fuse`: it compiles with numba on
first use, 12 to 25 s per process here, longer than a whole `mhgraph query`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from mhgraph.retrieval.merge import fused_scores
from mhgraph.types import RetrievedChunk


def linear_scores(rankings: Sequence[Sequence[RetrievedChunk]], weights: Sequence[float]) -> dict[str, float]:
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        if not ranking:
            continue
        values = [c.score for c in ranking]
        low, span = min(values), max(values) - min(values)
        for c in ranking:
            scores[c.chunk_id] = scores.get(c.chunk_id, 0.0) + weight * ((c.score - low) / span if span > 0 else 1.0)
    return scores


def fuse(rankings: Sequence[Sequence[RetrievedChunk]], method: Literal["rrf", "linear"],
         weights: Sequence[float] | None = None) -> list[RetrievedChunk]:
    """Every chunk of `rankings` once, by fused score (ties: first seen first), ranked from 1;
    `weights`, one per ranking (default 1 each), scale each ranking's share."""
    weights = list(weights) if weights is not None else [1.0] * len(rankings)
    if method == "rrf":
        scores = fused_scores([[c.chunk_id for c in r] for r in rankings], weights=weights)
    else:
        scores = linear_scores(rankings, weights)
    first: dict[str, RetrievedChunk] = {}
    for ranking in rankings:
        for c in ranking:
            first.setdefault(c.chunk_id, c)
    order = {cid: i for i, cid in enumerate(first)}
    ranked = sorted(first.values(), key=lambda c: (-scores[c.chunk_id], order[c.chunk_id]))
    return [replace(c, score=scores[c.chunk_id], rank=rank, parent_id=None) for rank, c in enumerate(ranked, start=1)]
