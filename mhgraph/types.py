"""The types every layer shares: benchmark questions and retrieval results.

This module imports nothing else of mhgraph (tests/test_layers.py keeps it so): retrievers,
rerankers, readers, reasoners and the evaluation all speak in these types.

A retrieval method answers a question with a `RetrievalResult`: the evidence per hop (for hop r,
the ranked chunks fetched at that hop, with scores), the query text and metadata filter used at
each hop, timings, and what the method decided on the way as typed `Diagnostics` records (a
metadata filter, a reasoning chain, a claim trail, a TreeHop tree), each of which knows how to
show itself, summarise a run, render its report section and store its trace rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

QUESTION_TYPES = ("inference_query", "comparison_query", "temporal_query", "null_query")
NULL_TYPE = "null_query"


@dataclass(frozen=True)
class Evidence:
    """One supporting fact, quoted from a news article, with the article's metadata."""

    fact: str
    title: str | None = None
    source: str | None = None
    published_at: datetime | None = None
    url: str | None = None


@dataclass(frozen=True)
class Question:
    id: str
    query: str
    answer: str
    question_type: str
    evidence: tuple[Evidence, ...]

    @property
    def hops(self) -> int:
        """Number of evidence facts (h in the MHTS difficulty)."""
        return len(self.evidence)

    @property
    def is_null(self) -> bool:
        """A question with no supporting evidence: a system should abstain."""
        return self.question_type == NULL_TYPE or not self.evidence


@dataclass(frozen=True)
class RetrievedChunk:
    chunk_id: str
    score: float
    rank: int                       # 1-based rank within its hop
    text: str = ""
    document_id: str | None = None
    title: str | None = None
    source: str | None = None
    published_at: datetime | None = None
    parent_id: str | None = None    # the chunk of the previous hop this one was reached from, if any


@dataclass
class Hop:
    index: int                       # 1-based
    chunks: list[RetrievedChunk]
    query: str | None = None         # the query text used at this hop (None for embedding-only hops)
    filters: dict[str, Any] | None = None
    seconds: float = 0.0


@dataclass
class RetrievalResult:
    question: str
    method: str
    hops: list[Hop]
    params: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0             # retrieval time for the whole question (model loading excluded)
    # seconds of its named steps, where a method reports them apart (filter extraction, search,
    # reranking): summed up, they make `seconds`
    phases: dict[str, float] = field(default_factory=dict)
    # what the method decided for this question (e.g. Multi-Meta-RAG's filter), kept in results.json
    details: dict[str, Any] = field(default_factory=dict)

    def accumulated_ids(self, hop: int) -> list[str]:
        """Distinct chunk ids retrieved in hops 1..hop, in retrieval order (the set D_r)."""
        seen: dict[str, None] = {}
        for h in self.hops[:hop]:
            for c in h.chunks:
                seen.setdefault(c.chunk_id, None)
        return list(seen)

    def final_ranking(self) -> list[RetrievedChunk]:
        """Every distinct chunk once, best score first (ties keep retrieval order)."""
        best: dict[str, RetrievedChunk] = {}
        for h in self.hops:
            for c in h.chunks:
                if c.chunk_id not in best or c.score > best[c.chunk_id].score:
                    best[c.chunk_id] = c
        order = {cid: i for i, cid in enumerate(self.accumulated_ids(len(self.hops)))}
        return sorted(best.values(), key=lambda c: (-c.score, order[c.chunk_id]))
