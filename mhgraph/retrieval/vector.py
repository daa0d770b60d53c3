"""`vector`: the plain dense baseline, top-k chunks of one corpus by the Chunk vector index."""

from __future__ import annotations

import time
from typing import Any

import neo4j

from mhgraph import cypher
from mhgraph.embeddings import TextEmbedder
from mhgraph.graph.capabilities import Capabilities
from mhgraph.graph.schema import VECTOR_INDEX
from mhgraph.options import MethodOptions
from mhgraph.retrieval.base import Retriever
from mhgraph.retrieval.records import single_hop
from mhgraph.retrieval.registry import BuildContext, MethodSpec
from mhgraph.types import RetrievalResult


class VectorRetriever(Retriever):
    name = "vector"

    def __init__(self, driver: neo4j.Driver, embedder: TextEmbedder, capabilities: Capabilities,
                 database: str | None = None, *, corpus: str, search_ratio: int) -> None:
        self.driver = driver
        self.embedder = embedder
        self.database = database
        self.corpus = corpus
        self.search_ratio = search_ratio
        # The SEARCH clause where the server has it, else the index procedure.
        self.query = cypher.load("retrieval/vector_search" if capabilities.search_clause
                                 else "retrieval/vector_query_nodes")

    @property
    def params(self) -> dict[str, Any]:
        return {"corpus": self.corpus, "search_ratio": self.search_ratio}

    def search(self, question: str, *, top_k: int = 10, **options: Any) -> RetrievalResult:
        started = time.perf_counter()
        embedding = self.embedder.embed_query(question)
        records, _, _ = self.driver.execute_query(
            self.query, embedding=embedding, corpus=self.corpus, top_k=top_k, candidates=top_k * self.search_ratio,
            index=VECTOR_INDEX, database_=self.database, routing_=neo4j.RoutingControl.READ,
        )
        return single_hop(self.name, question, question, records, started, {"top_k": top_k, **self.params})


class VectorOptions(MethodOptions):
    """vector has no options of its own (vector_search_ratio is shared by every vector search)."""


def build(ctx: BuildContext, options: VectorOptions) -> VectorRetriever:
    return VectorRetriever(ctx.graph.driver, ctx.embedder, ctx.graph.capabilities, ctx.graph.database,
                           corpus=ctx.graph.corpus, search_ratio=ctx.settings.vector_search_ratio)


METHOD = MethodSpec(
    name="vector", description="dense baseline: top-k chunks by the Chunk vector index",
    options=VectorOptions, build=build, indexes=("vector",), embedder=True)
