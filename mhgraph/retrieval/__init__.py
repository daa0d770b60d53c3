"""Retrieval methods, one module each, behind `mhgraph.retrieval.base.Retriever`."""

from __future__ import annotations

import neo4j

from mhgraph.config import Settings
from mhgraph.embeddings import TextEmbedder
from mhgraph.errors import MhgraphError
from mhgraph.graph.capabilities import detect
from mhgraph.retrieval.base import Retriever

METHODS = ("vector", "bm25", "hybrid", "metarag", "treehop", "ircot", "decompose", "claims")
# methods whose model steps are shown few-shot demonstrations drawn from the benchmark's questions:
# those questions are left out of every figure they report (mhgraph/reasoning/demonstrations.py)
DEMONSTRATED = ("ircot", "decompose")


def question_embedder(driver: neo4j.Driver, settings: Settings, corpus: str) -> TextEmbedder:
    """The embedder of the model corpus `corpus` was ingested with; a model set explicitly
    (--model, MHGRAPH_EMBEDDING_MODEL, the config file) must be that one."""
    from mhgraph.config import DEFAULT_EMBEDDING_MODEL
    from mhgraph.embeddings import canonical_model_name, load_embedder
    from mhgraph.graph.schema import corpus_embedding_model

    explicit = (settings.origins.get("embedding_model", "default") != "default"
                or settings.embedding_model != DEFAULT_EMBEDDING_MODEL)
    model = corpus_embedding_model(driver, settings.neo4j_database, corpus,
                                   canonical_model_name(settings.embedding_model) if explicit else None)
    return load_embedder(model or settings.embedding_model, settings.cache_dir)


def needs_llm(method: str, settings: Settings) -> bool:
    """Whether `method` calls a language model itself: the llm filter extractor of metarag, and of
    treehop with its filter at every hop; ircot's reasoner and decompose's decomposer (with the none
    backend, their offline strategies); claims' target finder."""
    if method in DEMONSTRATED or method == "claims":
        return True
    filtered = method == "metarag" or (method == "treehop" and settings.treehop_filter)
    return filtered and settings.filter_extractor == "llm"


def build_retriever(method: str, driver: neo4j.Driver, settings: Settings, embedder=None,
                    corpus: str | None = None, *, llm=None, questions=None, reranker=None) -> Retriever:
    """The retriever for `method`, wired to the graph (and an embedder where it needs one) and
    confined to one corpus: `corpus`, else `settings.corpus`, else the graph's only corpus.
    metarag (and treehop with its filter) also takes the LLM of its `llm` filter extractor and the
    benchmark questions of its `gold` one; metarag a loaded reranker (else the one
    settings.reranker names, if any)."""
    from mhgraph.graph.corpora import resolve_corpus
    from mhgraph.graph.schema import FULLTEXT_INDEX, VECTOR_INDEX, require_index

    if method not in METHODS:
        raise MhgraphError(f"unknown method '{method}' (available: {', '.join(METHODS)})")
    database = settings.neo4j_database
    corpus = resolve_corpus(driver, database, corpus or settings.corpus)
    if method == "claims":   # before any model loads: the claim layer must be there
        _require_claims(driver, database, corpus)
    if method in ("vector", "hybrid", "metarag", "treehop", "decompose", "claims"):
        require_index(driver, database, VECTOR_INDEX)
        if embedder is None:
            embedder = question_embedder(driver, settings, corpus)
        else:  # a caller's embedder must be the corpus's model too (same-size vectors would not tell)
            from mhgraph.graph.schema import corpus_embedding_model

            corpus_embedding_model(driver, database, corpus, embedder.model_name)
    if method in ("bm25", "hybrid", "ircot") or (method == "metarag" and settings.metarag_search == "hybrid"):
        require_index(driver, database, FULLTEXT_INDEX)
    if method == "vector":
        from mhgraph.retrieval.vector import VectorRetriever

        return VectorRetriever(driver, embedder, detect(driver, database), database, corpus=corpus,
                               search_ratio=settings.vector_search_ratio)
    if method == "treehop":
        from pathlib import Path

        from mhgraph.retrieval.treehop import TreeHopRetriever
        from mhgraph.treehop.checkpoint import PACKAGED, TreeHopModels

        capabilities = detect(driver, database)
        if not capabilities.search_clause:
            raise MhgraphError(f"treehop searches every branch in one query with the Cypher 25 SEARCH clause: it needs "
                               f"Neo4j 2026.01 or later (this server is {capabilities.version})")
        models = TreeHopModels.load(Path(settings.treehop_model) if settings.treehop_model else PACKAGED,
                               embedder.model_name)
        extractor = None
        if settings.treehop_filter:
            from mhgraph.filters.extractors import build_extractor

            extractor = build_extractor(settings.filter_extractor, driver, database, corpus, llm=llm,
                                        questions=questions)
        return TreeHopRetriever(driver, embedder, models, database, corpus=corpus,
                                search_ratio=settings.vector_search_ratio, hops=settings.treehop_hops,
                                redundancy_pruning=settings.treehop_redundancy_pruning,
                                layer_top_k=settings.treehop_layer_top_k, branches=settings.treehop_branches,
                                extractor=extractor)
    if method == "metarag":
        from mhgraph.filters.extractors import build_extractor
        from mhgraph.rerank.models import load_reranker
        from mhgraph.retrieval.metarag import MetaRAGRetriever

        extractor = build_extractor(settings.filter_extractor, driver, database, corpus, llm=llm, questions=questions)
        if reranker is None and settings.reranker:
            reranker = load_reranker(settings.reranker, settings.cache_dir)
        return MetaRAGRetriever(driver, embedder, extractor, detect(driver, database), database, corpus=corpus,
                                search_ratio=settings.vector_search_ratio, mode=settings.filter_mode,
                                candidates=settings.metarag_candidates, reranker=reranker,
                                search=settings.metarag_search, alpha=settings.hybrid_alpha,
                                rerank_weight=settings.rerank_weight)
    if method in DEMONSTRATED:
        return _reasoning_retriever(method, driver, settings, embedder, corpus, llm)
    if method == "claims":
        return _claims_retriever(driver, settings, embedder, corpus, llm)
    if method == "bm25":
        from mhgraph.retrieval.bm25 import BM25Retriever

        return BM25Retriever(driver, database, corpus=corpus)
    from mhgraph.retrieval.hybrid import HybridRetriever

    return HybridRetriever(driver, embedder, detect(driver, database), database, corpus=corpus,
                           search_ratio=settings.vector_search_ratio, ranker=settings.hybrid_ranker,
                           alpha=settings.hybrid_alpha)


