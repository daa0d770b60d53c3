"""What every reranker provides: scores for (query, passage) pairs, higher is more relevant."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from statistics import fmean, pstdev
from typing import Protocol, runtime_checkable

from mhgraph.types import RetrievedChunk

# Pairs are scored up to this many tokens whatever length a cross-encoder was trained at (the
# k-fold figures in the README were measured so; an exported model records it and keeps it).
MAX_PAIR_TOKENS = 512


@runtime_checkable
class Reranker(Protocol):
    name: str      # as reports record it: the model's name or path, and its kind

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


def fusion_weight(reranker: Reranker | None, given: float | None) -> float:
    """The weight a reranker's scores are fused at: the one given, else the reranker's own (an
    exported model's description may record one), else 1 (its order alone)."""
    return given if given is not None else float(getattr(reranker, "rerank_weight", 1.0))


def cut_label(max_length: int, usual: int) -> str:
    """What a reranker's name adds when its pairs are cut to other than its usual length."""
    return f" ({max_length}-token pairs)" if max_length != usual else ""


def standardise(values: Sequence[float]) -> list[float]:
    """(v - mean) / standard deviation; all 0 when the values do not vary."""
    mean = fmean(values)
    spread = pstdev(values, mean)
    return [(v - mean) / spread if spread > 0 else 0.0 for v in values]


@dataclass(frozen=True)
class Scored:
    """What score_chunks() returns: the reranker's score of each chunk in the order the chunks
    came, each of its parts' own (a combination's apart; else the reranker's under its name), and
    the seconds the scoring took. A trace keeps the parts to show why a chunk was kept or not."""

    scores: list[float]
    by_reranker: dict[str, list[float]]
    seconds: float


def rerank(reranker: Reranker, query: str, chunks: Sequence[RetrievedChunk],
           keep: int, weight: float = 1.0) -> tuple[list[RetrievedChunk], float]:
    """The `keep` best chunks by the reranker's scores (ties keep the retrieval order), re-ranked
    from 1, with the seconds the scoring took. With weight < 1 the order is by
    weight x reranker + (1 - weight) x search score, each standardised over the candidates: a
    reranker trained on few examples knows what the question asks, the search how close a chunk
    is to it, and on MultiHop-RAG the two together beat either (README, Multi-Meta-RAG)."""
    scored = score_chunks(reranker, query, chunks)
    return ordered(chunks, scored.scores, keep, weight), scored.seconds


def score_chunks(reranker: Reranker, query: str, chunks: Sequence[RetrievedChunk]) -> Scored:
    """The reranker's scores of the chunks, keeping each part's own (a combination's apart)."""
    if not chunks:
        return Scored([], {}, 0.0)
    started = time.perf_counter()
    texts = [c.text for c in chunks]
    by_part = getattr(reranker, "scores_by_part", None)
    if callable(by_part):       # a combination: its parts' scores, made one by its own rule
        by_reranker = by_part(query, texts)
        scores = reranker.combine(by_reranker)
    else:
        scores = reranker.score(query, texts)
        by_reranker = {reranker.name: scores}
    return Scored(list(scores), by_reranker, time.perf_counter() - started)


def ordered(chunks: Sequence[RetrievedChunk], scores: Sequence[float], keep: int,
            weight: float = 1.0) -> list[RetrievedChunk]:
    """The `keep` best chunks by `scores` (rerank()'s order and fusion), re-ranked from 1."""
    if not chunks:
        return []
    if weight < 1.0:
        scores = [weight * r + (1.0 - weight) * s
                  for r, s in zip(standardise(scores), standardise([c.score for c in chunks]))]
    order = sorted(range(len(chunks)), key=lambda i: (-scores[i], i))[:keep]
    return [replace(chunks[i], score=float(scores[i]), rank=rank) for rank, i in enumerate(order, start=1)]
