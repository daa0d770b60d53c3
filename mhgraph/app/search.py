"""Retrieve evidence for one question (`mhgraph query`) and answer from it (`mhgraph ask`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mhgraph.answer import build_reader
from mhgraph.app.status import Status, silent
from mhgraph.config import Settings
from mhgraph.errors import MhgraphError
from mhgraph.graph.connection import connect
from mhgraph.graph.context import GraphContext
from mhgraph.llm import backend_name, load_llm
from mhgraph.retrieval import registry
from mhgraph.types import RetrievalResult, RetrievedChunk


@dataclass
class Evidence:
    """What an answer is read from: the method's result and the top chunks of its final ranking."""

    result: RetrievalResult
    chunks: list[RetrievedChunk]
    reader: Any                      # mhgraph.answer's reader: its label, answer(), stream()


def language_model(settings: Settings, cache: bool = True, status: Status = silent) -> Any:
    """The LLM layer's model (None with the none backend: each step's offline strategy), saying so
    when one loads in process (the local backend takes seconds)."""
    if backend_name(settings) == "local":
        status("loading the local language model")
    return load_llm(settings, cache=cache)


def retrieve(settings: Settings, method: str, question: str, top_k: int, *, llm: Any = None, cache: bool = True,
             status: Status = silent) -> RetrievalResult:
    """`method`'s evidence for `question`, loading only what the method needs (its embedder, the
    language model when its options make it call one), after checking what it needs of the graph."""
    _check_question(question)
    options = registry.options_for(settings, method)
    with connect(settings) as driver:
        graph = GraphContext.open(driver, settings.neo4j_database, settings.corpus)
        registry.check_ready(method, graph, options)
        if llm is None and registry.get(method).calls_llm(options):
            llm = language_model(settings, cache, status)
        retriever = registry.build_retriever(method, graph, settings, options, llm=llm, status=status)
        status(f"searching with {method}")
        return retriever.search(question, top_k=top_k)


def gather_evidence(settings: Settings, method: str, question: str, top_k: int, *, cache: bool = True,
                    status: Status = silent) -> Evidence:
    """The reader (its model checked before retrieval) and the top `top_k` chunks `method` finds."""
    _check_question(question)
    llm = language_model(settings, cache, status)
    reader = build_reader(llm)   # a model problem shows before retrieval
    result = retrieve(settings, method, question, top_k, llm=llm, cache=cache, status=status)
    return Evidence(result, result.final_ranking()[:top_k], reader)


def _check_question(question: str) -> None:
    # an empty question has no evidence: vector search would still rank chunks and the reader answer from them
    if not question.strip():
        raise MhgraphError("the question is empty: give the text to search for")