def _reasoning_retriever(method: str, driver: neo4j.Driver, settings: Settings, embedder: TextEmbedder | None,
                         corpus: str, llm) -> Retriever:
    """ircot or decompose, with the model's step when `llm` is given, else the offline strategy."""
    from mhgraph.filters.sources import SourceCatalog
    from mhgraph.reasoning import demonstrations

    database = settings.neo4j_database
    catalog = SourceCatalog.from_graph(driver, database, corpus)
    shots = demonstrations.load(demonstrations.benchmark_questions()) if llm is not None else []
    if method == "ircot":
        from mhgraph.reasoning.reasoner import LLMReasoner, OfflineReasoner
        from mhgraph.retrieval.ircot import IRCoTRetriever

        reasoner = (LLMReasoner(llm, shots, paragraph_words=settings.ircot_paragraph_words, catalog=catalog)
                    if llm is not None else OfflineReasoner(catalog))
        return IRCoTRetriever(driver, reasoner, database, corpus=corpus, max_steps=settings.ircot_max_steps,
                              max_paragraphs=settings.ircot_max_paragraphs, step_sources=settings.ircot_step_sources)
    from mhgraph.reasoning.decomposer import LLMDecomposer, OfflineDecomposer
    from mhgraph.retrieval.decompose import DecomposeRetriever
    from mhgraph.retrieval.vector import VectorRetriever

    vector = VectorRetriever(driver, embedder, detect(driver, database), database, corpus=corpus,
                             search_ratio=settings.vector_search_ratio)
    decomposer = LLMDecomposer(llm, shots) if llm is not None else OfflineDecomposer(catalog)
    return DecomposeRetriever(vector, decomposer, sub_questions=settings.decompose_sub_questions)


def _claims_retriever(driver: neo4j.Driver, settings: Settings, embedder: TextEmbedder, corpus: str,
                      llm) -> Retriever:
    """claims, with the model's target finder when `llm` is given, else the offline one."""
    from mhgraph.claims.targets import LLMTargetFinder, OfflineTargetFinder
    from mhgraph.filters.sources import SourceCatalog
    from mhgraph.retrieval.claims import ClaimsRetriever

    database = settings.neo4j_database
    finder = (LLMTargetFinder(llm) if llm is not None
              else OfflineTargetFinder(SourceCatalog.from_graph(driver, database, corpus)))
    return ClaimsRetriever(driver, embedder, finder, database, corpus=corpus)


def _require_claims(driver: neo4j.Driver, database: str | None, corpus: str) -> None:
    from mhgraph.claims.build import CLAIM_INDEX, claim_count
    from mhgraph.graph.schema import index_info

    if index_info(driver, database, CLAIM_INDEX) is None or not claim_count(driver, database, corpus):
        raise MhgraphError(f"corpus '{corpus}' has no claims: run 'mhgraph claims build --corpus {corpus}' first")
