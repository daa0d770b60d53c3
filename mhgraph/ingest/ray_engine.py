"""`mhgraph ingest --engine ray`: the ingest pipeline as a Ray Data job.

    files --read (a task per file, streamed)--> articles
          --chunk, check against the graph, embed (an actor pool: one model per actor,
            a GPU each when the cluster has them; on GPUs, chunking and the check run in
            CPU actors of their own before it)--> documents with their vectors
          --write (parallel writer actors, one UNWIND transaction per batch)--> Neo4j
          --> one outcome per article, tallied here under one progress bar

Every file is checked whole first, on this machine, so a bad record in any file stops the job
before anything is written (one line naming the file and line). Writes are idempotent by content
hash: a document's id hashes its corpus and article, a chunk's its document and span, and every
write MERGEs on them, so a task Ray runs again after a worker died writes nothing twice; each
batch's transaction is all or nothing. The graph equals the local engine's except for the corpus
revision each document records (one per batch here, one per document there).
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from neo4j.exceptions import Neo4jError
from tqdm import tqdm

from mhgraph.config import Settings
from mhgraph.embeddings import TextEmbedder, load_embedder
from mhgraph.engine.ray_cluster import import_ray, ray_cluster, worker_settings
from mhgraph.graph.capabilities import detect
from mhgraph.graph.connection import connect
from mhgraph.graph.documents import Removal, documents_of_file
from mhgraph.graph.schema import (
    ensure_fulltext_indexes,
    ensure_schema,
    rebuild_corpus_fulltext,
)
from mhgraph.ingest.chunking import TokenChunker
from mhgraph.ingest.corpus import CorpusFile, Format, article_key, open_corpus
from mhgraph.ingest.memory import release_free_memory
from mhgraph.ingest.pipeline import (
    IngestSummary,
    Tally,
    against_stored,
    batched,
    check_files,
    document_id,
    embed_prepared,
    prepare,
    resolve_corpus_name,
)
from mhgraph.ingest.writer import GraphWriter, PreparedDocument

# A writer waits this long for a Neo4j that went away (a restart) before its task fails.
NEO4J_RETRY_SECONDS = 300.0
# The CPUs asked for by each light stage (reading, writing), so they fit beside the embedders.
LIGHT_CPUS = 0.1
# Chunking actors per embedding actor when chunking runs apart: one CPU core chunked about 1,400
# chunks/s and one GPU embedded 1,409 to 1,856 in fp32 (bench/results/gpu-embed.md).
CHUNKERS_PER_WORKER = 2

# An article's outcome: written now, stored identically already, no token to embed, or a second
# copy of an article in the same batch (stored once).
WRITE, UNCHANGED, EMPTY, DUPLICATE = "write", "unchanged", "empty", "duplicate"


@dataclass(frozen=True)
class RayIngestOptions:
    address: str | None = None      # Ray's address (None: RAY_ADDRESS, else a Ray started here)
    workers: int | None = None      # embedding actors (None: one per GPU of the cluster, else 1)
    writers: int = 2                # writer actors
    batch_size: int = 32            # articles per embedding batch and per write transaction
    # Chunking (with the check against the graph) in CPU actors of its own (None: when the
    # embedding actors have GPUs). On one GPU, chunking on the actor's CPU took as long as
    # embedding (bench/gpu_embed.py), so the GPU would wait half the time; on CPUs it is about 1 %
    # of the work, and an actor of its own would only hold a second copy of the model.
    chunk_apart: bool | None = None


def read_files(batch: dict[str, Any], *, key_rule: str, batch_size: int) -> Iterator[dict[str, list]]:
    """Ray Data stage: the articles of each file, a batch at a time, as it reads (never a whole file)."""
    for path, fmt in zip(batch["file"], batch["format"]):
        corpus = CorpusFile(Path(path), fmt, key_rule)
        for articles in batched(corpus.articles(), batch_size):
            yield {"file": [str(path)] * len(articles), "article": [pickle.dumps(a) for a in articles]}


class ChunkStage:
    """Ray Data stage (one per actor): chunk a batch of articles with the model's tokenizer and
    leave out those stored identically; one row per article, the documents still without vectors.
    Apart from the embedding actors only when those have GPUs (see `RayIngestOptions.chunk_apart`);
    else `EmbedStage` chunks too."""

    def __init__(self, settings: Settings, threads: int, embedder: TextEmbedder | None = None) -> None:
        _limit_threads(threads)
        self.settings = settings
        # the tokenizer comes with the model: the chunks must be counted as the local engine counts them
        self.embedder = embedder or load_embedder(settings.embedding_model, settings.cache_dir, device="cpu")
        self.chunker = TokenChunker(self.embedder.tokenizer, settings.chunk_size, settings.chunk_overlap)
        self.driver = connect(settings, retry_seconds=NEO4J_RETRY_SECONDS)
        self.lookup = GraphWriter(self.driver, settings.neo4j_database, settings.corpus or "",
                                  self.embedder.model_name, settings.chunk_size, settings.chunk_overlap,
                                  settings.embed_header)

    def __call__(self, batch: dict[str, Any]) -> dict[str, list]:
        rows, documents = self.chunk(batch)
        for i, doc in documents.items():
            rows["document"][i] = pickle.dumps(doc, protocol=5)
        return rows

    def chunk(self, batch: dict[str, Any]) -> tuple[dict[str, list], dict[int, PreparedDocument]]:
        """The batch's rows (documents left empty), and the document of each row that has one."""
        s = self.settings
        corpus = s.corpus or ""
        rows: dict[str, list] = defaultdict(list)
        kept: dict[int, PreparedDocument] = {}
        groups: dict[str, list] = defaultdict(list)
        for file, blob in zip(batch["file"], batch["article"]):
            groups[str(file)].append(pickle.loads(blob))
        for file, articles in groups.items():
            documents = {d.id: d for d in prepare(articles, corpus, self.chunker, self.embedder.model_name, Tally(),
                                                   s.embed_header, s.document_key)}
            todo, _ = against_stored(list(documents.values()), self.lookup.stored(d.key for d in documents.values()),
                                     file)
            to_write = {d.id for d in todo}
            seen: set[str] = set()
            for article in articles:
                doc_id = document_id(corpus, article)
                doc = documents.get(doc_id)
                status = DUPLICATE if doc_id in seen else EMPTY if doc is None else \
                    WRITE if doc_id in to_write else UNCHANGED
                seen.add(doc_id)
                if doc is not None and status in (WRITE, UNCHANGED):
                    kept[len(rows["id"])] = doc
                _add_row(rows, file=file, id=doc_id, key=article_key(article, s.document_key) or "", status=status,
                         source=article.source or "", chunks=len(doc.chunks) if doc else 0,
                         model=self.embedder.model_name, embed_seconds=0.0, document=b"")
        return dict(rows), kept


