"""Turning the rows every retrieval query returns into RetrievedChunks."""

from __future__ import annotations

from typing import Iterable

from neo4j import Record

from mhgraph.retrieval.base import RetrievedChunk


def to_chunks(records: Iterable[Record], parent_id: str | None = None) -> list[RetrievedChunk]:
    """Rows with chunk_id, text, score, document_id, title, source, published_at -> ranked chunks."""
    out = []
    for rank, r in enumerate(records, start=1):
        published = r["published_at"]
        out.append(RetrievedChunk(
            chunk_id=r["chunk_id"], score=float(r["score"]), rank=rank, text=r["text"],
            document_id=r["document_id"], title=r["title"], source=r["source"],
            published_at=published.to_native() if published is not None else None, parent_id=parent_id,
        ))
    return out
