"""One corpus's documents after ingest: list them, show one, remove some, count what changed.

A Document is known within its corpus by its key (its url, else its title, or the field a corpus
was ingested with: `document_key`); its content hash is its version. Removing a document removes
everything that hangs only from it, in the caller's transaction: its chunks and their claims, the
Topic / Target names and the Source no other document uses. Nodes an evaluation trace still reaches
are retired instead (labels Retired and RetiredChunk, RetiredClaim, ...: no index or method sees
them; the run keeps its results), and the runs are marked stale with the keys that changed.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping

import neo4j

from mhgraph import cypher
from mhgraph.errors import MhgraphError
from mhgraph.wording import counted

# the relationships of the lexical graph and the claim layer; any other reaching a node is a trace
STRUCTURE = ("FROM_DOCUMENT", "NEXT_CHUNK", "HAS_CLAIM", "ABOUT", "TARGETS", "SYNONYM", "IN_CORPUS", "PUBLISHED_BY")
# the Document properties, all text, a document stored before keys existed can be keyed from
LEGACY_KEY_FIELDS = ("url", "title", "author", "category")
# what a trained model records of the corpus it was trained on (corpus_facts), read by warn_if_changed
CORPUS_FACTS = ("corpus", "corpus_revision", "corpus_created")
# the labels a retired node keeps as Retired<label>
RETIRED_KINDS = ("Document", "Chunk", "Claim", "Topic", "Target", "Source")


@dataclass
class Removal:
    """What removing documents took away."""

    documents: int = 0
    chunks: int = 0
    claims: int = 0
    unused: int = 0                 # Topic / Target / Source nodes nothing else used
    retired: int = 0                # of those, kept as Retired* for evaluation traces
    kept: int = 0                   # documents a released file held that another file still holds
    stale_runs: set[str] = field(default_factory=set)

    def add(self, other: Removal) -> None:
        self.documents += other.documents
        self.chunks += other.chunks
        self.claims += other.claims
        self.unused += other.unused
        self.retired += other.retired
        self.kept += other.kept
        self.stale_runs |= other.stale_runs


def _drop(tx: neo4j.ManagedTransaction, nodes: list[str]) -> int:
    """Retire the nodes a trace reaches, delete the rest; returns how many were retired."""
    if not nodes:
        return 0
    retired = tx.run(cypher.load("documents/retire"), nodes=nodes, structure=list(STRUCTURE),
                     kinds=list(RETIRED_KINDS)).single()["retired"]
    tx.run(cypher.load("documents/delete_nodes"), nodes=nodes).consume()
    return retired


def remove_documents(tx: neo4j.ManagedTransaction, ids: list[str]) -> Removal:
    """Remove the Documents `ids` and what hangs only from them, inside transaction `tx`."""
    if not ids:
        return Removal()
    structure = list(STRUCTURE)
    stale = {r["run"]: r["keys"] for r in tx.run(cypher.load("documents/stale_runs"), ids=ids, structure=structure)}
    parts = tx.run(cypher.load("documents/parts"), ids=ids).single()
    retired = sum(_drop(tx, parts[group]) for group in ("claims", "chunks", "documents"))
    unused = tx.run(cypher.load("documents/unused"), nodes=parts["names"] + parts["sources"]).single()["nodes"]
    # a run whose walk or asked target reached a name that goes with these claims is stale too
    for r in tx.run(cypher.load("documents/stale_names"), nodes=unused, structure=structure):
        stale[r["run"]] = sorted({*stale.get(r["run"], []), *parts["keys"]})
    marked = {r["run"] for r in tx.run(cypher.load("documents/mark_stale"),
                                       marks=[{"run": run, "keys": keys} for run, keys in stale.items()])}
    retired += _drop(tx, unused)
    return Removal(documents=len(parts["documents"]), chunks=len(parts["chunks"]), claims=len(parts["claims"]),
                   unused=len(unused), retired=retired, stale_runs=marked)


def next_revision(tx: neo4j.ManagedTransaction, corpus: str) -> int:
    return tx.run(cypher.load("ingest/next_revision"), corpus=corpus).single()["revision"]


def delete_documents(driver: neo4j.Driver, database: str | None, corpus: str,
                     documents: list[tuple[str, str]]) -> Removal:
    """Delete `documents` ([(id, key)]) of `corpus`, one transaction each (a crash leaves every
    document whole or gone)."""
    total = Removal()

    def delete_one(tx: neo4j.ManagedTransaction, doc_id: str, key: str) -> Removal:
        removal = remove_documents(tx, [doc_id])
        tx.run(cypher.load("documents/record_removed"), corpus=corpus, keys=[key],
               revision=next_revision(tx, corpus)).consume()
        return removal

    with driver.session(database=database, bookmark_manager=driver.execute_query_bookmark_manager) as session:
        for doc_id, key in documents:
            total.add(session.execute_write(delete_one, doc_id, key))
    if documents:   # a file whose last document went is no longer one of the corpus's ('mhgraph corpora')
        driver.execute_query(cypher.load("corpora/drop_unheld_files"), corpus=corpus, database_=database)
    return total


def release_file(driver: neo4j.Driver, database: str | None, corpus: str, file: str,
                 documents: list[tuple[str, str, list[str]]]) -> Removal:
    """File `file` lets go of `documents` ([(id, key, files)]): those no other file holds are
    deleted, the others only leave it."""
    only = [(doc_id, key) for doc_id, key, files in documents if set(files) <= {file}]
    shared = [doc_id for doc_id, _, files in documents if not set(files) <= {file}]
    if shared:
        driver.execute_query(cypher.load("documents/drop_file"), ids=shared, file=file, database_=database)
    removal = delete_documents(driver, database, corpus, only)
    if shared and not only:   # delete_documents tidies the corpus's files only when it deleted some
        driver.execute_query(cypher.load("corpora/drop_unheld_files"), corpus=corpus, database_=database)
    removal.kept = len(shared)
    return removal


def list_documents(driver: neo4j.Driver, database: str | None, corpus: str,
                   file: str | None = None) -> list[dict[str, Any]]:
    records, _, _ = driver.execute_query(cypher.load("documents/list"), corpus=corpus, file=file,
                                         database_=database, routing_=neo4j.RoutingControl.READ)
    return [r.data() for r in records]


def show_document(driver: neo4j.Driver, database: str | None, corpus: str, key: str) -> dict[str, Any]:
    records, _, _ = driver.execute_query(cypher.load("documents/show"), corpus=corpus, key=key, database_=database,
                                         routing_=neo4j.RoutingControl.READ)
    if not records:
        raise MhgraphError(f"corpus '{corpus}' has no document with key {key!r} (see 'mhgraph documents list "
                           f"--corpus {corpus}')")
    return records[0].data()


def documents_by_key(driver: neo4j.Driver, database: str | None, corpus: str, key: str) -> list[tuple[str, str]]:
    records, _, _ = driver.execute_query(cypher.load("documents/by_keys"), corpus=corpus, keys=[key],
                                         database_=database)
    return [(r["id"], r["key"]) for r in records]


def documents_of_file(driver: neo4j.Driver, database: str | None, corpus: str, file: str,
                      keep: list[str] | None = None) -> list[tuple[str, str, list[str]]]:
    """Documents of `corpus` that `file` holds, but those with keys in `keep`: (id, key, files)."""
    records, _, _ = driver.execute_query(cypher.load("documents/by_file"), corpus=corpus, file=file, keep=keep,
                                         database_=database)
    return [(r["id"], r["key"], r["files"]) for r in records]


def corpus_facts(driver: neo4j.Driver, database: str | None, corpus: str) -> dict[str, Any]:
    """What a trained model records of the corpus it was trained on: its name, its revision now and
    when it was made (a corpus deleted and made again starts its revisions over)."""
    records, _, _ = driver.execute_query(cypher.load("documents/revision"), corpus=corpus, database_=database,
                                         routing_=neo4j.RoutingControl.READ)
    revision, created = (records[0]["revision"], records[0]["created"]) if records else (0, None)
    return {"corpus": corpus, "corpus_revision": revision, "corpus_created": created}


def warn_if_changed(driver: neo4j.Driver, database: str | None, corpus: str, model: str,
                    trained: Mapping[str, Any] | None, retrain: str | None = None) -> int:
    """A one-line warning when `model`, trained on this corpus (`trained`: the corpus_facts it
    recorded), meets it changed since; returns how many documents changed (0 for a model trained
    elsewhere or before revisions were recorded). Given `retrain` (the command that trains one on
    this corpus), a model trained on another corpus is warned about too: what it learned follows
    that corpus's questions, and elsewhere it can find less than an untrained method."""
    trained = trained or {}
    learned_on = trained.get("corpus")
    if retrain and learned_on and learned_on != corpus:
        warnings.warn(f"{model} learned from corpus '{learned_on}', not '{corpus}': on another corpus a trained "
                      f"model can find less than an untrained method; train one on this corpus's questions "
                      f"({retrain})", stacklevel=2)
        return 0
    if learned_on != corpus or trained.get("corpus_revision") is None:
        return 0
    made = trained.get("corpus_created")
    now = corpus_facts(driver, database, corpus)
    if made and now["corpus_created"] and made != now["corpus_created"]:
        # another corpus of the same name: every document it holds is new to the model
        _, changed = changes_since(driver, database, corpus, 0)
        warnings.warn(f"{model} was trained on corpus '{corpus}' as made at {made}; it was deleted and made again "
                      f"at {now['corpus_created']} ({counted(changed, 'document')}): retrain it for the corpus as "
                      "it is",
                      stacklevel=2)
        return changed
    trained_revision = int(trained["corpus_revision"])
    revision, changed = changes_since(driver, database, corpus, trained_revision)
    if changed:
        warnings.warn(f"{model} was trained on corpus '{corpus}' at revision {trained_revision}; "
                      f"{counted(changed, 'document')} {'was' if changed == 1 else 'were'} added, replaced or "
                      f"deleted since (revision {revision}): retrain it for the corpus as it is",
                      stacklevel=2)
    return changed


def changes_since(driver: neo4j.Driver, database: str | None, corpus: str, revision: int) -> tuple[int, int]:
    """(the corpus's revision now, how many documents were written or removed after `revision`)."""
    records, _, _ = driver.execute_query(cypher.load("documents/changes"), corpus=corpus, revision=revision,
                                         database_=database, routing_=neo4j.RoutingControl.READ)
    if not records:
        return 0, 0
    return records[0]["revision"], records[0]["changed"]