class EmbedStage:
    """Ray Data stage (one per actor): embed the documents a batch writes; one row per article.
    With `chunk`, the batch is articles, chunked and checked against the graph here first
    (`ChunkStage`'s work); else it is `ChunkStage`'s rows."""

    def __init__(self, settings: Settings, threads: int, device: str | None, chunk: bool = True) -> None:
        _limit_threads(threads)
        self.settings = settings
        self.embedder = load_embedder(settings.embedding_model, settings.cache_dir, device=device)
        self.chunker = ChunkStage(settings, threads, self.embedder) if chunk else None
        self.driver = self.chunker.driver if self.chunker else connect(settings, retry_seconds=NEO4J_RETRY_SECONDS)
        database = settings.neo4j_database
        # the vector index needs the model's dimensions, known here: every actor ensures it (idempotent)
        _retried(lambda: ensure_schema(self.driver, database, self.embedder.dimensions,
                                       detect(self.driver, database), settings.vector_quantization))

    def __call__(self, batch: dict[str, Any]) -> dict[str, list]:
        if self.chunker is not None:
            rows, documents = self.chunker.chunk(batch)
        else:   # ChunkStage's rows: only the documents to write are opened (and pickled again)
            rows = {k: list(v) for k, v in batch.items()}
            documents = {i: pickle.loads(rows["document"][i]) for i, status in enumerate(rows["status"])
                         if status == WRITE}
        t0 = time.perf_counter()
        todo = [doc for i, doc in documents.items() if rows["status"][i] == WRITE]
        if todo:
            embed_prepared(self.embedder, todo, self.settings.embed_header)
        for i, doc in documents.items():
            rows["document"][i] = pickle.dumps(doc, protocol=5)
        if rows["embed_seconds"]:   # the batch's time rides on its first row
            rows["embed_seconds"][0] = time.perf_counter() - t0
        release_free_memory()
        return rows


