"""The training data of the models trained here, gathered from the graph (`mhgraph treehop train`,
`mhgraph reranker train`): gold chunks by the benchmark's rule, near misses from a method's own
search, chunk texts and embeddings as stored. Gathered here, above eval and retrieval, so that
the trainers in mhgraph/training take data and import neither."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from tqdm import tqdm

from mhgraph.config import Settings
from mhgraph.embeddings import TextEmbedder
from mhgraph.eval.runner import chunk_embeddings, gold_matcher
from mhgraph.graph.connection import connect
from mhgraph.graph.context import GraphContext
from mhgraph.graph.documents import corpus_facts
from mhgraph.retrieval import registry
from mhgraph.retrieval.treehop import nearest
from mhgraph.training.reranker import chunk_texts
from mhgraph.training.treehop import TrainingData, needed_chunks, training_data
from mhgraph.types import Question


@dataclass
class TreeHopData:
    corpus: str
    embedder: TextEmbedder
    data: TrainingData
    corpus_facts: dict[str, Any] = field(default_factory=dict)  # the corpus then (graph/documents.py corpus_facts)


@dataclass
class RerankerData:
    corpus: str
    gold: dict[str, list[str]]            # question id -> gold chunk ids
    candidates: dict[str, list[str]]      # question id -> the search's candidates, best first
    texts: dict[str, str]                 # chunk id -> text
    candidates_from: dict[str, Any]       # the search's parameters
    corpus_facts: dict[str, Any] = field(default_factory=dict)  # the corpus then (graph/documents.py corpus_facts)


def treehop_data(settings: Settings, questions: Sequence[Question], near_k: int = 30,
                 progress: bool = True) -> TreeHopData:
    """TreeHop's examples: question embeddings from the corpus's embedder, gold chunks per fact,
    near misses from the vector index (TreeHop's own search) and chunk embeddings as stored (the
    vectors the index searches)."""
    with connect(settings) as driver:
        graph = GraphContext.open(driver, settings.neo4j_database, settings.corpus)
        embedder = registry.question_embedder(graph, settings)
        matcher = gold_matcher(driver, graph.database, graph.corpus)
        fact_chunks = {q.id: [matcher.match(e.fact, e.title) for e in q.evidence] for q in questions}
        vectors = np.asarray(embedder.embed_queries([q.query for q in questions]), dtype=np.float32)
        near: dict[str, list[str]] = {}
        step = 128
        for start in tqdm(range(0, len(questions), step), desc="near misses", unit="batch", disable=not progress):
            found = nearest(driver, graph.database, graph.corpus, list(vectors[start:start + step]), near_k,
                            settings.vector_search_ratio, with_embeddings=False)
            for q, rows in zip(questions[start:start + step], found):
                near[q.id] = [c.chunk_id for c, _ in rows]
        stored = chunk_embeddings(driver, graph.database, needed_chunks(fact_chunks, near))
        facts = corpus_facts(driver, graph.database, graph.corpus)
    return TreeHopData(graph.corpus, embedder, training_data(questions, vectors, fact_chunks, near, stored), facts)


def reranker_data(settings: Settings, questions: Sequence[Question], method: str, options: Any,
                  progress: bool = True) -> RerankerData:
    """A cross-encoder's pairs: each question's gold chunks against the candidates `method`'s search
    finds with `options` (its own reranking off, so the candidates are the search's)."""
    with connect(settings) as driver:
        graph = GraphContext.open(driver, settings.neo4j_database, settings.corpus)
        gold = gold_matcher(driver, graph.database, graph.corpus).gold_sets(questions)
        retriever = registry.build_retriever(method, graph, settings, options, questions=questions)
        k = options.candidates
        candidates = {q.id: [c.chunk_id for c in retriever.search(q.query, top_k=k).hops[0].chunks]
                      for q in tqdm(questions, desc="candidates", unit="q", disable=not progress)}
        wanted = {c for ids in candidates.values() for c in ids} | {c for ids in gold.values() for c in ids}
        texts = chunk_texts(driver, graph.database, sorted(wanted))
        facts = corpus_facts(driver, graph.database, graph.corpus)
    return RerankerData(graph.corpus, gold, candidates, texts, retriever.params, facts)
