"""`mhgraph claims build`: the claim layer of one corpus, on top of its chunks.

    (:Chunk)-[:HAS_CLAIM]->(:Claim {id, corpus, text, embedding, document_id})
    (:Claim)-[:ABOUT]->(:Topic {corpus, key, name})      (none for a claim without a topic)
    (:Claim)-[:TARGETS]->(:Target {corpus, key, name})
    (:Topic|Target)-[:SYNONYM {score}]->(:Topic|Target)

Chunks are read in id order and taken in batches: each batch's claims are extracted, embedded with
the corpus's own model, and written in ONE transaction that first removes what those chunks held
and last marks them (`Chunk.claims_by` = the extractor's label). So a build killed at any point
and run again redoes at most one batch, a build run twice changes nothing, and a build with
another extractor replaces every chunk's claims. Topic and Target nodes are merged by name key
(mhgraph/claims/names.py) within the corpus: claims of different articles that meet on a Target
are the bridges. After the chunks, near-duplicate names are merged by embedding similarity
(mhgraph/claims/merge.py), and a later batch writes a claim whose key was merged to the node kept;
then names are linked to their nearest names by SYNONYM edges (mhgraph/claims/synonyms.py).
A Claim id hashes the chunk id, the claim's place in it and its text.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import neo4j
from tqdm import tqdm

from mhgraph import cypher
from mhgraph.claims.extract import ClaimExtractor
from mhgraph.claims.merge import (
    DEFAULT_THRESHOLD,
    NAME_LABELS,
    MergeSummary,
    alias_map,
    merge_all,
)
from mhgraph.claims.names import node_key
from mhgraph.claims.synonyms import SynonymSummary, link_synonyms
from mhgraph.embeddings import TextEmbedder
from mhgraph.graph.capabilities import detect

CLAIM_INDEX = "claim_embedding"


@dataclass
class ClaimsSummary:
    corpus: str
    extractor: str
    chunks: int             # chunks of the corpus
    chunks_done: int        # chunks whose claims are stored (by any extractor)
    processed: int          # chunks this build extracted from
    claims: int
    topics: int
    targets: int
    bridges: int            # targets that claims from two or more documents point at
    seconds: float
    extract_seconds: float
    embed_seconds: float
    write_seconds: float
    merges: list[MergeSummary] = field(default_factory=list)
    merge_threshold: float | None = None
    merge_seconds: float = 0.0
    synonyms: SynonymSummary | None = None

    @property
    def claims_per_chunk(self) -> float:
        return self.claims / self.chunks_done if self.chunks_done else 0.0

    def lines(self) -> list[str]:
        return [f"claims of corpus '{self.corpus}' by {self.extractor}",
                f"  chunks    {self.chunks_done} of {self.chunks} with their claims ({self.processed} extracted now)",
                f"  claims    {self.claims} ({self.claims_per_chunk:.2f} per chunk)",
                f"  topics    {self.topics}",
                f"  targets   {self.targets}, of which bridges {self.bridges} (targets of claims from 2+ documents)",
                *(["  merged    " + ", ".join(f"{m.merged} of {m.names} {m.label.lower()}s" for m in self.merges)
                   + f" into near-duplicate names (cosine >= {self.merge_threshold:.2f})"] if self.merges else []),
                *([self.synonyms.line()] if self.synonyms else []),
                f"  time      {self.seconds:.1f} s (extracting {self.extract_seconds:.1f} s, embedding "
                f"{self.embed_seconds:.1f} s, writing {self.write_seconds:.1f} s, merging and linking names "
                f"{self.merge_seconds:.1f} s)"]


def ensure_claim_schema(driver: neo4j.Driver, database: str | None, dimensions: int) -> None:
    for statement in cypher.load_statements("claims/schema"):
        driver.execute_query(statement, database_=database)
    if detect(driver, database).vector_filter_properties:
        driver.execute_query(cypher.load("claims/vector_index"), name=CLAIM_INDEX, dimensions=dimensions,
                             database_=database)
    else:
        from neo4j_graphrag.indexes import create_vector_index

        create_vector_index(driver, CLAIM_INDEX, label="Claim", embedding_property="embedding", dimensions=dimensions,
                            similarity_fn="cosine", neo4j_database=database)
    driver.execute_query(cypher.load("schema/await_indexes"), database_=database)


def claim_count(driver: neo4j.Driver, database: str | None, corpus: str) -> int:
    records, _, _ = driver.execute_query(cypher.load("claims/count"), corpus=corpus, database_=database,
                                         routing_=neo4j.RoutingControl.READ)
    return records[0]["claims"]


def claim_layer_built(driver: neo4j.Driver, database: str | None, corpus: str) -> bool:
    """Whether `corpus` has a claim layer (built, or a build begun), even if none of its chunks
    that hold claims now is left (every one replaced)."""
    records, _, _ = driver.execute_query(cypher.load("claims/layer_built"), corpus=corpus, database_=database,
                                         routing_=neo4j.RoutingControl.READ)
    return bool(records[0]["built"])


def claims_summary(driver: neo4j.Driver, database: str | None, corpus: str) -> neo4j.Record:
    """Claims, chunks (with claims), topics, targets and bridges of `corpus`'s claim layer."""
    return driver.execute_query(cypher.load("claims/summary"), corpus=corpus, database_=database,
                                         routing_=neo4j.RoutingControl.READ).records[0]


