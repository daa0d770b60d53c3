"""`metarag`: Multi-Meta-RAG (Poliakov & Shvai, 2024) in Neo4j.

1. A filter extractor reads the question's sources and dates (mhgraph/filters), resolved against
   the graph's Source nodes.
2. The top `candidates` (K, default 20) chunks that satisfy the filter, by similarity to the
   question, inside Neo4j:
   - `index`: the vector index searches only the admitted chunks (Cypher 25 SEARCH ... WHERE on
     an index carrying source and published_at; Neo4j 2026.01+), one search per day range;
   - `exact`: the admitted chunks scored with vector.similarity.cosine, ordered, cut (any server).
   With search="hybrid" (an mhgraph option, not the original method) the candidates are the
   admitted chunks by vector and BM25 scores fused linearly (alpha x vector + (1 - alpha) x BM25,
   each normalised by its best), the vector side scored exactly. Each side fuses its first K hits
   (neo4j-graphrag's fulltext side), or its first `hybrid_depth` (an mhgraph option), so that a
   chunk just past one side's K still gets that side's score. With filter_words "drop" (an
   mhgraph option) the BM25 side's query leaves out the words that name the filter's sources and
   dates (mhgraph/filters/words.py): inside the filter they only favour chunks whose text repeats
   an outlet's name or a date. The vector side reads the whole question.
   With per_source (an mhgraph option) a filter naming several sources is searched once per
   source, each for its share of the K (K / sources, rounded up), and the shares merged by score,
   at most K; the places a source leaves empty go to the other sources' next chunks.
   A question with no usable filter is searched unfiltered (and counted as a fallback); a filter
   that admits fewer than K chunks gives what it admits.
3. Optionally a reranker (mhgraph/rerank) scores the K candidates and keeps the best K'
   (`top_k`); without one, the first K' of the filtered search are kept. With rerank_weight < 1
   (an mhgraph option) the reranker's and the search's scores are fused, each standardised.
Filter values are always query parameters. Timings: filter extraction, search and reranking are
reported apart (RetrievalResult.phases).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Literal

import neo4j

from mhgraph import cypher
from mhgraph.embeddings import TextEmbedder
from mhgraph.errors import MhgraphError
from mhgraph.filters.diagnostics import FilterExtraction
from mhgraph.filters.extractors import EXTRACTORS, FilterExtractor, build_extractor
from mhgraph.filters.model import MetadataFilter
from mhgraph.filters.words import FilterWords
from mhgraph.graph.capabilities import Capabilities
from mhgraph.graph.schema import VECTOR_INDEX, fulltext_index
from mhgraph.options import MethodOptions, option
from mhgraph.rerank.base import Reranker, fusion_weight, rerank
from mhgraph.rerank.models import RERANK_FOCUS_HELP, RERANK_TOKENS_HELP, load_reranker, warn_of_training
from mhgraph.rerank.precision import RERANK_PRECISION_HELP, Precision
from mhgraph.retrieval.base import Retriever
from mhgraph.retrieval.bm25 import lucene_query
from mhgraph.retrieval.records import to_chunks
from mhgraph.retrieval.registry import BuildContext, MethodSpec
from mhgraph.types import Hop, RetrievalResult

DEFAULT_CANDIDATES = 20
# index: in the vector index (SEARCH ... WHERE); exact: pre-filtered exact search
FILTER_MODES = ("index", "exact")
# what --rerank uses when no reranker is named: a relevance model a registry package carries. Not the
# packaged cross-encoder (multihop-rag-minilm): its scores barely depend on the question (docs, metarag),
# which helps on its benchmark fused with the search and nowhere else.
DEFAULT_RERANKER = "bi-encoder:bge-small-en-v1.5"


INDEX_QUERIES = {"sources": "retrieval/vector_search_sources", "dates": "retrieval/metarag_index_dates",
                 "dated": "retrieval/metarag_index_dated"}


def index_form(filt: MetadataFilter) -> tuple[str, dict[str, Any]]:
    """Which in-index form searches the chunks a non-empty `filt` admits ('sources', 'dates' or
    'dated': the SEARCH clause takes no optional condition, so each kind of filter has its query)
    and the parameters it takes; metarag and treehop name their queries after these forms."""
    sources = list(filt.sources)
    ranges = [{"from": start, "to": end} for start, end in filt.day_ranges()]
    if not ranges:
        return "sources", {"sources": sources}
    if not sources:
        return "dates", {"ranges": ranges}
    return "dated", {"sources": sources, "ranges": ranges}


def filter_query(filt: MetadataFilter, mode: str) -> tuple[str, dict[str, Any]]:
    """The query file and parameters that search the chunks `filt` admits (mode index|exact)."""
    if mode == "exact":
        ranges = [{"from": start, "to": end} for start, end in filt.day_ranges()] or None
        return "retrieval/metarag_exact", {"sources": list(filt.sources) or None, "ranges": ranges}
    form, params = index_form(filt)
    return INDEX_QUERIES[form], params


class MetaRAGRetriever(Retriever):
    name = "metarag"

    def __init__(self, driver: neo4j.Driver, embedder: TextEmbedder, extractor: FilterExtractor,
                 capabilities: Capabilities, database: str | None = None, *, corpus: str, search_ratio: int,
                 mode: str = "index", candidates: int = DEFAULT_CANDIDATES, reranker: Reranker | None = None,
                 search: str = "vector", alpha: float = 0.5, rerank_weight: float | None = None,
                 per_source: bool = False, hybrid_depth: int | None = None,
                 filter_words: FilterWords | None = None) -> None:
        if mode not in FILTER_MODES:
            raise MhgraphError(f"unknown filter mode '{mode}' (available: {', '.join(FILTER_MODES)})")
        if mode == "index":
            capabilities.require_search_clause("filter mode 'index' (SEARCH ... WHERE on the vector index)",
                                               "use --filter-mode exact")
        self.driver = driver
        self.embedder = embedder
        self.extractor = extractor
        self.database = database
        self.corpus = corpus
        self.search_ratio = search_ratio
        self.mode = mode
        self.candidates = candidates
        self.reranker = reranker
        self.search_kind = search
        self.alpha = alpha
        self.per_source = per_source
        self.hybrid_depth = hybrid_depth if search == "hybrid" else None
        # the words naming the filter, left out of the BM25 query (None: kept, as the original)
        self.filter_words = filter_words if search == "hybrid" else None
        self.rerank_weight = fusion_weight(reranker, rerank_weight)
        self.unfiltered = cypher.load("retrieval/vector_search" if capabilities.search_clause
                                      else "retrieval/vector_query_nodes")

    @property
    def params(self) -> dict[str, Any]:
        depth = {"hybrid_depth": self.hybrid_depth} if self.hybrid_depth else {}
        hybrid = {"search": "hybrid", "alpha": self.alpha, **depth} if self.search_kind == "hybrid" else {}
        return {"corpus": self.corpus, "filter_extractor": self.extractor.name,
                "filter_mode": "exact" if hybrid else self.mode, **hybrid,
                **({"filter_words": "drop"} if self.filter_words else {}), "candidates": self.candidates,
                "search_ratio": self.search_ratio, **({"per_source": True} if self.per_source else {}),
                "reranker": self.reranker.name if self.reranker else None,
                **({"rerank_weight": self.rerank_weight} if self.reranker and self.rerank_weight < 1 else {})}

    def trained_models(self) -> tuple[Any, ...]:
        return (self.reranker,) if hasattr(self.reranker, "saw") else ()

    def search(self, question: str, *, top_k: int = 10, **options: Any) -> RetrievalResult:
        started = time.perf_counter()
        extraction = self.extractor.extract(question)
        filter_s = time.perf_counter() - started
        t0 = time.perf_counter()
        embedding = self.embedder.embed_query(question)
        fetch = max(self.candidates, top_k)
        filt = extraction.filter
        fallback = filt.is_empty
        keywords = self.filter_words.left_out(question, filt) if self.filter_words and not fallback else question
        if self.per_source and len(filt.sources) >= 2:
            records = self._shares(keywords, embedding, filt, fetch)
        else:
            records = self._search(keywords, embedding, filt, fetch)
        chunks = to_chunks(records)
        search_s = time.perf_counter() - t0
        rerank_s = 0.0
        if self.reranker is not None:
            chunks, rerank_s = rerank(self.reranker, question, chunks, top_k, self.rerank_weight)
        else:
            chunks = chunks[:top_k]
        seconds = time.perf_counter() - started
        hop = Hop(index=1, chunks=chunks, query=question, filters=None if fallback else filt.to_json(),
                  seconds=seconds)
        found = FilterExtraction(extraction, fallback, self.extractor.name, candidates_found=len(records),
                                 keywords=keywords if keywords != question else None)
        return RetrievalResult(question, self.name, [hop], params={"top_k": top_k, **self.params}, seconds=seconds,
                               phases={"filter": filter_s, "search": search_s, "rerank": rerank_s},
                               diagnostics=(found,))

    def _shares(self, keywords: str, embedding: Any, filt: MetadataFilter, fetch: int) -> list[Any]:
        """Each source `filt` names searched apart for its share of `fetch` (rounded up; hybrid scores
        normalised by that source's best), so one source's chunks cannot take every place. The places
        a source leaves empty (its filter admits fewer) go to the other sources' next chunks, by score.
        At most `fetch`, best first."""
        def by_score(records: list[Any]) -> list[Any]:
            return sorted(records, key=lambda r: (-r["score"], r["chunk_id"]))

        share = -(-fetch // len(filt.sources))
        found = {name: self._search(keywords, embedding, replace(filt, sources=(name,)), share)
                 for name in filt.sources}
        kept = by_score([r for records in found.values() for r in records])[:fetch]
        empty = fetch - len(kept)
        if empty > 0:
            full = [name for name, records in found.items() if len(records) == share]
            held = {r["chunk_id"] for r in kept}
            more = [r for name in full
                    for r in self._search(keywords, embedding, replace(filt, sources=(name,)), share + empty)
                    if r["chunk_id"] not in held]
            kept += by_score(more)[:empty]
        return by_score(kept)

    def _search(self, keywords: str, embedding: Any, filt: MetadataFilter, fetch: int) -> list[Any]:
        """The `fetch` chunks `filt` admits (every chunk when it is empty), best first; `keywords` is
        the hybrid search's BM25 query (the question, or it without the filter's words)."""
        common = {"embedding": embedding, "corpus": self.corpus, "top_k": fetch,
                  "candidates": fetch * self.search_ratio}
        if self.search_kind == "hybrid":   # the filter as the exact form takes it (null: no condition)
            query = cypher.load("retrieval/metarag_hybrid")
            params = {**filter_query(filt, "exact")[1], "alpha": self.alpha, "index": fulltext_index(self.corpus),
                      "query": lucene_query(keywords), "depth": max(fetch, self.hybrid_depth or fetch)}
        elif filt.is_empty:
            query, params = self.unfiltered, {}
        else:
            name, params = filter_query(filt, self.mode)
            query = cypher.load(name)
        params.setdefault("index", VECTOR_INDEX)
        records, _, _ = self.driver.execute_query(query, **common, **params, database_=self.database,
                                                  routing_=neo4j.RoutingControl.READ)
        return records

FilterExtractorName = Literal["rules", "llm", "reference", "gold"]
assert set(FilterExtractorName.__args__) == set(EXTRACTORS)


class MetaRAGOptions(MethodOptions):
    filter_extractor: FilterExtractorName = option(
        "rules", "Where the metadata filter comes from: rules (offline), llm (the LLM layer's model), reference "
        "(the published filters, by question text), gold (the evidence's own: an upper bound, eval only).",
        flag="--filter-extractor", env=("MHGRAPH_FILTER_EXTRACTOR",), legacy=("filter_extractor",))
    filter_mode: Literal["index", "exact"] = option(
        "index", "Filter inside the vector index (index) or exact pre-filtered search (exact).",
        flag="--filter-mode", env=("MHGRAPH_FILTER_MODE",), legacy=("filter_mode",))
    candidates: int = option(DEFAULT_CANDIDATES, "Chunks searched before reranking (K); -k keeps K'.",
                             flag="--candidates", ge=1, legacy=("metarag_candidates",))
    search: Literal["vector", "hybrid"] = option(
        "vector", "Candidates by vector (the original) or hybrid (vector + BM25 inside the filter, linear "
        "ranker with alpha; its vector side is scored exactly).", flag="--metarag-search",
        legacy=("metarag_search",))
    alpha: float = option(0.5, "The vector weight of the hybrid candidate search.", ge=0.0, le=1.0,
                          env=("MHGRAPH_HYBRID_ALPHA",), legacy=("hybrid_alpha",))
    reranker: str | None = option(
        None, "Rerank the candidates with: a cross-encoder name or path, an exported ONNX folder, "
        "multihop-rag-minilm (the packaged one), nanoranker, bi-encoder:MODEL, sentences:MODEL or kfold:DIR; "
        "A+B combines several.",
        flag="--reranker", env=("MHGRAPH_RERANKER",), legacy=("reranker",))
    rerank: bool | None = option(
        None, f"Rerank the candidates (with the reranker named, else {DEFAULT_RERANKER}); off: no reranking "
        "even if a reranker is named.", flag="--rerank")
    rerank_weight: float | None = option(
        None, "The reranker's weight fused with the search's score, each standardised (default: the reranker's "
        "own: 0.5 for the packaged cross-encoder, 0.7 for sentences:MODEL, the mean of its parts' for A+B, "
        "else 1: its order alone, as the original).",
        flag="--rerank-weight", ge=0.0, le=1.0, env=("MHGRAPH_RERANK_WEIGHT",), legacy=("rerank_weight",))
    rerank_tokens: int | None = option(None, RERANK_TOKENS_HELP, flag="--rerank-tokens", ge=16)
    rerank_focus: bool = option(False, RERANK_FOCUS_HELP, flag="--rerank-focus")
    rerank_precision: Precision = option("auto", RERANK_PRECISION_HELP, flag="--rerank-precision")
    hybrid_depth: int | None = option(
        None, "With hybrid candidates: the hits each side (vector, BM25) fuses before the best K are kept (an "
        "mhgraph option; default K: a chunk past one side's first K gets nothing from that side).",
        flag="--hybrid-depth", ge=1)
    per_source: bool = option(
        False, "A question whose filter names several sources: each searched apart for its share of the K "
        "candidates (an mhgraph option; off: one search inside the filter, as the original).", flag="--per-source")
    filter_words: Literal["keep", "drop"] = option(
        "keep", "With hybrid candidates: the words naming the filter's sources and dates kept in the BM25 query "
        "(keep, as the original) or left out (drop, an mhgraph option: inside the filter they only favour chunks "
        "whose text repeats an outlet's name or a date). The vector side reads the whole question.",
        flag="--filter-words")

    @property
    def reranker_name(self) -> str | None:
        """The reranker that runs: none when rerank is off, the default when it is on and none is named."""
        if self.rerank is False:
            return None
        return self.reranker or (DEFAULT_RERANKER if self.rerank else None)


def build(ctx: BuildContext, options: MetaRAGOptions) -> MetaRAGRetriever:
    g = ctx.graph
    extractor = build_extractor(options.filter_extractor, g.driver, g.database, g.corpus, llm=ctx.llm,
                                questions=ctx.questions)
    reranker = ctx.components.get("reranker")
    if reranker is None and options.reranker_name:
        ctx.status(f"loading reranker {options.reranker_name}")
        reranker = load_reranker(options.reranker_name, ctx.settings.cache_dir, max_length=options.rerank_tokens,
                                 focus=options.rerank_focus, precision=options.rerank_precision)
        warn_of_training(reranker, options.reranker_name, g.driver, g.database, g.corpus)
    words = None
    if options.filter_words == "drop" and options.search == "hybrid":
        words = FilterWords.from_graph(g.driver, g.database, g.corpus)
    return MetaRAGRetriever(g.driver, ctx.embedder, extractor, g.capabilities, g.database, corpus=g.corpus,
                            search_ratio=ctx.settings.vector_search_ratio, mode=options.filter_mode,
                            candidates=options.candidates, reranker=reranker, search=options.search,
                            alpha=options.alpha, rerank_weight=options.rerank_weight, per_source=options.per_source,
                            hybrid_depth=options.hybrid_depth, filter_words=words)


METHOD = MethodSpec(
    name="metarag", description="Multi-Meta-RAG: metadata filters from the question, filtered search in Neo4j, "
                                "optional reranking",
    options=MetaRAGOptions, build=build, embedder=True,
    indexes=lambda o: ("vector", "fulltext") if o.search == "hybrid" else ("vector",),
    uses_llm=lambda o: o.filter_extractor == "llm", diagnostics=(FilterExtraction,),
    commands=("mhgraph.cli.rerank:reranker_group",))
