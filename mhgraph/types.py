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
from typing import Any, ClassVar, Mapping, Sequence, TypeVar

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
    # the (:Claim {id}) nodes of a claim layer a generated question was built from (`mhgraph
    # generate`); empty for the benchmark's own questions
    claims: tuple[str, ...] = ()

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


class Diagnostics:
    """What a method decided for one question, typed and owned by the method (e.g. its metadata
    filter, reasoning chain, claim trail or TreeHop tree).

    A subclass is a dataclass with a unique `kind`. Each record says how it is kept per question
    (`to_json`, merged into the question's entry of results.json) and shown by `mhgraph query`
    (`lines`); its class says how a run's records are summarised (`summarise`, kept in the run
    summary under `kind`), how that summary is rendered (`report_section`) and which trace rows
    it stores in Neo4j (`write_traces`). Evaluation, traces and the CLI call only these.
    """

    kind: ClassVar[str]

    def to_json(self) -> dict[str, Any]:
        return {}

    def lines(self, result: "RetrievalResult", width: int) -> list[str]:
        """What `mhgraph query` prints about this record above the hops."""
        return []

    @classmethod
    def summarise(cls, records: Mapping[str, Any], run: "RunContext") -> dict[str, Any] | None:
        """The run-level summary of every question's record (by question id), or None for none."""
        return None

    @classmethod
    def report_section(cls, summary: Mapping[str, Any]) -> list[str]:
        """Markdown lines of the report section that renders `summarise`'s output."""
        return []

    @classmethod
    def write_traces(cls, records: Mapping[str, Any], run: "RunContext") -> None:
        """Store the run's records in Neo4j beside its evidence paths (mhgraph/eval/traces.py)."""


@dataclass
class RunContext:
    """What a Diagnostics class may read when it summarises or traces an evaluation run.
    `driver` is a neo4j.Driver (typed loosely: this module imports no driver)."""

    driver: Any
    database: str | None
    corpus: str
    run_id: str
    questions: Sequence[Question]
    results: Mapping[str, "RetrievalResult"]
    gold: Mapping[str, Sequence[str]]
    params: Mapping[str, Any]
    llm: Any = None                  # the model the method itself called, None when it called none
    held_out: frozenset[str] = frozenset()   # question texts left out of the run (demonstrations)


D = TypeVar("D", bound=Diagnostics)


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
    # what the method decided for this question (e.g. Multi-Meta-RAG's filter), typed
    diagnostics: tuple[Diagnostics, ...] = ()

    def diagnostic(self, cls: type[D]) -> D | None:
        """This result's record of type `cls`, if the method made one."""
        return next((d for d in self.diagnostics if isinstance(d, cls)), None)

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
