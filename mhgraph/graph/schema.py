"""The constraints and indexes of the lexical graph: create them, and check what retrieval needs."""

from __future__ import annotations

import time

import neo4j
from neo4j import Driver
from neo4j_graphrag.indexes import create_vector_index

from mhgraph import cypher
from mhgraph.config import VECTOR_QUANTIZATIONS, check_corpus_name
from mhgraph.errors import MhgraphError
from mhgraph.graph.capabilities import Capabilities

VECTOR_INDEX = "chunk_embedding"
# One fulltext index per corpus, over the corpus's own Chunk label: BM25's term statistics are the
# corpus's alone. LEGACY_FULLTEXT_INDEX covered every corpus's chunks (mhgraph before 0.x); the
# first ingest that finds it gives every corpus its own index, then drops it.
FULLTEXT_PREFIX = "chunk_text_"
CHUNK_LABEL_PREFIX = "Chunk_"
LEGACY_FULLTEXT_INDEX = "chunk_text"
# What the vector index holds where the server has filter properties: the embedding, then the
# properties retrieval filters on inside the index (vector_index_filtered.cypher).
VECTOR_INDEX_PROPERTIES = ["embedding", "source", "published_at", "corpus"]


def corpus_chunk_label(corpus: str) -> str:
    """The label every Chunk of `corpus` carries besides Chunk (a validated corpus name: safe to quote)."""
    return CHUNK_LABEL_PREFIX + check_corpus_name(corpus)


def fulltext_index(corpus: str) -> str:
    """The name of `corpus`'s fulltext index."""
    return FULLTEXT_PREFIX + check_corpus_name(corpus)


def ensure_corpus_fulltext(driver: Driver, database: str | None, corpus: str) -> None:
    """`corpus`'s fulltext index, its chunks labelled for it (chunks of a graph from before per-corpus
    indexes get the label here)."""
    label = corpus_chunk_label(corpus)
    # IN TRANSACTIONS needs an auto-commit transaction; the bookmark manager orders it with execute_query's
    with driver.session(database=database, bookmark_manager=driver.execute_query_bookmark_manager) as session:
        session.run(cypher.load("schema/label_corpus_chunks"), corpus=corpus, label=label).consume()
    # the label is a validated corpus name behind a fixed prefix; backticks quote its '-' and '.'
    statement = cypher.load("schema/corpus_fulltext").replace("{label}", f"`{label}`")
    driver.execute_query(statement, name=fulltext_index(corpus), database_=database)


def ensure_fulltext_indexes(driver: Driver, database: str | None, corpus: str) -> None:
    """The fulltext index of `corpus`, and of every other corpus when the graph still has the one
    shared index of older versions (then dropped); waits until they are online."""
    records, _, _ = driver.execute_query(cypher.load("schema/fulltext_indexes"), database_=database)
    existing = {r["name"] for r in records}
    names = [corpus]
    if LEGACY_FULLTEXT_INDEX in existing:
        names += driver.execute_query(cypher.load("corpora/all_names"), database_=database).records[0]["names"]
    for name in dict.fromkeys(names):
        # an index that exists has every chunk labelled: the label comes first (ensure_corpus_fulltext)
        if fulltext_index(name) not in existing:
            ensure_corpus_fulltext(driver, database, name)
    if LEGACY_FULLTEXT_INDEX in existing:
        driver.execute_query(cypher.load("schema/drop_index"), name=LEGACY_FULLTEXT_INDEX, database_=database)
    driver.execute_query(cypher.load("schema/await_indexes"), database_=database)


def drop_corpus_fulltext(driver: Driver, database: str | None, corpus: str) -> None:
    driver.execute_query(cypher.load("schema/drop_index"), name=fulltext_index(corpus), database_=database)


def rebuild_corpus_fulltext(driver: Driver, database: str | None, corpus: str) -> float:
    """Build `corpus`'s fulltext index afresh; returns the seconds it took. Lucene keeps removed
    chunks in its term statistics until its segments merge, so after documents were replaced or
    deleted BM25's scores would depend on the corpus's history (measured: Hits@4 0.645 against
    0.648 after 170 replacements); a fresh index has the statistics of the chunks there are.
    A BM25 query on this corpus meanwhile (about 2 s for 6,500 chunks) fails: not an atomic swap."""
    started = time.perf_counter()
    drop_corpus_fulltext(driver, database, corpus)
    ensure_corpus_fulltext(driver, database, corpus)
    driver.execute_query(cypher.load("schema/await_indexes"), database_=database)
    return time.perf_counter() - started


def index_info(driver: Driver, database: str | None, name: str) -> dict | None:
    records, _, _ = driver.execute_query(cypher.load("schema/index_info"), name=name, database_=database,
                                         routing_=neo4j.RoutingControl.READ)
    return records[0].data() if records else None


