"""Retrieve evidence for one question (`mhgraph query`) and answer from it (`mhgraph ask`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mhgraph.answer import build_reader
from mhgraph.app.status import Status, silent
from mhgraph.config import Settings
from mhgraph.graph.connection import connect
from mhgraph.graph.context import GraphContext
from mhgraph.llm import load_llm
from mhgraph.retrieval import registry
from mhgraph.types import RetrievalResult, RetrievedChunk


@dataclass
class Evidence:
    """What an answer is read from: the method's result and the top chunks of its final ranking."""

    result: RetrievalResult
    chunks: list[RetrievedChunk]
    reader: Any                      # mhgraph.answer's reader: its label, answer(), stream()


def method_llm(settings: Settings, method: str, cache: bool = True, status: Status = silent) -> Any:
    """The language model method `method` calls itself with its options, else None (with the none
    backend None too: its offline strategy)."""
    if not registry.get(method).calls_llm(registry.options_for(settings, method)):
        return None
    status("loading the language model")
    return load_llm(settings, cache=cache)


def retrieve(settings: Settings, method: str, question: str, top_k: int, *, llm: Any = None, cache: bool = True,
             status: Status = silent) -> RetrievalResult:
    """`method`'s evidence for `question`, loading only what the method needs (its embedder, its model)."""
    llm = llm if llm is not None else method_llm(settings, method, cache, status)
    with connect(settings) as driver:
        graph = GraphContext.open(driver, settings.neo4j_database, settings.corpus)
        retriever = registry.build_retriever(method, graph, settings, llm=llm, status=status)
        status(f"searching with {method}")
        return retriever.search(question, top_k=top_k)


def gather_evidence(settings: Settings, method: str, question: str, top_k: int, *, cache: bool = True,
                    status: Status = silent) -> Evidence:
    """The reader (its model checked before retrieval) and the top `top_k` chunks `method` finds."""
    status("loading the reader's language model")
    llm = load_llm(settings, cache=cache)
    reader = build_reader(llm)   # a model problem shows before retrieval
    result = retrieve(settings, method, question, top_k, llm=llm, cache=cache, status=status)
    return Evidence(result, result.final_ranking()[:top_k], reader)
