"""Named corpora in one graph: list them, pick the one a command works on, delete one.

Neo4j Community has one user database, so every ingested corpus shares it. Each Document and
Chunk carries its corpus name (`corpus`, also a filter property of the vector index), and a
(:Corpus {name, files})<-[:IN_CORPUS]-(:Document) node records it. Retrieval and evaluation
always work on exactly one corpus (`resolve_corpus`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import neo4j
from neo4j import Driver

from mhgraph import cypher
from mhgraph.errors import MhgraphError, NotFoundError
from mhgraph.graph.schema import drop_corpus_fulltext

UNNAMED = "(unnamed)"   # how Documents stored before corpora had names are shown


@dataclass(frozen=True)
class CorpusInfo:
    name: str | None        # None: Documents stored before corpora had names
    documents: int
    chunks: int
    sources: int
    files: tuple[str, ...]
    embedding_models: tuple[str, ...]
    updated_at: datetime | None
    embed_headers: tuple[str, ...] = ()     # the metadata embedded above its chunks (ingest's embed_header)

    @property
    def label(self) -> str:
        return self.name or UNNAMED


def list_corpora(driver: Driver, database: str | None) -> list[CorpusInfo]:
    records, _, _ = driver.execute_query(cypher.load("corpora/list"), database_=database,
                                         routing_=neo4j.RoutingControl.READ)
    return [CorpusInfo(r["name"], r["documents"], r["chunks"], r["sources"], tuple(r["files"] or ()),
                       tuple(r["embedding_models"]), r["updated_at"].to_native() if r["updated_at"] else None,
                       tuple(r["embed_headers"]))
            for r in records]


def resolve_corpus(driver: Driver, database: str | None, name: str | None) -> str:
    """The corpus to search: `name` if the graph has it, else the graph's only corpus."""
    records, _, _ = driver.execute_query(cypher.load("corpora/names"), database_=database,
                                         routing_=neo4j.RoutingControl.READ)
    names, unnamed = records[0]["names"], records[0]["unnamed"]
    if name is not None:
        if name not in names:
            known = ", ".join(names) or "none"
            raise NotFoundError(f"no corpus '{name}' in the graph (corpora: {known}; see 'mhgraph corpora')")
        return name
    if unnamed:
        raise MhgraphError("the graph holds documents ingested before corpora had names: re-ingest their file, "
                           "then remove them with 'mhgraph corpora delete --unnamed'")
    if not names:
        raise MhgraphError("the graph holds no corpus: run 'mhgraph ingest' first")
    if len(names) > 1:
        raise MhgraphError(f"the graph holds {len(names)} corpora ({', '.join(names)}): "
                           "choose one with --corpus NAME (or MHGRAPH_CORPUS)")
    return names[0]


def delete_corpus(driver: Driver, database: str | None, name: str | None) -> list[str]:
    """Delete corpus `name` (None: the unnamed Documents), its Sources used by no other corpus and
    its evaluation runs; returns the ids of the runs deleted. Other corpora are untouched."""
    records, _, _ = driver.execute_query(cypher.load("corpora/runs"), name=name, database_=database)
    runs = [r["id"] for r in records]
    for run in runs:  # before the chunks, so its Questions go too
        driver.execute_query(cypher.load("eval/delete_run"), run=run, database_=database)
    driver.execute_query(cypher.load("eval/delete_retired"), database_=database)
    # IN TRANSACTIONS needs auto-commit transactions; the bookmark manager orders them after the writes above
    with driver.session(database=database, bookmark_manager=driver.execute_query_bookmark_manager) as session:
        for statement in cypher.load_statements("corpora/delete"):
            session.run(statement, key=name or "").consume()
    if name is not None:
        drop_corpus_fulltext(driver, database, name)
    return runs
