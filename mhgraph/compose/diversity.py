"""The stages that spread what a pipeline keeps: diversify (at most `limit` chunks of one document
among the chunks kept) and balance (the chunks taken from each source, or document, in turn).

A multi-hop question's evidence lies in several documents by construction, yet a good search
ranks a document's neighbouring chunks next to each other: on MultiHop-RAG's development split
the filtered hybrid search's ten chunks came from 4.5 documents on average, while its questions
cite 2 to 4 (docs/methods/compose.md). Chunks past a document's limit move below every other
chunk, in their order, so the list keeps its length where the ranking has fewer documents.

Balance is for a question that names several sources: a metadata filter keeps their chunks, but
one source's chunks can still fill the first places. Taking the best remaining chunk of each
source in turn (sources in the order of their best chunk) gives each a place near the top.

Both keep the scores of the chunks they keep but hand them out again in the new order, highest
first: a result's final ranking sorts by score (RetrievalResult.final_ranking), so a chunk moved
up must carry a score that puts it there."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from mhgraph.types import RetrievedChunk


def per_document(chunks: Sequence[RetrievedChunk], limit: int, keep: int) -> list[RetrievedChunk]:
    """The first `keep` of `chunks` taking at most `limit` per document first, then the chunks
    held back in their order; ranked from 1. A chunk without a document counts as its own."""
    taken: list[RetrievedChunk] = []
    held: list[RetrievedChunk] = []
    counts: dict[str, int] = {}
    for c in chunks:
        document = c.document_id or f"chunk:{c.chunk_id}"
        if counts.get(document, 0) < limit:
            counts[document] = counts.get(document, 0) + 1
            taken.append(c)
        else:
            held.append(c)
    return _in_order([*taken, *held][:keep])


def in_turn(chunks: Sequence[RetrievedChunk], by: Literal["source", "document"], keep: int) -> list[RetrievedChunk]:
    """The first `keep` of `chunks` taken one per source (or document) in turn, each group in its
    own order, the groups in the order of their best chunk; ranked from 1. The chunks without the
    field are one group (so a corpus without sources keeps its order)."""
    groups: dict[str | None, list[RetrievedChunk]] = {}
    for c in chunks:
        groups.setdefault(c.source if by == "source" else c.document_id, []).append(c)
    order: list[RetrievedChunk] = []
    queues = [list(reversed(g)) for g in groups.values()]
    while len(order) < keep and queues:
        order += [q.pop() for q in queues][:keep - len(order)]
        queues = [q for q in queues if q]
    return _in_order(order)


def _in_order(chunks: Sequence[RetrievedChunk]) -> list[RetrievedChunk]:
    """`chunks` in this order: ranked from 1, their scores given out again highest first."""
    scores = sorted((c.score for c in chunks), reverse=True)
    return [replace(c, rank=rank, score=score) for rank, (c, score) in enumerate(zip(chunks, scores), start=1)]
