"""`ppr`: graph traversal by personalized PageRank over the claim layer (HippoRAG 2).

The graph is the corpus's Chunks, Topics and Targets (mhgraph/traversal/claim_graph.py): chunk -
name edges for what its claims are about and target, topic - target edges for each claim, and
SYNONYM edges between near names (mhgraph/claims/synonyms.py). Per question, as HippoRAG 2 does:

1. the `facts` (5) claims nearest the question in the Claim vector index are the seed facts;
   each names a Target and, where it has one, a Topic, seeded with the fact's cosine divided by
   the number of chunks holding that name (a name in many chunks says little), averaged over the
   facts naming it;
2. the `candidates` (100) chunks nearest the question in the Chunk vector index are seeded with
   their dense score, min-max normalised, times `passage_weight` (0.5; HippoRAG 2's 0.05); with
   `candidates` 0, every chunk of the corpus is, as in HippoRAG 2 (the chunk embeddings are read
   with the graph and held in memory; on MultiHop-RAG this ranks worse: docs/methods/ppr.md);
3. metadata seeds (mhgraph's, not HippoRAG 2's): each source the question names (read by the
   filter extractor metarag uses), within the dates it names, seeds its chunks with
   `metadata_weight` (32) divided by their number, as a named node would seed its neighbours; a
   question naming dates but no source seeds the chunks of those dates the same way. A corpus or
   question without such metadata gets none;
4. personalized PageRank with damping `damping` (0.5) from those seeds (mhgraph/traversal/
   pagerank.py), in memory over a scipy sparse matrix read from Neo4j once per retriever;
5. chunks ranked by their PageRank score.

As a pipeline's expansion stage (`compose`), the candidates stage's chunks are the dense seeds,
with their own scores, in place of step 2's vector search.

Not HippoRAG 2's: fact scores are the raw cosine of the top facts, not min-max normalised over
every fact of the corpus (that would read every claim per question), and there is no model
filtering the facts ("recognition memory"); docs/methods/ppr.md says why and what it costs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Literal

import neo4j
import numpy as np

from mhgraph import cypher
from mhgraph.embeddings import TextEmbedder
from mhgraph.errors import MhgraphError
from mhgraph.filters.extractors import FilterExtractor, build_extractor
from mhgraph.filters.model import MetadataFilter
from mhgraph.graph.context import GraphContext
from mhgraph.options import MethodOptions, option
from mhgraph.retrieval.base import Retriever
from mhgraph.retrieval.claims import require_claims
from mhgraph.retrieval.records import to_chunks
from mhgraph.retrieval.registry import BuildContext, MethodSpec
from mhgraph.traversal.claim_graph import ClaimGraph
from mhgraph.traversal.diagnostics import PPRWalk
from mhgraph.traversal.pagerank import personalized_pagerank
from mhgraph.types import Hop, RetrievalResult, RetrievedChunk

SHOWN_NAMES = 10      # the walk's top names kept in its diagnostics


class PPRRetriever(Retriever):
    """The walk; its constructor's defaults are HippoRAG 2's (dense seeds at 0.05, no metadata
    seeds), PPROptions' are mhgraph's (docs/methods/ppr.md)."""

    name = "ppr"

    def __init__(self, driver: neo4j.Driver, embedder: TextEmbedder, graph: ClaimGraph, database: str | None = None,
                 *, corpus: str, facts: int = 5, candidates: int = 100, passage_weight: float = 0.05,
                 damping: float = 0.5, search_ratio: int = 4, extractor: FilterExtractor | None = None,
                 metadata_weight: float = 0.0) -> None:
        self.driver = driver
        self.embedder = embedder
        self.graph = graph
        self.database = database
        self.corpus = corpus
        self.facts = facts
        self.candidates = candidates
        self.passage_weight = passage_weight
        self.damping = damping
        self.search_ratio = search_ratio
        self.extractor = extractor
        self.metadata_weight = metadata_weight

    @property
    def params(self) -> dict[str, Any]:
        return {"corpus": self.corpus, "facts": self.facts, "candidates": self.candidates,
                "passage_weight": self.passage_weight, "damping": self.damping,
                "metadata_weight": self.metadata_weight if self.extractor else 0.0,
                **({"filter_extractor": self.extractor.name} if self.extractor else {}),
                "graph": {"nodes": self.graph.size, **self.graph.edges}}

    def _name_seeds(self, facts: list[neo4j.Record]) -> dict[int, float]:
        """Name node -> weight: per fact naming it, the fact's score over the chunks holding the
        name, averaged over those facts (HippoRAG 2)."""
        total: dict[int, float] = {}
        count: dict[int, int] = {}
        offset = len(self.graph.chunk_ids)
        for f in facts:
            for key in ("topic", "target"):
                node = self.graph.index.get(f[key])
                if node is None:     # a claim without a topic, or a name added after the graph was read
                    continue
                holders = max(self.graph.chunks_of_name[node - offset], 1.0)
                total[node] = total.get(node, 0.0) + float(f["score"]) / holders
                count[node] = count.get(node, 0) + 1
        return {node: total[node] / count[node] for node in total}

    def _chunk_seeds(self, embedding: list[float], given: Sequence[RetrievedChunk] | None = None) -> np.ndarray:
        """Per chunk node, its dense seed weight (zero where not seeded); `given`: a pipeline's
        candidates, seeded by their own scores instead."""
        weights = np.zeros(len(self.graph.chunk_ids))
        if self.passage_weight == 0:
            return weights
        if self.candidates == 0 and given is None:
            if self.graph.chunk_vectors is None:
                raise MhgraphError("ppr seeds every chunk (candidates 0) only from a graph read with its embeddings")
            q = np.asarray(embedding, dtype=np.float32)
            nodes = np.arange(len(weights))
            scores = self.graph.chunk_vectors @ (q / max(float(np.linalg.norm(q)), 1e-12))
        else:
            if given is not None:
                found = [(c.chunk_id, c.score) for c in given]
            else:
                dense, _, _ = self.driver.execute_query(
                    cypher.load("retrieval/vector_search"), embedding=embedding, corpus=self.corpus,
                    top_k=self.candidates, candidates=self.candidates * self.search_ratio, database_=self.database,
                    routing_=neo4j.RoutingControl.READ)
                found = [(r["chunk_id"], r["score"]) for r in dense]
            known = [(self.graph.index[cid], float(score)) for cid, score in found if cid in self.graph.index]
            nodes = np.array([node for node, _ in known], dtype=int)
            scores = np.array([score for _, score in known])
        if len(scores):
            span = float(scores.max() - scores.min())
            normalised = (scores - scores.min()) / span if span > 0 else np.ones_like(scores)
            weights[nodes] = normalised * self.passage_weight
        return weights

    def _metadata_seeds(self, question: str) -> tuple[np.ndarray, dict[str, Any] | None]:
        """Per chunk node, its metadata seed weight, and what was read from the question: each
        named source, within the named dates, spreads `metadata_weight` over its chunks (a node's
        specificity, as the names' seeds); dates alone spread it over the chunks of those dates."""
        weights = np.zeros(len(self.graph.chunk_ids))
        if self.extractor is None or self.metadata_weight == 0:
            return weights, None
        extraction = self.extractor.extract(question)
        found: MetadataFilter = extraction.filter
        ranges = found.day_ranges()
        groups = list(found.sources) or ([None] if ranges else [])
        seeded: dict[str, int] = {}
        for source in groups:
            mask = self.graph.chunks_admitted(source, ranges)
            count = int(mask.sum())
            seeded[source or "any source"] = count
            if count:
                weights[mask] += self.metadata_weight / count
        note = {"filter": found.to_json(), "seeded": seeded,
                **({"dropped": list(extraction.dropped)} if extraction.dropped else {}),
                **({"failure": extraction.failure} if extraction.failure else {})}
        return weights, note

    def search(self, question: str, *, top_k: int = 10, **options: Any) -> RetrievalResult:
        started = time.perf_counter()
        embedding = [float(x) for x in self.embedder.embed_query(question)]
        facts, _, _ = self.driver.execute_query(
            cypher.load("retrieval/ppr_facts"), embedding=embedding, corpus=self.corpus, facts=self.facts,
            candidates=self.facts * self.search_ratio, database_=self.database, routing_=neo4j.RoutingControl.READ)
        names = self._name_seeds(facts)
        chunks = self._chunk_seeds(embedding, options.get("candidates"))
        metadata, read = self._metadata_seeds(question)
        reset = np.zeros(self.graph.size)
        reset[:len(chunks)] = chunks + metadata
        for node, weight in names.items():
            reset[node] += weight
        walk_started = time.perf_counter()
        if reset.sum() > 0:
            scores, iterations = personalized_pagerank(self.graph.transitions, reset, self.damping)
        else:        # an empty corpus, or nothing in the index: nothing to walk from
            scores, iterations = np.zeros(self.graph.size), 0
        walk_seconds = time.perf_counter() - walk_started
        chunk_count = len(self.graph.chunk_ids)
        chunk_scores = scores[:chunk_count]
        ranked = [int(i) for i in np.argsort(-chunk_scores, kind="stable")[:top_k] if chunk_scores[i] > 0]
        rows = [{"id": self.graph.chunk_ids[i], "score": float(chunk_scores[i])} for i in ranked]
        records, _, _ = self.driver.execute_query(
            cypher.load("retrieval/chunks_by_id"), rows=rows, corpus=self.corpus, database_=self.database,
            routing_=neo4j.RoutingControl.READ)
        name_scores = scores[chunk_count:]
        top = np.argsort(-name_scores, kind="stable")[:SHOWN_NAMES]
        walk = PPRWalk(
            facts=tuple({"claim": f["claim_id"], "text": f["claim"], "score": round(float(f["score"]), 4)}
                        for f in facts),
            seeds=tuple(self._name(node, "weight", weight)
                        for node, weight in sorted(names.items(), key=lambda p: (-p[1], p[0]))),
            top_names=tuple(self._name(chunk_count + int(j), "score", float(name_scores[j]))
                            for j in top if name_scores[j] > 0),
            seeded_chunks=int((chunks > 0).sum()), iterations=iterations, walk_seconds=walk_seconds,
            metadata=read)
        seconds = time.perf_counter() - started
        hop = Hop(1, to_chunks(records), query=question, seconds=seconds)
        return RetrievalResult(question, self.name, [hop], params={"top_k": top_k, **self.params},
                               seconds=seconds, diagnostics=(walk,))

    def _name(self, node: int, field: str, value: float) -> dict[str, Any]:
        element, label, name = self.graph.name(node)
        return {"node": element, "label": label, "name": name, field: round(value, 6)}


class PPROptions(MethodOptions):
    facts: int = option(5, "Claims nearest the question whose Topic and Target names seed the walk "
                           "(HippoRAG 2 keeps 5).", ge=1)
    candidates: int = option(100, "Candidate chunks seeded by their dense score: the N nearest in the Chunk vector "
                                  "index; 0: every chunk of the corpus (HippoRAG 2; the chunk embeddings are held "
                                  "in memory).", ge=0)
    passage_weight: float = option(0.5, "Weight of a chunk's dense seed (min-max normalised score times this) "
                                        "against the names' (HippoRAG 2: 0.05; 0.5 chosen on MultiHop-RAG, "
                                        "docs/methods/ppr.md).", ge=0)
    metadata_weight: float = option(32.0, "Weight of each source the question names (within the dates it names), "
                                          "spread over that source's chunks; dates without a source spread it over "
                                          "those dates' chunks; 0: no metadata seeds (HippoRAG 2). 32 chosen on "
                                          "MultiHop-RAG (docs/methods/ppr.md).", ge=0)
    # its own, not metarag's shared --filter-extractor: the seeds are on by default, and a setting
    # meant for metarag's filter (an upper bound from the evidence, a file of reference filters)
    # should not change ppr; in a pipeline the line's filter stage sets it (compose.py)
    filter_extractor: Literal["rules", "llm"] = option(
        "rules", "Where the metadata seeds' sources and dates come from: rules (offline) or llm (the configured "
                 "language model), as metarag's --filter-extractor reads them.")
    damping: float = option(0.5, "Probability that the walk follows an edge rather than restarting at a seed "
                                 "(HippoRAG 2: 0.5).", ge=0, lt=1)


def require_synonyms(graph: GraphContext) -> None:
    """Before any model loads: the claim layer, with its synonym edges drawn."""
    require_claims(graph)
    records, _, _ = graph.driver.execute_query(
        cypher.load("claims/synonyms_drawn"), corpus=graph.corpus, database_=graph.database, routing_=neo4j.RoutingControl.READ)
    if not records or not records[0]["linked"]:
        raise MhgraphError(f"corpus '{graph.corpus}' has no synonym edges between its names: run 'mhgraph claims "
                           f"synonyms --corpus {graph.corpus}' first (claims build does it for a new layer)")


def build(ctx: BuildContext, options: PPROptions) -> PPRRetriever:
    g = ctx.graph
    ctx.status(f"reading the claim graph of corpus '{g.corpus}'")
    graph = ClaimGraph.load(g.driver, g.database, g.corpus, embeddings=options.candidates == 0)
    extractor = (build_extractor(options.filter_extractor, g.driver, g.database, g.corpus, llm=ctx.llm,
                                 questions=ctx.questions) if options.metadata_weight > 0 else None)
    return PPRRetriever(g.driver, ctx.embedder, graph, g.database, corpus=g.corpus, facts=options.facts,
                        candidates=options.candidates, passage_weight=options.passage_weight,
                        damping=options.damping, search_ratio=ctx.settings.vector_search_ratio,
                        extractor=extractor, metadata_weight=options.metadata_weight)


METHOD = MethodSpec(
    name="ppr", description="graph traversal: personalized PageRank over chunks and claim names, seeded by the "
                            "claims nearest the question (HippoRAG 2) and the sources and dates it names",
    options=PPROptions, build=build, indexes=("vector",), embedder=True, requires=require_synonyms,
    uses_llm=lambda o: o.metadata_weight > 0 and o.filter_extractor == "llm", diagnostics=(PPRWalk,))
