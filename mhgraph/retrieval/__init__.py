"""Retrieval methods, one module each, behind `mhgraph.retrieval.base.Retriever`."""

from __future__ import annotations

import neo4j

from mhgraph.config import Settings
from mhgraph.errors import MhgraphError
from mhgraph.graph.capabilities import detect
from mhgraph.retrieval.base import Retriever

METHODS = ("vector", "bm25")


def build_retriever(method: str, driver: neo4j.Driver, settings: Settings, embedder=None) -> Retriever:
    """The retriever for `method`, wired to the graph (and an embedder where it needs one)."""
    from mhgraph.graph.schema import FULLTEXT_INDEX, VECTOR_INDEX, require_embedding_model, require_index

    database = settings.neo4j_database
    if method == "vector":
        from mhgraph.ingest.embedder import SentenceEmbedder
        from mhgraph.retrieval.vector import VectorRetriever

        require_index(driver, database, VECTOR_INDEX)
        require_embedding_model(driver, database, settings.embedding_model)
        return VectorRetriever(driver, embedder or SentenceEmbedder(settings.embedding_model),
                               detect(driver, database), database, search_ratio=settings.vector_search_ratio)
    if method == "bm25":
        from mhgraph.retrieval.bm25 import BM25Retriever

        require_index(driver, database, FULLTEXT_INDEX)
        return BM25Retriever(driver, database)
    raise MhgraphError(f"unknown method '{method}' (available: {', '.join(METHODS)})")
