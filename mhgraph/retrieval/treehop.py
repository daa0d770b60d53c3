"""`treehop`: multi-hop retrieval in embedding space (TreeHop, Li et al., 2025). No LLM.

Hop 1 is the vector index's top-k for the question; every chunk it returns starts a branch (its
query embedding, its chunk). At each later hop:

1. the next query embedding of every live branch, q' = q - c + UpdateGate(q, c), in ONE batched
   torch call (mhgraph/treehop/model.py);
2. every branch's top-k chunks in ONE Cypher round trip (UNWIND over the vectors, the in-index
   search per row: cypher/retrieval/treehop_search.cypher), each chunk with its embedding;
3. the stop rules, both on by default and switchable for the ablations:
   - redundancy pruning: a branch whose chunk was already retrieved (at an earlier hop, or by an
     earlier branch at this one) stops, and its chunk is not retrieved twice;
   - layer-wise top-k: of the new branches, only the k whose chunks score highest against their
     parent branch's query go on (and are retrieved); `branches` sets another count than k (the
     authors' code takes one too), which is how the average K is matched to the published runs'.
Each chunk keeps its parent chunk (RetrievedChunk.parent_id), so the result and the eval traces
hold the branch tree: (:Chunk)-[:LED_TO {hop}]->(:Chunk) in Neo4j.

With an extractor (`--hop-filter`, the extractor of `--filter-extractor`), metarag's metadata filter
read from the question holds at every hop: each search, hop 1's and the branches', admits only the
chunks the filter admits (inside the vector index; a question with no usable filter is searched
unfiltered and counted as a fallback, as in metarag).

The model comes from a checkpoint folder, or a k-fold folder in which each question is run by the
model of its own fold (mhgraph/treehop/checkpoint.py); unset, the packaged checkpoint.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import neo4j
import numpy as np

from mhgraph import cypher
from mhgraph.embeddings import TextEmbedder
from mhgraph.graph.documents import warn_if_changed
from mhgraph.filters.diagnostics import FilterExtraction
from mhgraph.filters.extractors import FilterExtractor, build_extractor
from mhgraph.filters.model import MetadataFilter
from mhgraph.options import MethodOptions, option
from mhgraph.retrieval.base import Retriever
from mhgraph.retrieval.metarag import FilterExtractorName, index_form
from mhgraph.retrieval.records import to_chunks
from mhgraph.retrieval.registry import BuildContext, MethodSpec
from mhgraph.treehop.diagnostics import TreeHopTree
from mhgraph.types import Hop, RetrievalResult, RetrievedChunk

if TYPE_CHECKING:
    from mhgraph.treehop.checkpoint import TreeHopModels


@dataclass(frozen=True)
class Branch:
    query: np.ndarray        # the query embedding that retrieved `chunk`
    chunk: RetrievedChunk
    embedding: np.ndarray | None    # the chunk's (not fetched at the last hop)


def search_query(filt: MetadataFilter | None) -> tuple[str, dict[str, Any]]:
    """The query file that searches every branch of a hop, and its filter parameters: unfiltered,
    or metarag's in-index form for what the filter holds."""
    if filt is None or filt.is_empty:
        return "retrieval/treehop_search", {}
    form, params = index_form(filt)
    return f"retrieval/treehop_search_{form}", params


def nearest(driver: neo4j.Driver, database: str | None, corpus: str, vectors: Sequence[np.ndarray], top_k: int,
            search_ratio: int, with_embeddings: bool = True,
            filt: MetadataFilter | None = None) -> list[list[tuple[RetrievedChunk, np.ndarray | None]]]:
    """Per vector, its top-k chunks of `corpus` (that `filt` admits) with their embeddings (None
    without `with_embeddings`): one round trip for all."""
    rows = [{"branch": i, "embedding": np.asarray(v, dtype=np.float64).tolist()} for i, v in enumerate(vectors)]
    name, filter_params = search_query(filt)
    records, _, _ = driver.execute_query(
        cypher.load(name), **filter_params, queries=rows, corpus=corpus, top_k=top_k,
        candidates=top_k * search_ratio, with_embeddings=with_embeddings, database_=database,
        routing_=neo4j.RoutingControl.READ)
    rows_of: list[list[neo4j.Record]] = [[] for _ in vectors]
    for record in records:   # ordered by branch, then score
        rows_of[record["branch"]].append(record)
    return [[(chunk, None if r["embedding"] is None else np.asarray(r["embedding"], dtype=np.float32))
             for chunk, r in zip(to_chunks(rows), rows)] for rows in rows_of]


