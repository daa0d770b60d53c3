"""`bm25`: the plain lexical baseline, top-k chunks of one corpus by Lucene BM25 over its own fulltext index."""

from __future__ import annotations

import re
import time
from typing import Any, Sequence

import neo4j

from mhgraph import cypher
from mhgraph.graph.schema import fulltext_index
from mhgraph.options import MethodOptions
from mhgraph.retrieval.base import Retriever
from mhgraph.retrieval.records import single_hop
from mhgraph.retrieval.registry import BuildContext, MethodSpec
from mhgraph.types import RetrievalResult

_LUCENE_SPECIAL = re.compile(r'(&&|\|\||[+\-!(){}\[\]^"~*?:\\/])')
_LUCENE_OPERATORS = re.compile(r"\b(AND|OR|NOT|TO)\b")


def lucene_query(text: str) -> str:
    """Free text as a Lucene query of OR-ed terms: syntax characters escaped, operators neutralised."""
    escaped = _LUCENE_SPECIAL.sub(r"\\\1", text)
    return _LUCENE_OPERATORS.sub(lambda m: m.group(1).lower(), escaped).strip()


class BM25Retriever(Retriever):
    name = "bm25"

    def __init__(self, driver: neo4j.Driver, database: str | None = None, *, corpus: str) -> None:
        self.driver = driver
        self.database = database
        self.corpus = corpus

    @property
    def params(self) -> dict[str, Any]:
        return {"corpus": self.corpus}

    def fetch(self, text: str, top_k: int, sources: Sequence[str] = ()) -> tuple[str, list[neo4j.Record]]:
        """(the Lucene query `text` became, its top-k rows), from the chunks of `sources` only when
        given (IR-CoT's metadata-aware steps: bm25_sources.cypher)."""
        query = lucene_query(text)
        if not query:
            return query, []
        name, more = ("retrieval/bm25_sources", {"sources": list(sources)}) if sources else ("retrieval/bm25", {})
        records, _, _ = self.driver.execute_query(
            cypher.load(name), index=fulltext_index(self.corpus), query=query, corpus=self.corpus, top_k=top_k, **more,
            database_=self.database, routing_=neo4j.RoutingControl.READ,
        )
        return query, records

    def search(self, question: str, *, top_k: int = 10, **options: Any) -> RetrievalResult:
        started = time.perf_counter()
        text, records = self.fetch(question, top_k)
        return single_hop(self.name, question, text, records, started, {"top_k": top_k, **self.params})


class BM25Options(MethodOptions):
    """bm25 has no options of its own."""


def build(ctx: BuildContext, options: BM25Options) -> BM25Retriever:
    return BM25Retriever(ctx.graph.driver, ctx.graph.database, corpus=ctx.graph.corpus)


METHOD = MethodSpec(
    name="bm25", description="lexical baseline: top-k chunks by Lucene BM25 over the corpus's fulltext index",
    options=BM25Options, build=build, indexes=("fulltext",))