class WriteStage:
    """Ray Data stage (one per actor): write a batch's documents in one transaction per file,
    record the unchanged ones as this file's; one row per article, with what the batch removed."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.driver = connect(settings, retry_seconds=NEO4J_RETRY_SECONDS)
        self.writers: dict[tuple[str, str], GraphWriter] = {}

    def writer(self, file: str, model: str) -> GraphWriter:
        s = self.settings
        if (file, model) not in self.writers:
            self.writers[file, model] = GraphWriter(self.driver, s.neo4j_database, s.corpus or "", model,
                                                    s.chunk_size, s.chunk_overlap, s.embed_header, file)
        return self.writers[file, model]

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        t0 = time.perf_counter()
        written: dict[tuple[str, str], list[PreparedDocument]] = defaultdict(list)
        unchanged: dict[tuple[str, str], list[PreparedDocument]] = defaultdict(list)
        for file, model, status, blob in zip(batch["file"], batch["model"], batch["status"], batch["document"]):
            if status in (WRITE, UNCHANGED):
                (written if status == WRITE else unchanged)[str(file), str(model)].append(pickle.loads(blob))
        removal = Removal()
        for (file, model), documents in written.items():
            removal.add(self.writer(file, model).write_together(documents))
        for (file, model), documents in unchanged.items():
            self.writer(file, model).touch(documents)
        n = len(batch["id"])
        out = {k: batch[k] for k in ("file", "id", "key", "status", "source", "chunks", "model", "embed_seconds")}
        # a replaced version's files and writer travel in the document; the tally wants them apart
        out["replaced"] = [0] * n
        out["written_by_others"] = [""] * n
        for i, (status, blob) in enumerate(zip(batch["status"], batch["document"])):
            if status == WRITE:
                doc = pickle.loads(blob)
                out["replaced"][i] = int(bool(doc.replaces))
                out["written_by_others"][i] = json.dumps(doc.written_by_others)
        first = [1] + [0] * (n - 1)   # the batch's removal and time ride on its first row
        out["removal"] = [json.dumps(dataclasses.asdict(removal) | {"stale_runs": sorted(removal.stale_runs)})
                          if f else "" for f in first]
        out["write_seconds"] = [(time.perf_counter() - t0) * f for f in first]
        return out


def ingest_on_ray(
    paths: Sequence[Path | str],
    settings: Settings,
    driver: Any,
    *,
    fmt: Format | None = None,
    options: RayIngestOptions = RayIngestOptions(),
    progress: bool = True,
    on_progress: Callable[[int, int], None] | None = None,
) -> IngestSummary:
    """Ingest the corpus files `paths` into one corpus as a Ray Data job (see the module docstring)."""
    started = time.perf_counter()
    files = [open_corpus(p, fmt, settings.document_key) for p in paths]
    articles, empty = check_files(files, ordered=False)   # a bad record in any file stops the job here: nothing written
    if on_progress is not None:
        on_progress(0, articles)
    name = resolve_corpus_name(settings, paths[0], driver)
    database = settings.neo4j_database
    shared = worker_settings(settings, name)
    ray = import_ray()
    tally = Tally()
    keys: dict[str, set[str]] = defaultdict(set)    # per file: every key it holds now
    ids: set[str] = set()
    removal = Removal()
    seconds = {"embed": 0.0, "write": 0.0}
    model = ""
    with ray_cluster(options.address) as cluster, \
            tqdm(total=articles, desc="ingest (ray)", unit="doc", disable=not progress) as bar:
        workers = options.workers or max(1, int(cluster.gpus))
        gpu = cluster.gpus >= workers
        apart = gpu if options.chunk_apart is None else options.chunk_apart
        chunkers = CHUNKERS_PER_WORKER * workers if apart else 0
        if apart and gpu:   # a whole CPU each, beside each embedder's one and the light stages' shares
            chunkers = min(chunkers, int(cluster.cpus - workers - LIGHT_CPUS * (1 + options.writers)))
            apart = chunkers >= 1   # no CPU to spare: the embedders chunk, as on CPUs
        cpus = 1.0 if gpu else cluster.cpus_per_worker(workers, reserved=LIGHT_CPUS * (1 + options.writers + chunkers))
        for f in files:   # the first writes, once the cluster is joined
            GraphWriter(driver, database, name, settings.embedding_model, settings.chunk_size,
                        settings.chunk_overlap, settings.embed_header, str(f.path.resolve())).open_corpus(f.key)
        ensure_fulltext_indexes(driver, database, name)
        items = [{"file": str(f.path.resolve()), "format": f.format} for f in files]
        data = ray.data.from_items(items, override_num_blocks=len(items))
        data = data.map_batches(read_files, batch_size=1, num_cpus=LIGHT_CPUS,
                                fn_kwargs={"key_rule": files[0].key, "batch_size": options.batch_size})
        # Ray Data restarts a dead actor and runs its task again (max_restarts, max_task_retries: -1)
        if apart:   # as many chunking actors as keep the embedders fed (each a whole CPU on GPU clusters)
            data = data.map_batches(ChunkStage, batch_size=options.batch_size, num_cpus=1 if gpu else LIGHT_CPUS,
                                    compute=ray.data.ActorPoolStrategy(min_size=1, max_size=chunkers),
                                    fn_constructor_kwargs={"settings": shared, "threads": 1})
        data = data.map_batches(EmbedStage, batch_size=options.batch_size,
                                compute=ray.data.ActorPoolStrategy(size=workers), num_cpus=cpus,
                                num_gpus=1 if gpu else 0, fn_constructor_kwargs={
                                    "settings": shared, "threads": max(1, round(cpus)),
                                    "device": "cuda" if gpu else None, "chunk": not apart})
        data = data.map_batches(WriteStage, batch_size=options.batch_size,
                                compute=ray.data.ActorPoolStrategy(min_size=1, max_size=options.writers),
                                num_cpus=LIGHT_CPUS, fn_constructor_kwargs={"settings": shared})
        done = 0
        empties: set[str] = set()
        for rows in data.iter_batches(batch_size=None, batch_format="numpy"):
            for i in range(len(rows["id"])):
                file, doc_id, status = str(rows["file"][i]), str(rows["id"][i]), str(rows["status"][i])
                model = str(rows["model"][i])
                if rows["key"][i]:
                    keys[file].add(str(rows["key"][i]))
                if status == EMPTY and doc_id not in empties:
                    empties.add(doc_id)
                    tally.tokenless += 1
                elif status in (WRITE, UNCHANGED) and doc_id not in ids:
                    ids.add(doc_id)
                    tally.documents += 1
                    tally.chunks += int(rows["chunks"][i])
                    if rows["source"][i]:
                        tally.sources.add(str(rows["source"][i]))
                    if status == WRITE:
                        tally.written_ids.append(doc_id)
                        tally.written_chunks += int(rows["chunks"][i])
                        tally.count_written(str(rows["key"][i]), bool(rows["replaced"][i]),
                                            json.loads(str(rows["written_by_others"][i]) or "[]"))
                if rows["removal"][i]:
                    removal.add(_removal(json.loads(str(rows["removal"][i]))))
                seconds["embed"] += float(rows["embed_seconds"][i])
                seconds["write"] += float(rows["write_seconds"][i])
            done += len(rows["id"])
            bar.update(len(rows["id"]))
            bar.set_postfix(chunks=tally.written_chunks, refresh=False)
            if on_progress is not None:
                on_progress(done, articles)
        placement = (f"ray: {workers} embedding workers on {cluster.nodes} nodes "
                     f"({f'{workers} GPUs' if gpu else f'{cpus:.1f} CPUs each'}), "
                     + (f"chunking in up to {chunkers} actors of its own, " if apart else "")
                     + f"{options.writers} writers")

    tally.warn_foreign(", ".join(str(p) for p in paths))
    gone_total = 0
    for f in files:   # documents a file held at an earlier ingest and holds no more
        file = str(f.path.resolve())
        gone = documents_of_file(driver, database, name, file, keep=sorted(keys[file]))
        gone_total += len(gone)
        t0 = time.perf_counter()
        removal.add(GraphWriter(driver, database, name, model, settings.chunk_size, settings.chunk_overlap,
                                settings.embed_header, file).remove(gone))
        seconds["write"] += time.perf_counter() - t0
    # a write Ray ran again after it had committed removes nothing the second time: its replaced
    # versions count too
    reindex = rebuild_corpus_fulltext(driver, database, name) if removal.chunks or tally.replaced or gone_total \
        else 0.0
    counts_now = GraphWriter(driver, database, name, model, settings.chunk_size, settings.chunk_overlap).counts()
    return IngestSummary(
        path=", ".join(str(p) for p in paths), format=", ".join(sorted({f.format for f in files})), corpus=name,
        documents=tally.documents, chunks=tally.chunks, sources=len(tally.sources),
        skipped_empty=empty + tally.tokenless, written=len(tally.written_ids), written_chunks=tally.written_chunks,
        unchanged=tally.documents - len(tally.written_ids), seconds=time.perf_counter() - started,
        model_load_seconds=0.0, embed_seconds=seconds["embed"], write_seconds=seconds["write"],
        model=model or settings.embedding_model, embed_header=settings.embed_header,
        graph=counts_now, document_key=files[0].key, replaced=tally.replaced, removed=gone_total, removal=removal,
        reindex_seconds=reindex, written_ids=tally.written_ids, engine=placement,
    )


def _add_row(rows: dict[str, list], **values: Any) -> None:
    for k, v in values.items():
        rows[k].append(v)


def _removal(fields: dict[str, Any]) -> Removal:
    return Removal(**{**fields, "stale_runs": set(fields["stale_runs"])})


def _limit_threads(threads: int) -> None:
    """An embedding actor computes on its share of the CPUs only."""
    import torch

    torch.set_num_threads(threads)


def _retried(action: Callable[[], None], attempts: int = 5) -> None:
    """Schema statements from several actors at once may collide: a second try finds them made."""
    for attempt in range(attempts):
        try:
            action()
            return
        except Neo4jError:
            if attempt == attempts - 1:
                raise
            time.sleep(1.0 + attempt)