class TreeHopRetriever(Retriever):
    name = "treehop"

    def __init__(self, driver: neo4j.Driver, embedder: TextEmbedder, models: TreeHopModels,
                 database: str | None = None, *, corpus: str, search_ratio: int, hops: int = 2,
                 redundancy_pruning: bool = True, layer_top_k: bool = True, branches: int | None = None,
                 extractor: FilterExtractor | None = None) -> None:
        self.driver = driver
        self.embedder = embedder
        self.models = models
        self.database = database
        self.corpus = corpus
        self.search_ratio = search_ratio
        self.hops = hops
        self.redundancy_pruning = redundancy_pruning
        self.layer_top_k = layer_top_k
        self.branches = branches
        self.extractor = extractor
        self.round_trips = 0     # Neo4j queries sent, counted for tests and bench/treehop_latency.py

    @property
    def params(self) -> dict[str, Any]:
        return {"corpus": self.corpus, "search_ratio": self.search_ratio, "hops": self.hops,
                "redundancy_pruning": self.redundancy_pruning, "layer_top_k": self.layer_top_k,
                "branches": self.branches,
                "treehop_model": self.models.name, "in_domain_trained": self.models.in_domain_for(self.corpus),
                "terms": list(self.models.checkpoints[0].model.config.terms),
                **({"filter_extractor": self.extractor.name} if self.extractor else {})}

    def trained_models(self) -> tuple[Any, ...]:
        return (self.models,)

    def _search(self, vectors: Sequence[np.ndarray], top_k: int, last: bool,
                filt: MetadataFilter | None) -> list[list[tuple[RetrievedChunk, np.ndarray | None]]]:
        self.round_trips += 1
        return nearest(self.driver, self.database, self.corpus, vectors, top_k, self.search_ratio,
                       with_embeddings=not last, filt=filt)

    def search(self, question: str, *, top_k: int = 10, **options: Any) -> RetrievalResult:
        started = time.perf_counter()
        phases: dict[str, float] = {}
        diagnostics: tuple = ()
        filt = None
        if self.extractor is not None:
            extraction = self.extractor.extract(question)
            filt = None if extraction.filter.is_empty else extraction.filter
            diagnostics = (FilterExtraction(extraction, filt is None, self.extractor.name),)
            phases["filter"] = time.perf_counter() - started
        shown = filt.to_json() if filt else None
        model = self.models.for_question(question)
        t = time.perf_counter()
        q = np.asarray(self.embedder.embed_query(question), dtype=np.float32)
        phases["embed"] = time.perf_counter() - t
        t = time.perf_counter()
        first = self._search([q], top_k, self.hops == 1, filt)[0]
        hop_chunks = [c for c, _ in first]
        hops = [Hop(index=1, chunks=hop_chunks, query=question, filters=shown, seconds=time.perf_counter() - t)]
        phases["search"] = hops[0].seconds
        phases["update"] = 0.0
        seen = {c.chunk_id for c in hop_chunks}
        branches = [Branch(q, c, e) for c, e in first]
        sizes = [len(branches)]
        for index in range(2, self.hops + 1):
            if not branches:
                break
            t = time.perf_counter()
            nexts = model.next_queries(np.stack([b.query for b in branches]),
                                       np.stack([b.embedding for b in branches])).numpy()
            phases["update"] += time.perf_counter() - t
            t = time.perf_counter()
            found = self._search(list(nexts), top_k, index == self.hops, filt)
            branches, chunks = self._grow(branches, nexts, found, seen, top_k)
            seconds = time.perf_counter() - t
            phases["search"] += seconds
            hops.append(Hop(index=index, chunks=chunks, query=None, filters=shown, seconds=seconds))
            sizes.append(len(branches))
        return RetrievalResult(question, self.name, hops, params={"top_k": top_k, **self.params},
                               seconds=time.perf_counter() - started, phases=phases,
                               diagnostics=(TreeHopTree(tuple(sizes), self.models.name), *diagnostics))

    def _grow(self, parents: list[Branch], queries: np.ndarray, found: list[list[tuple[RetrievedChunk, np.ndarray]]],
              seen: set[str], top_k: int) -> tuple[list[Branch], list[RetrievedChunk]]:
        """This hop's new branches and retrieved chunks (children linked to their parents' chunks)."""
        new: list[tuple[float, int, RetrievedChunk, np.ndarray]] = []   # (score, parent, chunk, embedding)
        for i, rows in enumerate(found):
            new += [(c.score, i, c, e) for c, e in rows]
        new.sort(key=lambda x: (-x[0], x[1], x[2].chunk_id))   # by score against the parent's next query
        kept: list[tuple[float, int, RetrievedChunk, np.ndarray]] = []
        limit = self.branches or top_k
        taken: set[str] = set()
        for row in new:
            chunk_id = row[2].chunk_id
            if self.redundancy_pruning and (chunk_id in seen or chunk_id in taken):
                continue
            kept.append(row)
            taken.add(chunk_id)
            if self.layer_top_k and len(kept) == limit:
                break
        seen |= taken
        branches, chunks = [], []
        for rank, (score, i, chunk, embedding) in enumerate(kept, start=1):
            child = replace(chunk, rank=rank, parent_id=parents[i].chunk.chunk_id)
            chunks.append(child)
            branches.append(Branch(queries[i], child, embedding))
        return branches, chunks


