"""Several rankings of chunks fused into one. Reciprocal rank fusion is the project's one
(mhgraph/retrieval/merge.py, as IR-CoT and decomposition fuse); linear fusion normalises each
ranking's scores to [0, 1] (min-max) and sums them. The rerank stage can fuse by ranks too
(`by_ranks`): each reranker's ranking of the chunks it scored with the pipeline's own rankings. Not ranx's `fuse`: it compiles with numba on
first use, 12 to 25 s per process here, longer than a whole `mhgraph query`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


def by_ranks(scored: Sequence[RetrievedChunk], by_reranker: Mapping[str, Sequence[float]],
             rankings: Sequence[Sequence[RetrievedChunk]], weights: Sequence[float], share: float, k: int,
             keep: int, parts: Sequence[float] | None = None) -> list[RetrievedChunk]:
    """The `keep` best of `scored` by reciprocal rank fusion of each reranker's ranking of them
    (by its own scores, ties in the fused order) with the pipeline's `rankings` (the candidates,
    each expansion) at their `weights`: the rerankers together weigh `share` of the whole, among
    them in proportion to `parts` (one per reranker; default equally), the rankings the rest in
    proportion to their weights. Ranks, not standardised scores: a chunk one side ranks first
    counts as much however far its score stands out, and a small `k` lets each side's first places
    count most. Ranked from 1, each scored by its fused score."""
    if not scored or not by_reranker:
        return []
    ids = [c.chunk_id for c in scored]
    own = [[ids[i] for i in sorted(range(len(ids)), key=lambda i: (-values[i], i))] for values in by_reranker.values()]
    parts = list(parts) if parts is not None else [1.0] * len(own)
    if len(parts) != len(own):
        raise ValueError(f"by_ranks: {len(parts)} parts for {len(own)} rerankers")
    total, whole = sum(weights), sum(parts)
    shares = ([share * p / whole if whole else 0.0 for p in parts]
              + [(1.0 - share) * w / total if total else 0.0 for w in weights])
    scores = fused_scores([*own, *([c.chunk_id for c in r] for r in rankings)], weights=shares, k=k)
    order = sorted(range(len(ids)), key=lambda i: (-scores[ids[i]], i))[:keep]
    return [replace(scored[i], score=scores[ids[i]], rank=rank) for rank, i in enumerate(order, start=1)]
