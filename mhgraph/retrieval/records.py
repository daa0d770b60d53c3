"""Turning the rows every retrieval query returns into RetrievedChunks."""

from __future__ import annotations

import time
from typing import Any, Iterable

from neo4j import Record

from mhgraph.types import Hop, RetrievalResult, RetrievedChunk


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


def single_hop(method: str, question: str, query: str | None, records: Iterable[Record], started: float,
               params: dict[str, Any]) -> RetrievalResult:
    """The result of a one-hop method whose search began at perf_counter() == started."""
    chunks = to_chunks(records)
    seconds = time.perf_counter() - started
    hop = Hop(index=1, chunks=chunks, query=query, seconds=seconds)
    return RetrievalResult(question, method, [hop], params=params, seconds=seconds)
