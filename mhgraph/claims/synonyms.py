"""Synonym edges between Topic and Target names: the "synonymy" edges of HippoRAG 2's graph.

Merging (mhgraph/claims/merge.py) joins only names that are surely one thing. Graph traversal
wants the looser link HippoRAG 2 draws: each name to its nearest names by embedding, at most
`neighbours` (10) of them with cosine similarity at least `threshold` (0.8), Topics and Targets
alike, so a walk can cross from "Sam Altman" (a Target) to "OpenAI's chief executive Sam Altman"
(a Topic). Edges are stored once per pair as (:Topic|Target)-[:SYNONYM {score}]->(:Topic|Target),
replacing the corpus's previous ones, and the Corpus node records the settings
(`synonym_threshold`, `synonym_neighbours`): `ppr` reads that mark to know they exist.
Names keep their embeddings on the node (merge's `name_embedding`), so a re-run embeds none.
"""

from __future__ import annotations

from dataclasses import dataclass

import neo4j
import numpy as np

from mhgraph import cypher
from mhgraph.claims.merge import NAME_LABELS, name_vectors
from mhgraph.embeddings import TextEmbedder
from mhgraph.errors import MhgraphError

DEFAULT_THRESHOLD = 0.80     # HippoRAG 2's synonymy threshold
DEFAULT_NEIGHBOURS = 10      # and its neighbours per name


@dataclass(frozen=True)
class SynonymSummary:
    names: int
    edges: int
    threshold: float
    neighbours: int
    embedded: int            # names embedded now (the rest kept theirs)

    def line(self) -> str:
        return (f"  synonyms  {self.edges} edges between {self.names} topic and target names "
                f"(cosine >= {self.threshold:.2f}, at most {self.neighbours} per name)")


def nearest_pairs(vectors: np.ndarray, threshold: float, neighbours: int,
                  block: int = 2048) -> list[tuple[int, int, float]]:
    """(i, j, cosine) with i < j for every pair where j is among i's `neighbours` nearest rows (or i
    among j's) at cosine >= threshold; `vectors` unit rows. A pair found from both sides counts once."""
    n = len(vectors)
    if n < 2 or neighbours < 1:
        return []
    k = min(neighbours, n - 1)
    best: dict[tuple[int, int], float] = {}
    for start in range(0, n, block):
        sims = vectors[start:start + block] @ vectors.T
        rows = np.arange(sims.shape[0])
        sims[rows, rows + start] = -np.inf                       # not itself
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        for r, cols in enumerate(top):
            i = start + r
            for j in cols:
                score = float(sims[r, j])
                if score >= threshold:
                    best[(min(i, int(j)), max(i, int(j)))] = score
    return sorted((i, j, s) for (i, j), s in best.items())


def link_synonyms(driver: neo4j.Driver, database: str | None, corpus: str, embedder: TextEmbedder,
                  threshold: float = DEFAULT_THRESHOLD, neighbours: int = DEFAULT_NEIGHBOURS,
                  batch_size: int = 2000) -> SynonymSummary:
    """Replace the SYNONYM edges of `corpus`'s Topic and Target names; see the module text."""
    if not 0.0 < threshold <= 1.0:
        raise MhgraphError(f"synonym threshold must be above 0 and at most 1, got {threshold}")
    if neighbours < 1:
        raise MhgraphError(f"synonym neighbours must be at least 1, got {neighbours}")
    nodes: list[str] = []
    parts = []
    embedded = 0
    for label in NAME_LABELS:
        records, vectors, fresh = name_vectors(driver, database, corpus, label, embedder)
        nodes += [r["node"] for r in records]
        parts.append(vectors)
        embedded += fresh
    pairs = nearest_pairs(np.vstack(parts), threshold, neighbours) if nodes else []
    rows = [{"a": nodes[i], "b": nodes[j], "score": round(s, 4)} for i, j, s in pairs]
    driver.execute_query(cypher.load("claims/clear_synonyms"), corpus=corpus, database_=database)
    for i in range(0, len(rows), batch_size):
        driver.execute_query(cypher.load("claims/write_synonyms"), rows=rows[i:i + batch_size], database_=database)
    driver.execute_query(cypher.load("claims/mark_synonyms"), corpus=corpus, threshold=threshold,
                         neighbours=neighbours, edges=len(rows), database_=database)
    return SynonymSummary(len(nodes), len(rows), threshold, neighbours, embedded)
