"""Prepare a reranker for a corpus ahead of its questions (`mhgraph reranker prepare`): a reranker
that keeps what it computes of each passage (the sentence reranker: every chunk's sentences and
their vectors) computes it for every chunk once, as ingest embeds the chunks, so that no question
pays for it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import neo4j
from tqdm import tqdm

from mhgraph import cypher
from mhgraph.config import Settings
from mhgraph.errors import MhgraphError
from mhgraph.graph.connection import connect
from mhgraph.graph.context import GraphContext
from mhgraph.rerank.combined import combined_parts
from mhgraph.rerank.models import load_reranker
from mhgraph.rerank.sentence_store import passage_key
from mhgraph.rerank.sentence_windows import SENTENCES


@dataclass
class RerankerPreparation:
    reranker: str
    corpus: str
    chunks: int                  # the corpus's chunks read
    prepared: int                # the distinct texts computed now (a text stored already, or met twice, once)
    seconds: float
    store: Path
    pruned: int | None = None    # --prune: the stored passages no chunk of the graph holds, deleted
    store_bytes: int = 0         # the store's size on disk afterwards

    def lines(self) -> list[str]:
        lines = [(f"reranker {self.reranker}, corpus '{self.corpus}': {self.chunks} chunks read, {self.prepared} "
                  f"texts prepared now (a text stored already or repeated is not prepared again) in "
                  f"{self.seconds:.0f} s"),
                 f"  store   {self.store}"]
        if self.pruned is not None:
            lines.append(f"  pruned  {self.pruned} stored passages no chunk of the graph holds "
                         f"(the store: {self.store_bytes / 2**20:.1f} MB)")
        return lines


def prepare_reranker(settings: Settings, spec: str, *, batch_size: int = 256, progress: bool = True,
                     prune: bool = False) -> list[RerankerPreparation]:
    """Compute and store what reranker `spec` keeps of each chunk of settings.corpus (or the
    graph's only corpus), `batch_size` chunks at a time; chunks stored already are skipped, so a
    stopped run resumes. Of a combination (`A+B`), each part that keeps something is prepared (the
    others are not loaded). `prune`: then delete from each store every passage that no chunk of
    any corpus in the graph holds (what documents updated or deleted left behind)."""
    keeping = [part for part in combined_parts(spec) or [spec] if part.startswith(SENTENCES)]
    if not keeping:                       # refused before any model loads
        raise MhgraphError(f"reranker '{spec}' keeps nothing of a passage between questions: there is nothing to "
                           f"prepare (the sentence reranker, {SENTENCES}MODEL, has)")
    rerankers = [load_reranker(part, settings.cache_dir) for part in keeping]
    for reranker in rerankers:
        if reranker.store is None:
            reranker.prepare([])          # the one-line error: why there is no store
    started = time.perf_counter()
    read, prepared = 0, [0] * len(rerankers)
    pruned: list[int | None] = [None] * len(rerankers)
    held: set[bytes] = set()             # prune: the keys of every chunk the graph holds
    with connect(settings) as driver:
        graph = GraphContext.open(driver, settings.neo4j_database, settings.corpus)
        total = driver.execute_query(cypher.load("rerank/chunk_count"), corpus=graph.corpus, database_=graph.database,
                                     routing_=neo4j.RoutingControl.READ).records[0]["chunks"]
        names = ", ".join(r.name for r in rerankers)
        with tqdm(total=total, desc=f"prepare {names}", unit="chunk", disable=not progress) as bar:
            for texts in _chunk_texts(driver, graph.database, graph.corpus, batch_size):
                for i, reranker in enumerate(rerankers):
                    prepared[i] += reranker.prepare(texts)
                if prune:
                    held.update(map(passage_key, texts))
                read += len(texts)
                bar.update(len(texts))
        if prune:   # this corpus's chunks were read above; the others' now
            corpora = driver.execute_query(cypher.load("corpora/all_names"), database_=graph.database,
                                           routing_=neo4j.RoutingControl.READ).records[0]["names"]
            held.update(passage_key(text) for corpus in corpora if corpus != graph.corpus
                        for texts in _chunk_texts(driver, graph.database, corpus, batch_size) for text in texts)
            pruned = [reranker.store.keep_only(held) for reranker in rerankers]
    seconds = time.perf_counter() - started
    sizes = [reranker.store.size() for reranker in rerankers]
    for reranker in rerankers:
        reranker.store.close()
    return [RerankerPreparation(r.name, graph.corpus, read, n, seconds, r.store.path, gone, size)
            for r, n, gone, size in zip(rerankers, prepared, pruned, sizes)]


def _chunk_texts(driver: neo4j.Driver, database: str | None, corpus: str, batch_size: int) -> Iterator[list[str]]:
    """Corpus `corpus`'s chunk texts, `batch_size` at a time, in chunk id order."""
    after = ""
    while True:
        page = driver.execute_query(cypher.load("rerank/chunk_texts"), corpus=corpus, after=after, limit=batch_size,
                                    database_=database, routing_=neo4j.RoutingControl.READ).records
        if not page:
            return
        yield [r["text"] or "" for r in page]
        after = page[-1]["id"]