def claim_id(chunk_id: str, place: int, text: str) -> str:
    return hashlib.sha256(f"{chunk_id}\x00{place}\x00{text}".encode()).hexdigest()[:32]


def _write_batch(tx: neo4j.ManagedTransaction, corpus: str, extractor: str, chunk_ids: list[str],
                 rows: list[dict[str, Any]]) -> None:
    tx.run(cypher.load("claims/clear_chunks"), chunks=chunk_ids).consume()
    if rows:
        tx.run(cypher.load("claims/write_claims"), claims=rows, corpus=corpus).consume()
    tx.run(cypher.load("claims/mark_chunks"), chunks=chunk_ids, extractor=extractor).consume()


def pending_chunks(driver: neo4j.Driver, database: str | None, corpus: str, extractor: str, *,
                   limit: int | None = None, only_new: bool = False,
                   documents: Sequence[str] | None = None) -> list[neo4j.Record]:
    """The chunks whose claims are still to extract (chunk_id, document_id, text, title), in id order."""
    records, _, _ = driver.execute_query(cypher.load("claims/pending_chunks"), corpus=corpus, extractor=extractor,
                                         only_new=only_new, documents=None if documents is None else list(documents),
                                         database_=database)
    return records[:limit] if limit is not None else records


class ClaimBatchWriter:
    """Extract, embed and write the claims of one batch of chunks (one transaction): the step
    `build_claims` repeats here and the Ray engine's workers repeat elsewhere."""

    def __init__(self, driver: neo4j.Driver, database: str | None, corpus: str, extractor: ClaimExtractor,
                 embedder: TextEmbedder, merged: dict[str, dict[str, str]]) -> None:
        self.driver, self.database, self.corpus = driver, database, corpus
        self.extractor, self.embedder, self.merged = extractor, embedder, merged
        self.timing = {"extract": 0.0, "embed": 0.0, "write": 0.0}

    def _key(self, label: str, name: str | None) -> str | None:
        """The node key `name` is written under: its name key, or the key it was merged into (None
        for no name: a claim without a topic)."""
        return None if name is None else node_key(name, self.merged[label])

    def __call__(self, batch: Sequence[Any]) -> int:
        """Claims written for `batch` (records or dicts with chunk_id, document_id, text, title)."""
        t = time.perf_counter()
        rows: list[dict[str, Any]] = []
        for r in batch:
            for place, claim in enumerate(self.extractor.extract(r["text"], r["title"])):
                rows.append({"id": claim_id(r["chunk_id"], place, claim.text), "chunk": r["chunk_id"],
                             "document": r["document_id"], "text": claim.text, "topic": claim.topic,
                             "topic_key": self._key("Topic", claim.topic), "target": claim.target,
                             "target_key": self._key("Target", claim.target)})
        self.timing["extract"] += time.perf_counter() - t
        t = time.perf_counter()
        if rows:
            vectors = self.embedder.embed_documents([row["text"] for row in rows])
            for row, vector in zip(rows, vectors):
                row["embedding"] = [float(x) for x in vector]
        self.timing["embed"] += time.perf_counter() - t
        t = time.perf_counter()
        # the session shares execute_query's bookmarks: a read routed to a secondary after it sees the batch
        with self.driver.session(database=self.database,
                                 bookmark_manager=self.driver.execute_query_bookmark_manager) as session:
            session.execute_write(_write_batch, self.corpus, self.extractor.label, [r["chunk_id"] for r in batch],
                                  rows)
        self.timing["write"] += time.perf_counter() - t
        return len(rows)


