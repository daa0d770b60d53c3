"""`hybrid`: vector and BM25 scores of one corpus fused in one query, as neo4j-graphrag's
HybridRetriever fuses them: each side normalised by its best score, then the larger kept per chunk
(ranker `naive`, its default) or alpha x vector + (1 - alpha) x fulltext (ranker `linear`).

neo4j-graphrag's own HybridRetriever takes no filters, so it cannot be confined to one corpus;
`cypher/retrieval/hybrid.cypher` and `hybrid_linear.cypher` are its queries with the corpus filter
added (tests check that on a one-corpus graph the naive one returns what HybridRetriever returns,
and the linear one the weighted sum).
"""

from __future__ import annotations

import time
from typing import Any

import neo4j

from mhgraph import cypher
from mhgraph.errors import MhgraphError
from mhgraph.embeddings import TextEmbedder
from mhgraph.graph.capabilities import Capabilities
from mhgraph.graph.schema import FULLTEXT_INDEX
from mhgraph.types import RetrievalResult
from mhgraph.retrieval.base import Retriever
from mhgraph.retrieval.bm25 import lucene_query
from mhgraph.retrieval.records import single_hop


class HybridRetriever(Retriever):
    name = "hybrid"

    def __init__(self, driver: neo4j.Driver, embedder: TextEmbedder, capabilities: Capabilities,
                 database: str | None = None, *, corpus: str, search_ratio: int, ranker: str = "naive",
                 alpha: float = 0.5) -> None:
        if not capabilities.search_clause:
            raise MhgraphError(f"the hybrid method needs Neo4j 2026.01+ (the Cypher 25 SEARCH clause); "
                               f"this server is {capabilities.version}")
        self.driver = driver
        self.embedder = embedder
        self.database = database
        self.corpus = corpus
        self.search_ratio = search_ratio
        self.ranker = ranker
        self.alpha = alpha
        self.query = cypher.load({"naive": "retrieval/hybrid", "linear": "retrieval/hybrid_linear"}[ranker])

    @property
    def params(self) -> dict[str, Any]:
        fusion = {"ranker": self.ranker} | ({"alpha": self.alpha} if self.ranker == "linear" else {})
        return {"corpus": self.corpus, "search_ratio": self.search_ratio, **fusion}

    def search(self, question: str, *, top_k: int = 10, **options: Any) -> RetrievalResult:
        started = time.perf_counter()
        text = lucene_query(question)
        records, _, _ = self.driver.execute_query(
            self.query, embedding=self.embedder.embed_query(question), index=FULLTEXT_INDEX, query=text,
            corpus=self.corpus, alpha=self.alpha, top_k=top_k, candidates=top_k * self.search_ratio,
            database_=self.database, routing_=neo4j.RoutingControl.READ,
        )
        return single_hop(self.name, question, text, records, started, {"top_k": top_k, **self.params})
