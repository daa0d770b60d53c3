"""`mhgraph ingest`: parse -> chunk -> embed -> write, with progress bars and a closing summary."""

from __future__ import annotations

import hashlib
import re
import time
import warnings
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Iterable, Iterator

from neo4j import Driver
from tqdm import tqdm

from mhgraph import cypher
from mhgraph.config import Settings
from mhgraph.embeddings import TextEmbedder, load_embedder
from mhgraph.errors import InputError, MhgraphError
from mhgraph.graph.capabilities import detect
from mhgraph.graph.schema import ensure_schema
from mhgraph.ingest.chunking import TokenChunker
from mhgraph.ingest.corpus import Article, Format, open_corpus
from mhgraph.ingest.header import text_to_embed
from mhgraph.ingest.memory import release_free_memory
from mhgraph.ingest.writer import GraphWriter, PreparedDocument


@dataclass(frozen=True)
class IngestSummary:
    path: str
    format: str
    corpus: str             # the corpus name the documents were stored under
    documents: int          # articles in the file (not counting empty ones)
    chunks: int             # chunks of those articles
    sources: int            # distinct sources among them
    skipped_empty: int      # empty passages / bodies, skipped
    written: int            # documents written now
    written_chunks: int     # their chunks (embedded and written now)
    unchanged: int          # documents already stored identically, left as they were
    seconds: float          # parse, chunk, embed and write (model loading apart)
    model_load_seconds: float
    embed_seconds: float    # of `seconds`: embedding chunks
    write_seconds: float    # writing batches
    model: str              # the embedding model's name, as stored on the documents
    embed_header: str       # the metadata embedded above each chunk (none | title | title+source+date)
    graph: dict[str, int]   # totals in the database afterwards

    @property
    def chunks_per_second(self) -> float:
        """Chunks embedded and written per second (unchanged documents cost no embedding)."""
        return self.written_chunks / self.seconds if self.seconds else 0.0

    def lines(self) -> list[str]:
        return [
            f"ingested {self.path} ({self.format}) as corpus '{self.corpus}'",
            f"  documents {self.documents} (written {self.written}, unchanged {self.unchanged}, "
            f"empty skipped {self.skipped_empty})",
            f"  chunks    {self.chunks}",
            f"  sources   {self.sources}",
            f"  time      {self.seconds:.1f} s "
            + (f"({self.written_chunks} chunks written, {self.chunks_per_second:.1f} chunks/s), " if self.written_chunks
               else "(nothing to write), ")
            + f"model loading {self.model_load_seconds:.1f} s apart",
            f"  of which  embedding {self.embed_seconds:.1f} s ({self.model}"
            + (f", header {self.embed_header}" if self.embed_header != "none" else "")
            + f"), writing {self.write_seconds:.1f} s",
            f"  corpus    '{self.corpus}' now {self.graph['corpus_documents']} documents, "
            f"{self.graph['corpus_chunks']} chunks",
            f"  graph now {self.graph['documents']} documents, {self.graph['chunks']} chunks, "
            f"{self.graph['sources']} sources, {self.graph['corpora']} corpora",
        ]


GENERIC_STEM = "corpus"   # MultiHop-RAG's file name (and the bundled sample's): named after its folder


def default_corpus_name(path: Path | str) -> str:
    """The file's stem (its folder's name for a file called corpus.*), made a valid corpus name."""
    path = Path(path).resolve()
    stem = path.parent.name if path.stem.lower() == GENERIC_STEM and path.parent.name else path.stem
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).lstrip("._-")[:100]
    return name or GENERIC_STEM


def resolve_corpus_name(settings: Settings, path: Path | str, driver: Driver) -> str:
    """The configured corpus, else the file's default name, else that name with the file's
    extension (corpus.txt beside corpus.json): the first that is free or already holds this file."""
    if settings.corpus:
        return settings.corpus
    path = Path(path).resolve()
    name = default_corpus_name(path)
    candidates = [name] + ([f"{name}-{path.suffix[1:].lower()}"] if path.suffix[1:].isalnum() else [])
    taken = {}
    for candidate in candidates:
        records, _, _ = driver.execute_query(cypher.load("corpora/files"), name=candidate,
                                             database_=settings.neo4j_database)
        files = records[0]["files"] if records else None
        if not files or str(path) in files:
            return candidate
        taken[candidate] = files[0]
    uses = "; ".join(f"'{n}' holds {f}" for n, f in taken.items())
    raise MhgraphError(f"the default corpus names for {path.name} are taken ({uses}): name this corpus with "
                       f"--corpus NAME (or pass --corpus {name} to add the file to it)")


def document_id(corpus: str, article: Article) -> str:
    """Stable per corpus: the same article in two corpora is two Documents, each deleted with its corpus."""
    return hashlib.sha256(f"{corpus}\x1f{article.id}".encode()).hexdigest()[:32]


def chunk_id(document_id: str, start_char: int, end_char: int) -> str:
    return hashlib.sha256(f"{document_id}:{start_char}:{end_char}".encode()).hexdigest()[:32]


def fingerprint(document_id: str, model: str, chunk_ids: list[str], embed_header: str = "none") -> str:
    """Changes whenever the article, the model, the chunking or the embedded header changes."""
    # "none" adds nothing, so documents stored before embed_header existed keep their fingerprints
    header = [f"embed_header={embed_header}"] if embed_header != "none" else []
    return hashlib.sha256("\x1f".join([document_id, model, *chunk_ids, *header]).encode()).hexdigest()[:32]