def name_aliases(driver: neo4j.Driver, database: str | None, corpus: str) -> dict[str, dict[str, str]]:
    """label -> name key -> the key it was merged into."""
    return {label: alias_map(driver, database, corpus, label) for label in NAME_LABELS}


def finish_claims(driver: neo4j.Driver, database: str | None, corpus: str, extractor: str, embedder: TextEmbedder,
                  *, pending: int, timing: dict[str, float], started: float, merge_threshold: float | None,
                  only_new: bool) -> ClaimsSummary:
    """After the chunks: prune, merge near-duplicate names, draw synonyms, count."""
    driver.execute_query(cypher.load("claims/prune"), corpus=corpus, database_=database)
    t = time.perf_counter()
    merges = [] if merge_threshold is None else merge_all(driver, database, corpus, embedder, merge_threshold,
                                                          only_new=only_new)
    synonyms = link_synonyms(driver, database, corpus, embedder)
    merge_seconds = time.perf_counter() - t
    counts = claims_summary(driver, database, corpus)
    return ClaimsSummary(corpus, extractor, counts["chunks"], counts["chunks_done"], pending,
                         counts["claims"], counts["topics"],
                         counts["targets"], counts["bridges"], time.perf_counter() - started,
                         timing["extract"], timing["embed"], timing["write"], merges, merge_threshold, merge_seconds,
                         synonyms)


def build_claims(driver: neo4j.Driver, database: str | None, corpus: str, extractor: ClaimExtractor,
                 embedder: TextEmbedder, *, batch_size: int = 32, limit: int | None = None,
                 merge_threshold: float | None = DEFAULT_THRESHOLD, progress: bool = True,
                 only_new: bool = False, documents: Sequence[str] | None = None) -> ClaimsSummary:
    """Extract, embed and store the claims of every chunk of `corpus` not yet done by `extractor`
    (only_new: of the chunks with no claims at all; documents: only these documents' chunks; at
    most `limit` chunks this run), then merge near-duplicate names (None: no merging)."""
    started = time.perf_counter()
    ensure_claim_schema(driver, database, embedder.dimensions)
    write = ClaimBatchWriter(driver, database, corpus, extractor, embedder, name_aliases(driver, database, corpus))
    pending = pending_chunks(driver, database, corpus, extractor.label, limit=limit, only_new=only_new,
                             documents=documents)
    with tqdm(total=len(pending), desc=f"claims ({extractor.label})", unit="chunk", disable=not progress) as bar:
        for i in range(0, len(pending), batch_size):
            batch = pending[i:i + batch_size]
            write(batch)
            bar.update(len(batch))
    return finish_claims(driver, database, corpus, extractor.label, embedder, pending=len(pending),
                         timing=write.timing, started=started, merge_threshold=merge_threshold, only_new=only_new)
