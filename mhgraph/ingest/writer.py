"""Batched, idempotent writes of Documents and Chunks (UNWIND, one transaction per batch)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from neo4j import Driver, ManagedTransaction

from mhgraph import cypher
from mhgraph.ingest.chunking import ChunkSpan
from mhgraph.ingest.corpus import Article


@dataclass
class PreparedDocument:
    """An article of a corpus with its chunks (and, once embedded, their vectors) ready to write."""

    id: str                 # document_id(corpus, article)
    article: Article
    chunks: list[ChunkSpan]
    chunk_ids: list[str]
    fingerprint: str
    embeddings: Sequence[Sequence[float]] | None = None


class GraphWriter:
    """Writes the documents of one corpus."""

    def __init__(self, driver: Driver, database: str | None, corpus: str, embedding_model: str, chunk_size: int,
                 chunk_overlap: int, embed_header: str = "none") -> None:
        self.driver = driver
        self.database = database
        self.corpus = corpus
        self.chunking = {"embedding_model": embedding_model, "chunk_size": chunk_size, "chunk_overlap": chunk_overlap,
                         "embed_header": embed_header}

    def open_corpus(self, file: str) -> None:
        """Create the Corpus node (or record one more file ingested into it)."""
        self.driver.execute_query(cypher.load("ingest/merge_corpus"), name=self.corpus, file=file,
                                  chunk_size=self.chunking["chunk_size"],
                                  chunk_overlap=self.chunking["chunk_overlap"], database_=self.database)

    def fingerprints(self, ids: Iterable[str]) -> dict[str, str | None]:
        records, _, _ = self.driver.execute_query(
            cypher.load("ingest/document_fingerprints"), ids=list(ids), database_=self.database
        )
        return {r["id"]: r["fingerprint"] for r in records}

    def counts(self) -> dict[str, int]:
        records, _, _ = self.driver.execute_query(cypher.load("ingest/graph_counts"), corpus=self.corpus,
                                                  database_=self.database)
        return dict(records[0])

    def write(self, batch: Sequence[PreparedDocument]) -> None:
        """Write a batch atomically: a killed ingest leaves whole documents or none."""
        with self.driver.session(database=self.database) as session:
            session.execute_write(self._write_batch, batch)

    def _write_batch(self, tx: ManagedTransaction, batch: Sequence[PreparedDocument]) -> None:
        documents, chunks, links = [], [], []
        for doc in batch:
            a = doc.article
            documents.append({
                "id": doc.id, "title": a.title, "url": a.url, "author": a.author, "category": a.category,
                "published_at": a.published_at, "source": a.source, "fingerprint": doc.fingerprint,
                "chunk_ids": doc.chunk_ids,
            })
            assert doc.embeddings is not None and len(doc.embeddings) == len(doc.chunks)
            for span, chunk_id, vector in zip(doc.chunks, doc.chunk_ids, doc.embeddings):
                chunks.append({
                    "id": chunk_id, "document_id": doc.id, "index": span.index, "text": span.text,
                    "embedding": [float(x) for x in vector], "source": a.source,
                    "published_at": a.published_at, "token_count": span.token_count,
                    "start_char": span.start_char, "end_char": span.end_char,
                })
            links += [{"from": x, "to": y} for x, y in zip(doc.chunk_ids, doc.chunk_ids[1:])]
        tx.run(cypher.load("ingest/delete_stale_chunks"), documents=documents).consume()
        tx.run(cypher.load("ingest/merge_documents"), documents=documents, corpus=self.corpus,
               **self.chunking).consume()
        tx.run(cypher.load("ingest/merge_chunks"), chunks=chunks, corpus=self.corpus).consume()
        tx.run(cypher.load("ingest/link_next_chunks"), links=links).consume()
