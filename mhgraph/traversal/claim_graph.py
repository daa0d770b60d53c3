"""`ClaimGraph`: a corpus's claim layer as the graph HippoRAG 2 walks, in memory.

HippoRAG 2's graph has phrase nodes (entities of OpenIE triples) and passage nodes; mhgraph's
claim layer has the same shape: Topic and Target names are the phrases, Chunks the passages, and
each Claim (a topic, a target and the sentence joining them) the triple. So the nodes are the
corpus's Chunks, Topics and Targets, and the undirected edges, as in HippoRAG 2:

- chunk - name, weight 1, for each name a claim of the chunk is about or targets ("contains");
- topic - target, weight the number of claims joining them (the triple's subject - object edge;
  a claim without a topic gives its chunk - target edge alone);
- name - name, weight the cosine similarity, for each SYNONYM edge (mhgraph/claims/synonyms.py).

Claims themselves are not nodes: they seed the walk (ppr.py). The graph is read from Neo4j in two
queries (cypher/retrieval/ppr_graph.cypher, ppr_synonyms.cypher) and kept as a scipy sparse matrix,
so each question costs a few sparse products, not a projection.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import neo4j
import numpy as np
import scipy.sparse as sp

from mhgraph import cypher
from mhgraph.traversal.pagerank import Transitions


@dataclass
class ClaimGraph:
    chunk_ids: list[str]                  # node i < len(chunk_ids): that chunk
    names: list[tuple[str, str, str]]     # node len(chunk_ids) + j: (element id, label, name)
    transitions: Transitions
    chunks_of_name: np.ndarray            # per name node: how many chunks hold it
    edges: dict[str, int]                 # edges per kind
    # unit rows in chunk_ids' order, when read (dense seeds over every chunk); else None
    chunk_vectors: np.ndarray | None = None
    # per chunk, in chunk_ids' order: its source (None where unknown) and publication time in POSIX
    # seconds (NaN where unknown), for the metadata seeds; unknown throughout when not given
    chunk_sources: np.ndarray | None = None
    chunk_published: np.ndarray | None = None
    index: dict[str, int] = field(init=False)   # chunk id or name element id -> node

    def __post_init__(self) -> None:
        if self.chunk_sources is None:
            self.chunk_sources = np.full(len(self.chunk_ids), None, dtype=object)
        if self.chunk_published is None:
            self.chunk_published = np.full(len(self.chunk_ids), np.nan)
        self.index = {c: i for i, c in enumerate(self.chunk_ids)}
        offset = len(self.chunk_ids)
        self.index.update({node: offset + j for j, (node, _, _) in enumerate(self.names)})

    @property
    def size(self) -> int:
        return len(self.chunk_ids) + len(self.names)

    def name(self, node: int) -> tuple[str, str, str]:
        """(element id, label, name) of a name node."""
        return self.names[node - len(self.chunk_ids)]

    def chunks_admitted(self, source: str | None, ranges: list[tuple[datetime, datetime]]) -> np.ndarray:
        """Mask over the chunk nodes: those of `source` (any source if None) published in one of
        the half-open `ranges` (any time if empty). MetadataFilter.admits decides the same for one
        chunk; this is its vectorised twin, since every question tests every chunk."""
        mask = np.ones(len(self.chunk_ids), dtype=bool) if source is None else self.chunk_sources == source
        if ranges:
            published = self.chunk_published
            within = np.zeros(len(self.chunk_ids), dtype=bool)
            for start, end in ranges:
                within |= (published >= start.timestamp()) & (published < end.timestamp())
            mask &= within
        return mask

    @classmethod
    def load(cls, driver: neo4j.Driver, database: str | None, corpus: str,
             embeddings: bool = False) -> ClaimGraph:
        """The graph of `corpus` with its chunks' sources and dates; with `embeddings`, every
        chunk's embedding too."""
        claims, _, _ = driver.execute_query(cypher.load("retrieval/ppr_graph"), corpus=corpus, database_=database,
                                            routing_=neo4j.RoutingControl.READ)
        synonyms, _, _ = driver.execute_query(cypher.load("retrieval/ppr_synonyms"), corpus=corpus,
                                              database_=database, routing_=neo4j.RoutingControl.READ)
        # chunks first (node i), then names (node chunks + j): the name nodes are numbered once
        # every chunk is known, so the edges are collected by index first and offset after
        chunk_index: dict[str, int] = {}
        name_index: dict[str, int] = {}
        names: list[tuple[str, str, str]] = []
        # (chunk, topic, target) per claim; topic None for a claim without one
        triples: list[tuple[int, int | None, int]] = []
        for r in claims:
            c = chunk_index.setdefault(r["chunk"], len(chunk_index))
            if r["target"] is None:      # a chunk without claims: a node without edges
                continue
            ends: list[int | None] = []
            for label, key, name in (("Topic", "topic", "topic_name"), ("Target", "target", "target_name")):
                if r[key] is None:
                    ends.append(None)
                    continue
                if r[key] not in name_index:
                    name_index[r[key]] = len(names)
                    names.append((r[key], label, r[name]))
                ends.append(name_index[r[key]])
            triples.append((c, *ends))
        chunks = len(chunk_index)
        contains: set[tuple[int, int]] = set()
        joins: dict[tuple[int, int], float] = {}
        for c, topic, target in triples:
            t = chunks + target
            contains.add((c, t))
            if topic is not None:
                p = chunks + topic
                contains.add((c, p))
                joins[(p, t)] = joins.get((p, t), 0.0) + 1.0
        similar = {(chunks + name_index[r["a"]], chunks + name_index[r["b"]]): float(r["score"])
                   for r in synonyms if r["a"] in name_index and r["b"] in name_index}
        pairs = [*((a, b, 1.0) for a, b in contains), *((a, b, w) for (a, b), w in joins.items()),
                 *((a, b, w) for (a, b), w in similar.items())]
        n = chunks + len(names)
        if pairs:
            rows, cols, weights = (np.array(x) for x in zip(*pairs))
            upper = sp.coo_matrix((weights, (rows, cols)), shape=(n, n))
            adjacency = (upper + upper.T).tocsr()
        else:
            adjacency = sp.csr_matrix((n, n))
        holders = np.zeros(len(names))
        for _, name in contains:
            holders[name - chunks] += 1
        vectors = None
        if embeddings:
            rows, _, _ = driver.execute_query(cypher.load("retrieval/ppr_chunk_embeddings"), corpus=corpus,
                                              database_=database, routing_=neo4j.RoutingControl.READ)
            by_id = {r["chunk"]: r["embedding"] for r in rows}
            vectors = np.array([by_id[c] for c in chunk_index], dtype=np.float32).reshape(chunks, -1)
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        rows, _, _ = driver.execute_query(cypher.load("retrieval/ppr_chunk_metadata"), corpus=corpus,
                                          database_=database, routing_=neo4j.RoutingControl.READ)
        metadata = {r["chunk"]: (r["source"], r["published_at"]) for r in rows}
        sources = np.array([metadata.get(c, (None, None))[0] for c in chunk_index], dtype=object)
        published = np.array([_seconds(metadata.get(c, (None, None))[1]) for c in chunk_index], dtype=float)
        return cls(list(chunk_index), names, Transitions.from_adjacency(adjacency), holders,
                   {"contains": len(contains), "joins": len(joins), "synonyms": len(similar)}, vectors,
                   sources, published)


def _seconds(value: Any) -> float:
    """A Neo4j DateTime as POSIX seconds; NaN for none."""
    return float("nan") if value is None else value.to_native().timestamp()
