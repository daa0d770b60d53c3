"""`metarag`: Multi-Meta-RAG (Poliakov & Shvai, 2024) in Neo4j.

1. A filter extractor reads the question's sources and dates (mhgraph/filters), resolved against
   the graph's Source nodes.
2. The top `candidates` (K, default 20) chunks that satisfy the filter, by similarity to the
   question, inside Neo4j:
   - `index`: the vector index searches only the admitted chunks (Cypher 25 SEARCH ... WHERE on
     an index carrying source and published_at; Neo4j 2026.01+), one search per day range;
   - `exact`: the admitted chunks scored with vector.similarity.cosine, ordered, cut (any server).
   With search="hybrid" (an mhgraph option, not the original method) the candidates are the
   admitted chunks by vector and BM25 scores fused linearly (alpha x vector + (1 - alpha) x BM25,
   each normalised by its best), the vector side scored exactly.
   A question with no usable filter is searched unfiltered (and counted as a fallback); a filter
   that admits fewer than K chunks gives what it admits.
3. Optionally a reranker (mhgraph/rerank) scores the K candidates and keeps the best K'
   (`top_k`); without one, the first K' of the filtered search are kept. With rerank_weight < 1
   (an mhgraph option) the reranker's and the search's scores are fused, each standardised.
Filter values are always query parameters. Timings: filter extraction, search and reranking are
reported apart (RetrievalResult.phases).
"""

from __future__ import annotations

import time
from typing import Any

import neo4j

from mhgraph import cypher
from mhgraph.config import FILTER_MODES
from mhgraph.embeddings import TextEmbedder
from mhgraph.errors import MhgraphError
from mhgraph.filters.extractors import FilterExtractor
from mhgraph.filters.model import MetadataFilter
from mhgraph.graph.capabilities import Capabilities
from mhgraph.graph.schema import FULLTEXT_INDEX, VECTOR_INDEX
from mhgraph.rerank.base import Reranker, rerank
from mhgraph.types import Hop, RetrievalResult
from mhgraph.retrieval.base import Retriever
from mhgraph.retrieval.bm25 import lucene_query
from mhgraph.retrieval.records import to_chunks

DEFAULT_CANDIDATES = 20


INDEX_QUERIES = {"sources": "retrieval/vector_search_sources", "dates": "retrieval/metarag_index_dates",
                 "dated": "retrieval/metarag_index_dated"}


def index_form(filt: MetadataFilter) -> tuple[str, dict[str, Any]]:
    """Which in-index form searches the chunks a non-empty `filt` admits ('sources', 'dates' or
    'dated': the SEARCH clause takes no optional condition, so each kind of filter has its query)
    and the parameters it takes; metarag and treehop name their queries after these forms."""
    sources = list(filt.sources)
    ranges = [{"from": start, "to": end} for start, end in filt.day_ranges()]
    if not ranges:
        return "sources", {"sources": sources}
    if not sources:
        return "dates", {"ranges": ranges}
    return "dated", {"sources": sources, "ranges": ranges}


def filter_query(filt: MetadataFilter, mode: str) -> tuple[str, dict[str, Any]]:
    """The query file and parameters that search the chunks `filt` admits (mode index|exact)."""
    if mode == "exact":
        ranges = [{"from": start, "to": end} for start, end in filt.day_ranges()] or None
        return "retrieval/metarag_exact", {"sources": list(filt.sources) or None, "ranges": ranges}
    form, params = index_form(filt)
    return INDEX_QUERIES[form], params


class MetaRAGRetriever(Retriever):
    name = "metarag"

    def __init__(self, driver: neo4j.Driver, embedder: TextEmbedder, extractor: FilterExtractor,
                 capabilities: Capabilities, database: str | None = None, *, corpus: str, search_ratio: int,
                 mode: str = "index", candidates: int = DEFAULT_CANDIDATES, reranker: Reranker | None = None,
                 search: str = "vector", alpha: float = 0.5, rerank_weight: float | None = None) -> None:
        if mode not in FILTER_MODES:
            raise MhgraphError(f"unknown filter mode '{mode}' (available: {', '.join(FILTER_MODES)})")
        if mode == "index" and not capabilities.search_clause:
            raise MhgraphError(f"filter mode 'index' needs Neo4j 2026.01+ (SEARCH ... WHERE on the vector index); "
                               f"this server is {capabilities.version}: use --filter-mode exact")
        self.driver = driver
        self.embedder = embedder
        self.extractor = extractor
        self.database = database
        self.corpus = corpus
        self.search_ratio = search_ratio
        self.mode = mode
        self.candidates = candidates
        self.reranker = reranker
        self.search_kind = search
        self.alpha = alpha
        # unset: the reranker's own recommended weight (an exported model's description may give one)
        self.rerank_weight = rerank_weight if rerank_weight is not None else getattr(reranker, "rerank_weight", 1.0)
        self.unfiltered = cypher.load("retrieval/vector_search" if capabilities.search_clause
                                      else "retrieval/vector_query_nodes")

    @property
    def params(self) -> dict[str, Any]:
        hybrid = {"search": "hybrid", "alpha": self.alpha} if self.search_kind == "hybrid" else {}
        return {"corpus": self.corpus, "filter_extractor": self.extractor.name,
                "filter_mode": "exact" if hybrid else self.mode, **hybrid, "candidates": self.candidates,
                "search_ratio": self.search_ratio, "reranker": self.reranker.name if self.reranker else None,
                **({"rerank_weight": self.rerank_weight} if self.reranker and self.rerank_weight < 1 else {})}

    def search(self, question: str, *, top_k: int = 10, **options: Any) -> RetrievalResult:
        started = time.perf_counter()
        extraction = self.extractor.extract(question)
        filter_s = time.perf_counter() - started
        t0 = time.perf_counter()
        embedding = self.embedder.embed_query(question)
        fetch = max(self.candidates, top_k)
        common = {"embedding": embedding, "corpus": self.corpus, "top_k": fetch,
                  "candidates": fetch * self.search_ratio}
        fallback = extraction.filter.is_empty
        if self.search_kind == "hybrid":   # the filter as the exact form takes it (null: no condition)
            query = cypher.load("retrieval/metarag_hybrid")
            params = {**filter_query(extraction.filter, "exact")[1], "alpha": self.alpha, "index": FULLTEXT_INDEX,
                      "query": lucene_query(question)}
        elif fallback:
            query, params = self.unfiltered, {}
        else:
            name, params = filter_query(extraction.filter, self.mode)
            query = cypher.load(name)
        params.setdefault("index", VECTOR_INDEX)
        records, _, _ = self.driver.execute_query(query, **common, **params, database_=self.database,
                                                  routing_=neo4j.RoutingControl.READ)
        chunks = to_chunks(records)
        search_s = time.perf_counter() - t0
        rerank_s = 0.0
        if self.reranker is not None:
            chunks, rerank_s = rerank(self.reranker, question, chunks, top_k, self.rerank_weight)
        else:
            chunks = chunks[:top_k]
        seconds = time.perf_counter() - started
        hop = Hop(index=1, chunks=chunks, query=question,
                  filters=None if fallback else extraction.filter.to_json(), seconds=seconds)
        details = {"extraction": extraction.to_json(), "fallback": fallback, "candidates_found": len(records)}
        return RetrievalResult(question, self.name, [hop], params={"top_k": top_k, **self.params}, seconds=seconds,
                               phases={"filter": filter_s, "search": search_s, "rerank": rerank_s}, details=details)
