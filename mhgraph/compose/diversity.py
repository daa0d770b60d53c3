"""The diversify stage: at most `limit` chunks of one document among the chunks a pipeline keeps.

A multi-hop question's evidence lies in several documents by construction, yet a good search
ranks a document's neighbouring chunks next to each other: on MultiHop-RAG's development split
the training-free pipeline's ten chunks came from 4.5 documents on average, while its questions
cite 2 to 4 (docs/methods/compose.md). Chunks past a document's limit move below every other
chunk, in their order, so the list keeps its length where the ranking has fewer documents."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

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
    return [replace(c, rank=rank) for rank, c in enumerate([*taken, *held][:keep], start=1)]