class TreeHopOptions(MethodOptions):
    model: str | None = option(
        None, "A checkpoint or k-fold folder from 'mhgraph treehop train' (default: the packaged model, for "
        "all-MiniLM-L6-v2).", flag="--treehop-model", legacy=("treehop_model",))
    hops: int = option(2, "Hops.", flag="--hops", ge=1, legacy=("treehop_hops",))
    redundancy_pruning: bool = option(True, "Stop a branch whose chunk was already retrieved.",
                                      flag="--redundancy-pruning", legacy=("treehop_redundancy_pruning",))
    layer_top_k: bool = option(True, "Keep only the best new branches per hop.", flag="--layer-top-k",
                               legacy=("treehop_layer_top_k",))
    branches: int | None = option(None, "New branches layer-wise top-k keeps per hop (default: -k).",
                                  flag="--branches", ge=1, legacy=("treehop_branches",))
    filter: bool = option(False, "metarag's metadata filter (--filter-extractor) at every hop.",
                          flag="--hop-filter", legacy=("treehop_filter",))
    filter_extractor: FilterExtractorName = option(
        "rules", "Where the hop filter comes from (as metarag's --filter-extractor).", flag="--filter-extractor",
        env=("MHGRAPH_FILTER_EXTRACTOR",), legacy=("filter_extractor",))


def build(ctx: BuildContext, options: TreeHopOptions) -> TreeHopRetriever:
    from mhgraph.treehop.checkpoint import PACKAGED, TreeHopModels  # torch

    g = ctx.graph
    g.capabilities.require_search_clause("treehop (every branch searched in one query)")
    ctx.status(f"loading TreeHop model {options.model or 'packaged'}")
    models = TreeHopModels.load(Path(options.model) if options.model else PACKAGED, ctx.embedder.model_name)
    # a model that learns nothing (q - c and its ablations) is the same on every corpus
    retrain = (f"mhgraph treehop train --corpus {g.corpus} --questions FILE, then --treehop-model"
               if models.checkpoints[0].model.trainable else None)
    warn_if_changed(g.driver, g.database, g.corpus, f"TreeHop model {models.name}", models.corpus_facts, retrain)
    extractor = (build_extractor(options.filter_extractor, g.driver, g.database, g.corpus, llm=ctx.llm,
                                 questions=ctx.questions) if options.filter else None)
    return TreeHopRetriever(g.driver, ctx.embedder, models, g.database, corpus=g.corpus,
                            search_ratio=ctx.settings.vector_search_ratio, hops=options.hops,
                            redundancy_pruning=options.redundancy_pruning, layer_top_k=options.layer_top_k,
                            branches=options.branches, extractor=extractor)


METHOD = MethodSpec(
    name="treehop", description="TreeHop: the next query computed in embedding space between Cypher calls",
    options=TreeHopOptions, build=build, indexes=("vector",), embedder=True,
    uses_llm=lambda o: o.filter and o.filter_extractor == "llm", diagnostics=(TreeHopTree, FilterExtraction),
    commands=("mhgraph.cli.treehop:treehop_group",))