def require_index(driver: Driver, database: str | None, name: str) -> None:
    """Retrieval needs the index ingest creates: say so in one line if it is missing."""
    if index_info(driver, database, name) is None:
        if name.startswith(FULLTEXT_PREFIX):
            raise MhgraphError(f"the graph has no fulltext index '{name}' for corpus '{name[len(FULLTEXT_PREFIX):]}' "
                               "(made by ingest since corpora have their own): ingest any file again, unchanged "
                               "documents are skipped")
        raise MhgraphError(f"the graph has no index '{name}': run 'mhgraph ingest' first")


def corpus_embedding_model(driver: Driver, database: str | None, corpus: str, model: str | None) -> str | None:
    """The model to embed questions with: the corpus's own (`model`, when given, must be it).
    None for a corpus with no recorded model (nothing ingested yet)."""
    records, _, _ = driver.execute_query(cypher.load("schema/embedding_models"), corpus=corpus, database_=database,
                                         routing_=neo4j.RoutingControl.READ)
    models = records[0]["models"] if records else []
    if model is not None and models and model not in models:
        raise MhgraphError(f"the chunks of corpus '{corpus}' were embedded with {', '.join(models)}, not {model}: "
                           f"pass --model {models[0]} (or leave the model unset to use the corpus's own)")
    if model is None and len(models) > 1:
        raise MhgraphError(f"the chunks of corpus '{corpus}' were embedded with several models "
                           f"({', '.join(models)}): re-ingest it with one, or pass --model")
    return model or (models[0] if models else None)


def corpus_chunking(driver: Driver, database: str | None, corpus: str) -> tuple[int | None, int | None]:
    """(chunk size, overlap) in tokens the corpus was last ingested with; (None, None) if not recorded."""
    records, _, _ = driver.execute_query(cypher.load("schema/corpus_chunking"), corpus=corpus, database_=database,
                                         routing_=neo4j.RoutingControl.READ)
    return (records[0]["chunk_size"], records[0]["chunk_overlap"]) if records else (None, None)


def corpus_embed_header(driver: Driver, database: str | None, corpus: str) -> str:
    """The metadata header embedded with the corpus's chunks ("none", or several joined by ", " if mixed)."""
    records, _, _ = driver.execute_query(cypher.load("schema/embedding_models"), corpus=corpus, database_=database,
                                         routing_=neo4j.RoutingControl.READ)
    headers = records[0]["headers"] if records else []
    return ", ".join(sorted(headers)) or "none"


def create_chunk_vector_index(driver: Driver, database: str | None, dimensions: int, caps: Capabilities,
                              quantization: str) -> None:
    """The Chunk vector index; quantization applies where the server has filter properties (2026.01+)."""
    if caps.vector_filter_properties:
        # neo4j-graphrag's helper emits this form without the CYPHER 25 prefix that servers
        # defaulting to Cypher 5 need, and has no quantization option, so this one statement is ours.
        driver.execute_query(cypher.load("schema/vector_index_filtered"), name=VECTOR_INDEX, dimensions=dimensions,
                             quantization=quantization.upper(), database_=database)
    else:
        create_vector_index(driver, VECTOR_INDEX, label="Chunk", embedding_property="embedding",
                            dimensions=dimensions, similarity_fn="cosine", neo4j_database=database)


def ensure_vector_index(driver: Driver, database: str | None, dimensions: int, caps: Capabilities,
                        quantization: str) -> None:
    """Create the Chunk vector index, or rebuild it when its quantization is not the configured one
    or it lacks a filter property (an index is derived from the stored embeddings, so rebuilding
    loses nothing)."""
    if quantization not in VECTOR_QUANTIZATIONS:
        raise MhgraphError(f"vector_quantization must be one of {', '.join(VECTOR_QUANTIZATIONS)}, not {quantization!r}")
    info = index_info(driver, database, VECTOR_INDEX)
    if info is not None:
        config = info["options"]["indexConfig"]
        existing = int(config["vector.dimensions"])
        if existing != dimensions:
            raise MhgraphError(
                f"vector index '{VECTOR_INDEX}' holds {existing}-dimensional embeddings but the embedding model "
                f"gives {dimensions}: ingest into an empty database or drop the index and its chunks first"
            )
        # Only servers with filter properties (2026.01+) take a quantization type and filter
        # properties at creation; an index made by an older mhgraph may lack one of them.
        if not caps.vector_filter_properties:
            return
        current = config.get("vector.quantization.type")
        if (current is None or current.lower() == quantization) and info["properties"] == VECTOR_INDEX_PROPERTIES:
            return
        driver.execute_query(cypher.load("schema/drop_index"), name=VECTOR_INDEX, database_=database)
    create_chunk_vector_index(driver, database, dimensions, caps, quantization)


def ensure_schema(driver: Driver, database: str | None, dimensions: int, caps: Capabilities,
                  quantization: str) -> None:
    """Idempotent: constraints, range indexes, the Chunk vector index; waits until online. (Each
    corpus's fulltext index: ensure_fulltext_indexes.)"""
    for statement in cypher.load_statements("schema/constraints"):
        driver.execute_query(statement, database_=database)
    ensure_vector_index(driver, database, dimensions, caps, quantization)
    driver.execute_query(cypher.load("schema/await_indexes"), database_=database)
