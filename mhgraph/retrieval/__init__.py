"""Retrieval methods, one module each, behind `mhgraph.retrieval.base.Retriever`, listed in
`mhgraph.retrieval.registry` (the table of what exists, imported lazily).

`build_retriever` and `question_embedder` here take a driver and a corpus name, for scripts and
notebooks; mhgraph's own layers pass a `GraphContext` to the registry.
"""

from __future__ import annotations

from typing import Any, Sequence

import neo4j

from mhgraph.config import Settings
from mhgraph.embeddings import TextEmbedder
from mhgraph.graph.context import GraphContext
from mhgraph.retrieval import registry
from mhgraph.retrieval.base import Retriever


def question_embedder(driver: neo4j.Driver, settings: Settings, corpus: str) -> TextEmbedder:
    """The embedder of the model `corpus` was ingested with (see registry.question_embedder)."""
    return registry.question_embedder(GraphContext(driver, settings.neo4j_database, corpus), settings)


def build_retriever(method: str, driver: neo4j.Driver, settings: Settings, embedder: TextEmbedder | None = None,
                    corpus: str | None = None, *, options: Any = None, llm: Any = None,
                    questions: Sequence[Any] | None = None, **components: Any) -> Retriever:
    """The retriever for `method`, confined to one corpus (`corpus`, else `settings.corpus`, else
    the graph's only corpus), with `options` (default: its options resolved from `settings`)."""
    graph = GraphContext.open(driver, settings.neo4j_database, corpus or settings.corpus)
    return registry.build_retriever(method, graph, settings, options, embedder=embedder, llm=llm,
                                    questions=questions, **components)
