"""Idempotent writes of Documents and Chunks, one transaction per document (the Ray engine: per
batch); a new version replaces the old."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Iterable, NamedTuple, Sequence

from neo4j import Driver, ManagedTransaction, Session
from neo4j.exceptions import ClientError

from mhgraph import cypher
from mhgraph.errors import MhgraphError
from mhgraph.graph.documents import (
    LEGACY_KEY_FIELDS,
    Removal,
    next_revision,
    release_file,
    remove_documents,
)
from mhgraph.graph.schema import corpus_chunk_label
from mhgraph.ingest.chunking import ChunkSpan
from mhgraph.ingest.corpus import Article


@dataclass
class PreparedDocument:
    """An article of a corpus with its chunks (and, once embedded, their vectors) ready to write."""

    id: str                 # document_id(corpus, article)
    key: str                # what the document is known by in its corpus (config.KEY_RULES)
    article: Article
    chunks: list[ChunkSpan]
    chunk_ids: list[str]
    fingerprint: str
    embeddings: Sequence[Sequence[float]] | None = None
    replaces: list[str] = field(default_factory=list)   # ids of the stored versions it replaces
    files: list[str] = field(default_factory=list)      # the files that hold it (this one, and the old version's)
    written_by_others: list[str] = field(default_factory=list)  # other files the replaced versions were read from

    @property
    def version(self) -> str:
        """The content hash."""
        return self.article.id


class StoredVersion(NamedTuple):
    """A stored document of a key, as an ingest finds it."""

    id: str
    fingerprint: str | None     # None: half-written by an older mhgraph
    files: list[str]            # the files that hold it
    written_by: str | None      # the file its version was read from (None: not recorded)


# A write waiting on a lock when the server shuts down fails with LockClientStopped, a client error
# the driver does not retry (Neo4j 4 called it transient). Document writes (write, write_together)
# are idempotent (MERGE by id, the fingerprint written last), so one is tried again, a few times:
# the next try waits for the server with the driver's own retries. (A transaction an operator
# terminates ends the same way, and is tried again too: stop the ingest itself to stop its writes.
# The short statements beside them, touch and remove, are not retried this way.)
LOCK_CLIENT_STOPPED = "Neo.ClientError.Transaction.LockClientStopped"
STOPPED_RETRIES = 3


def execute_write_retrying(session: Session, work, *args):
    """`session.execute_write(work, *args)`, tried again when the server stopped its lock client."""
    retries = 0
    while True:
        try:
            return session.execute_write(work, *args)
        except ClientError as exc:
            retries += 1
            if exc.code != LOCK_CLIENT_STOPPED or retries > STOPPED_RETRIES:
                raise
            time.sleep(1.0)


class GraphWriter:
    """Writes the documents of one corpus, one transaction per document (`write_together`: per
    batch): a new version replaces the stored one (chunks, claims, names and sources only it used)
    in the same transaction, so a crash leaves the old version or the new one, never parts of both."""

    def __init__(self, driver: Driver, database: str | None, corpus: str, embedding_model: str, chunk_size: int,
                 chunk_overlap: int, embed_header: str = "none", file: str = "") -> None:
        self.driver = driver
        self.database = database
        self.corpus = corpus
        self.file = file
        self.label = corpus_chunk_label(corpus)
        self.chunking = {"embedding_model": embedding_model, "chunk_size": chunk_size, "chunk_overlap": chunk_overlap,
                         "embed_header": embed_header}

    def open_corpus(self, key_rule: str) -> None:
        """Create the Corpus node (or record one more file ingested into it), and give documents
        stored before documents had keys theirs. A corpus keeps the key rule it was made with."""
        records, _, _ = self.driver.execute_query(cypher.load("ingest/corpus_key"), corpus=self.corpus,
                                                  database_=self.database)
        stored = records[0]["document_key"] if records else None
        if stored is not None and stored != key_rule:   # refused before the corpus records anything
            raise MhgraphError(f"corpus '{self.corpus}' keys its documents by {stored}, not {key_rule}: pass --key "
                               f"{stored} (or delete the corpus and ingest it again to key it otherwise)")
        self.driver.execute_query(
            cypher.load("ingest/merge_corpus"), name=self.corpus, file=self.file, document_key=key_rule,
            chunk_size=self.chunking["chunk_size"], chunk_overlap=self.chunking["chunk_overlap"],
            database_=self.database)
        # documents stored before keys: keyed from a stored text property the rule names
        field = "url" if key_rule == "auto" else key_rule if key_rule in LEGACY_KEY_FIELDS else ""
        keyed = self.driver.execute_query(cypher.load("documents/set_keys"), corpus=self.corpus, field=field,
                                          fallback=key_rule == "auto", database_=self.database).records[0]
        if keyed["unkeyed"]:
            raise MhgraphError(f"{keyed['unkeyed']} documents of corpus '{self.corpus}' were stored before documents "
                               f"had keys and have no {key_rule} stored to key them by: delete the corpus and ingest "
                               "it again (or ingest with --key auto)")

    def stored(self, keys: Iterable[str]) -> dict[str, list[StoredVersion]]:
        """key -> the stored documents (versions) with that key."""
        records, _, _ = self.driver.execute_query(cypher.load("documents/by_keys"), corpus=self.corpus,
                                                  keys=list(keys), database_=self.database)
        found: dict[str, list[StoredVersion]] = {}
        for r in records:
            found.setdefault(r["key"], []).append(StoredVersion(r["id"], r["fingerprint"], r["files"],
                                                                r["written_by"]))
        return found

    def touch(self, documents: Sequence[PreparedDocument]) -> None:
        """Unchanged documents now belong to this file (and get their version if they had none)."""
        if documents:
            self.driver.execute_query(cypher.load("ingest/touch_unchanged"), file=self.file,
                                      documents=[{"id": d.id, "version": d.version} for d in documents],
                                      database_=self.database)

    def counts(self) -> dict[str, int]:
        records, _, _ = self.driver.execute_query(cypher.load("ingest/graph_counts"), corpus=self.corpus,
                                                  database_=self.database)
        return dict(records[0])

    def write(self, batch: Sequence[PreparedDocument]) -> Removal:
        """Write each document in its own transaction, replacing its stored versions
        (`PreparedDocument.replaces`); returns what the replaced versions took away."""
        removal = Removal()
        with self.driver.session(database=self.database,
                                 bookmark_manager=self.driver.execute_query_bookmark_manager) as session:
            for doc in batch:
                removal.add(execute_write_retrying(session, self._write_document, doc))
        return removal

    def remove(self, documents: Sequence[tuple[str, str, list[str]]]) -> Removal:
        """Documents ([(id, key, files)]) this file no longer holds: removed, one transaction each,
        unless another file still holds them (then only this file lets go of them)."""
        return release_file(self.driver, self.database, self.corpus, self.file, list(documents))

    def write_together(self, batch: Sequence[PreparedDocument]) -> Removal:
        """Write the whole batch in one transaction (the Ray engine's parallel writers: fewer,
        larger commits); a crash leaves every document of the batch old or every one new."""
        if not batch:
            return Removal()
        with self.driver.session(database=self.database,
                                 bookmark_manager=self.driver.execute_query_bookmark_manager) as session:
            return execute_write_retrying(session, self._write_documents, list(batch))

    def _write_document(self, tx: ManagedTransaction, doc: PreparedDocument) -> Removal:
        return self._write_documents(tx, [doc])

    def _write_documents(self, tx: ManagedTransaction, docs: list[PreparedDocument]) -> Removal:
        removal = remove_documents(tx, [old for doc in docs for old in doc.replaces])
        revision = next_revision(tx, self.corpus)
        documents, chunks, links = [], [], []
        for doc in docs:
            a = doc.article
            documents.append({"id": doc.id, "key": doc.key, "version": doc.version, "title": a.title, "url": a.url,
                              "author": a.author, "category": a.category, "published_at": a.published_at,
                              "source": a.source, "fingerprint": doc.fingerprint, "files": doc.files or [self.file]})
            assert doc.embeddings is not None and len(doc.embeddings) == len(doc.chunks)
            chunks += [{"id": chunk_id, "document_id": doc.id, "index": span.index, "text": span.text,
                        "embedding": [float(x) for x in vector], "source": a.source, "published_at": a.published_at,
                        "token_count": span.token_count, "start_char": span.start_char, "end_char": span.end_char}
                       for span, chunk_id, vector in zip(doc.chunks, doc.chunk_ids, doc.embeddings)]
            links += [{"from": x, "to": y} for x, y in zip(doc.chunk_ids, doc.chunk_ids[1:])]
        tx.run(cypher.load("ingest/merge_documents"), documents=documents, corpus=self.corpus, file=self.file,
               revision=revision, **self.chunking).consume()
        tx.run(cypher.load("ingest/merge_chunks"), chunks=chunks, corpus=self.corpus, label=self.label).consume()
        tx.run(cypher.load("ingest/link_next_chunks"), links=links).consume()
        return removal
