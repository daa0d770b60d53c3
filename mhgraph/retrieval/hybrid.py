"""`hybrid`: vector and BM25 scores of one corpus fused in one query, as neo4j-graphrag's
HybridRetriever fuses them: each side normalised by its best score, then the larger kept per chunk
(ranker `naive`, neo4j-graphrag's default) or alpha x vector + (1 - alpha) x fulltext (ranker
`linear`, mhgraph's default: official Hits@4 0.672 against naive's 0.642 on the MultiHop-RAG
development split, bench/results/baselines-multihop-rag.md).

neo4j-graphrag's own HybridRetriever takes no filters, so it cannot be confined to one corpus;
`cypher/retrieval/hybrid.cypher` and `hybrid_linear.cypher` are its queries with the corpus filter
added (tests check that on a one-corpus graph the naive one returns what HybridRetriever returns,
and the linear one the weighted sum).
With `depth` (an mhgraph option) the fulltext side fuses its first `depth` hits rather than K,
so a chunk just past BM25's first K keeps its BM25 score.
"""

from __future__ import annotations

import time
from typing import Any, Literal

import neo4j

from mhgraph import cypher
from mhgraph.embeddings import TextEmbedder
from mhgraph.graph.capabilities import Capabilities
from mhgraph.graph.schema import fulltext_index
from mhgraph.options import MethodOptions, option
from mhgraph.retrieval.base import Retriever
from mhgraph.retrieval.bm25 import lucene_query
from mhgraph.retrieval.records import single_hop
from mhgraph.retrieval.registry import BuildContext, MethodSpec
from mhgraph.types import RetrievalResult


class HybridRetriever(Retriever):
    name = "hybrid"

    def __init__(self, driver: neo4j.Driver, embedder: TextEmbedder, capabilities: Capabilities,
                 database: str | None = None, *, corpus: str, search_ratio: int, ranker: str = "linear",
                 alpha: float = 0.5, depth: int | None = None) -> None:
        capabilities.require_search_clause("the hybrid method")
        self.driver = driver
        self.embedder = embedder
        self.database = database
        self.corpus = corpus
        self.search_ratio = search_ratio
        self.ranker = ranker
        self.alpha = alpha
        self.depth = depth
        self.query = cypher.load({"naive": "retrieval/hybrid", "linear": "retrieval/hybrid_linear"}[ranker])

    @property
    def params(self) -> dict[str, Any]:
        fusion = {"ranker": self.ranker} | ({"alpha": self.alpha} if self.ranker == "linear" else {})
        return {"corpus": self.corpus, "search_ratio": self.search_ratio, **fusion,
                **({"depth": self.depth} if self.depth else {})}

    def search(self, question: str, *, top_k: int = 10, **options: Any) -> RetrievalResult:
        started = time.perf_counter()
        text = lucene_query(question)
        depth = max(top_k, self.depth or top_k)
        records, _, _ = self.driver.execute_query(
            self.query, embedding=self.embedder.embed_query(question), index=fulltext_index(self.corpus), query=text,
            corpus=self.corpus, alpha=self.alpha, top_k=top_k, depth=depth,
            candidates=max(top_k * self.search_ratio, depth),
            database_=self.database, routing_=neo4j.RoutingControl.READ,
        )
        # the hop's query is the question: the escaped Lucene form is an implementation detail
        return single_hop(self.name, question, question, records, started, {"top_k": top_k, **self.params})


class HybridOptions(MethodOptions):
    ranker: Literal["naive", "linear"] = option(
        "linear", "How the normalised vector and BM25 scores are fused: the larger of the two (naive, "
        "neo4j-graphrag's default) or alpha x vector + (1 - alpha) x BM25 (linear).", legacy=("hybrid_ranker",))
    alpha: float = option(0.5, "The vector weight of the linear ranker.", ge=0.0, le=1.0, legacy=("hybrid_alpha",))
    depth: int | None = option(
        None, "The BM25 hits fused before the best K are kept (and at least as many vector neighbours; an mhgraph "
        "option; default K, as neo4j-graphrag: a chunk past BM25's first K gets nothing from it).",
        flag="--hybrid-depth", ge=1)


def build(ctx: BuildContext, options: HybridOptions) -> HybridRetriever:
    return HybridRetriever(ctx.graph.driver, ctx.embedder, ctx.graph.capabilities, ctx.graph.database,
                           corpus=ctx.graph.corpus, search_ratio=ctx.settings.vector_search_ratio,
                           ranker=options.ranker, alpha=options.alpha, depth=options.depth)


METHOD = MethodSpec(
    name="hybrid", description="vector and BM25 scores fused in one query (neo4j-graphrag's hybrid search)",
    options=HybridOptions, build=build, indexes=("vector", "fulltext"), embedder=True)