@dataclass
class Tally:
    """What a streaming ingest has seen so far, for its summary."""

    documents: int = 0
    chunks: int = 0
    tokenless: int = 0      # articles with no token at all (e.g. only zero-width characters)
    written: int = 0
    written_chunks: int = 0
    sources: set[str] = field(default_factory=set)
    # the ids seen (about 100 bytes each, the only thing kept per article): the same article twice
    # in one file is stored once
    seen: set[str] = field(default_factory=set)


def prepare(articles: Iterable[Article], name: str, chunker: TokenChunker, model: str,
            tally: Tally, embed_header: str = "none") -> list[PreparedDocument]:
    """Chunked documents of corpus `name`, counted in `tally`."""
    prepared = []
    for article in articles:
        doc_id = document_id(name, article)
        if doc_id in tally.seen:
            continue
        tally.seen.add(doc_id)
        spans = chunker.split(article.body)
        if not spans:
            tally.tokenless += 1
            continue
        ids = [chunk_id(doc_id, s.start_char, s.end_char) for s in spans]
        prepared.append(PreparedDocument(doc_id, article, spans, ids,
                                         fingerprint(doc_id, model, ids, embed_header)))
        tally.documents += 1
        tally.chunks += len(spans)
        if article.source:
            tally.sources.add(article.source)
    return prepared


def batched(items: Iterable[Article], size: int) -> Iterator[list[Article]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def ingest_corpus(
    path: Path | str,
    settings: Settings,
    driver: Driver,
    *,
    fmt: Format | None = None,
    batch_size: int = 32,
    embedder: TextEmbedder | None = None,
    overlap: bool = False,
    progress: bool = True,
) -> IngestSummary:
    started = time.perf_counter()
    corpus = open_corpus(path, fmt)
    # A first pass validates the whole file, holding none of it: bad input raises InputError
    # before anything is written. The second pass below reads it again, one batch at a time.
    articles, empty = corpus.check()
    if not articles:
        raise InputError(path, "", f"no articles to ingest ({empty} empty entries)")
    name = resolve_corpus_name(settings, path, driver)  # may refuse the file: before loading the model
    loading = time.perf_counter()
    embedder = embedder or load_embedder(settings.embedding_model, settings.cache_dir)
    model_load_seconds = time.perf_counter() - loading
    if settings.chunk_size > embedder.max_seq_length:
        warnings.warn(f"chunk_size {settings.chunk_size} exceeds what {embedder.model_name} embeds "
                      f"({embedder.max_seq_length} tokens with its special tokens): chunk ends are not embedded",
                      stacklevel=2)
    chunker = TokenChunker(embedder.tokenizer, settings.chunk_size, settings.chunk_overlap)

    database = settings.neo4j_database
    ensure_schema(driver, database, embedder.dimensions, detect(driver, database), settings.vector_quantization)
    writer = GraphWriter(driver, database, name, embedder.model_name, settings.chunk_size, settings.chunk_overlap,
                         settings.embed_header)
    writer.open_corpus(str(Path(path).resolve()))

    # Parse, chunk, embed and write one batch of articles at a time: memory holds one batch's text
    # and vectors however large the corpus, and an ingest killed at any point loses at most that
    # batch (each batch is written in one transaction, and the fingerprints skip what is already
    # stored). overlap=True writes a batch in a second thread while the next is embedded (two
    # batches in memory, two lost to a kill): no gain with a local server on 2 cores, whose write
    # work competes with the model for the same cores (bench/results/ingest.json); it can hide a
    # remote server's latency.
    tally = Tally()
    timings = {"embed": 0.0, "write": 0.0}

    def write(batch: list[PreparedDocument], articles_read: int) -> int:
        if batch:
            t0 = time.perf_counter()
            writer.write(batch)
            timings["write"] += time.perf_counter() - t0
        return articles_read

    with tqdm(total=articles, desc="ingest", unit="doc", disable=not progress) as bar, \
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-writer") as pool:
        pending: Future[int] | None = None
        for batch in batched(corpus.articles(), batch_size):
            documents = prepare(batch, name, chunker, embedder.model_name, tally, settings.embed_header)
            stored = writer.fingerprints(d.id for d in documents)
            todo = [d for d in documents if stored.get(d.id) != d.fingerprint]
            if todo:
                t0 = time.perf_counter()
                vectors = embedder.embed_documents([text_to_embed(d.article, span.text, settings.embed_header)
                                                    for d in todo for span in d.chunks])
                timings["embed"] += time.perf_counter() - t0
                offset = 0
                for d in todo:
                    d.embeddings = vectors[offset:offset + len(d.chunks)]
                    offset += len(d.chunks)
                tally.written += len(todo)
                tally.written_chunks += offset
            if pending is not None:
                bar.update(pending.result())  # re-raises a failed write before more is embedded
            pending = pool.submit(write, todo, len(batch))
            if not overlap:
                bar.update(pending.result())
                pending = None
            release_free_memory()  # the batch's activations, freed by now, go back to the system
            bar.set_postfix(chunks=tally.written_chunks, refresh=False)
        if pending is not None:
            bar.update(pending.result())

    return IngestSummary(
        path=str(path), format=corpus.format, corpus=name, documents=tally.documents, chunks=tally.chunks,
        sources=len(tally.sources), skipped_empty=empty + tally.tokenless, written=tally.written,
        written_chunks=tally.written_chunks, unchanged=tally.documents - tally.written,
        seconds=time.perf_counter() - started - model_load_seconds, model_load_seconds=model_load_seconds,
        embed_seconds=timings["embed"], write_seconds=timings["write"], model=embedder.model_name,
        embed_header=settings.embed_header, graph=writer.counts(),
    )
