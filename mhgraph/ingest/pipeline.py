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
from typing import Callable, Iterable, Iterator, Sequence

from neo4j import Driver
from tqdm import tqdm

from mhgraph import cypher
from mhgraph.config import MAX_CORPUS_NAME, Settings
from mhgraph.embeddings import TextEmbedder, load_embedder
from mhgraph.errors import InputError, MhgraphError
from mhgraph.graph.capabilities import detect
from mhgraph.graph.documents import Removal, documents_of_file
from mhgraph.graph.schema import (
    ensure_fulltext_indexes,
    ensure_schema,
    rebuild_corpus_fulltext,
)
from mhgraph.ingest.chunking import TokenChunker
from mhgraph.ingest.corpus import Article, CorpusFile, Format, article_key, open_corpus
from mhgraph.ingest.header import text_to_embed
from mhgraph.ingest.memory import release_free_memory
from mhgraph.ingest.textfile import is_gzip, plain_suffix
from mhgraph.ingest.writer import GraphWriter, PreparedDocument, StoredVersion
from mhgraph.wording import counted


@dataclass(frozen=True)
class IngestSummary:
    path: str
    format: str
    corpus: str             # the corpus name the documents were stored under
    documents: int          # articles in the file (not counting empty ones)
    chunks: int             # chunks of those articles
    sources: int            # distinct sources among them
    skipped_empty: int      # empty passages / bodies, skipped
    written: int            # documents written now (added or replacing a stored version)
    written_chunks: int     # their chunks (embedded and written now)
    unchanged: int          # documents already stored identically, left as they were
    seconds: float          # parse, chunk, embed and write (model loading apart)
    model_load_seconds: float
    embed_seconds: float    # of `seconds`: embedding chunks
    write_seconds: float    # writing batches
    model: str              # the embedding model's name, as stored on the documents
    embed_header: str       # the metadata embedded above each chunk (none | title | title+source+date)
    graph: dict[str, int]   # totals in the database afterwards
    document_key: str = "auto"  # what documents are known by in the corpus
    replaced: int = 0       # of `written`: documents whose key was stored with other content
    removed: int = 0        # documents of this file ingested before and no longer in it
    removal: Removal = field(default_factory=Removal)  # what the replaced and removed versions took away
    reindex_seconds: float = 0.0   # the corpus's fulltext index rebuilt after chunks were removed (0: not needed)
    written_ids: list[str] = field(default_factory=list, repr=False)  # ids of the documents written now
    engine: str = "local"   # where it ran: "local", or the Ray engine's placement (its times are summed over workers)

    @property
    def added(self) -> int:
        return self.written - self.replaced

    @property
    def chunks_per_second(self) -> float:
        """Chunks embedded and written per second (unchanged documents cost no embedding)."""
        return self.written_chunks / self.seconds if self.seconds else 0.0

    def lines(self) -> list[str]:
        return [
            f"ingested {self.path} ({self.format}) as corpus '{self.corpus}'",
            f"  documents {self.documents} keyed by {self.document_key} (added {self.added}, replaced "
            f"{self.replaced}, unchanged {self.unchanged}, removed {self.removed}; empty skipped {self.skipped_empty})",
            *([f"  removed   old versions' {self.removal.chunks} chunks, {self.removal.claims} claims, "
               f"{self.removal.unused} names and sources nothing else used"
               + (f" ({self.removal.retired} nodes kept as Retired for evaluation traces)" if self.removal.retired
                  else "")
               + (f"; fulltext index rebuilt in {self.reindex_seconds:.1f} s" if self.reindex_seconds else "")]
              if self.removal.documents else []),
            *([f"  stale     {counted(len(self.removal.stale_runs), 'evaluation run')} whose traces reach a "
               f"changed document: marked stale ({', '.join(sorted(self.removal.stale_runs)[:3])}"
               f"{', ...' if len(self.removal.stale_runs) > 3 else ''})"] if self.removal.stale_runs else []),
            f"  chunks    {self.chunks}",
            f"  sources   {self.sources}",
            f"  time      {self.seconds:.1f} s "
            + (f"({self.written_chunks} chunks written, {self.chunks_per_second:.1f} chunks/s)" if self.written_chunks
               else "(nothing to write)")
            + (f", model loading {self.model_load_seconds:.1f} s apart" if self.engine == "local"
               else ", starting the workers and their models included"),
            *([] if self.engine == "local" else [f"  engine    {self.engine}"]),
            f"  {'of which ' if self.engine == 'local' else 'workers  '} embedding {self.embed_seconds:.1f} s "
            f"({self.model}" + (f", header {self.embed_header}" if self.embed_header != "none" else "")
            + f"), writing {self.write_seconds:.1f} s" + ("" if self.engine == "local" else " (summed over workers)"),
            f"  corpus    '{self.corpus}' now {self.graph['corpus_documents']} documents, "
            f"{self.graph['corpus_chunks']} chunks",
            f"  graph now {self.graph['documents']} documents, {self.graph['chunks']} chunks, "
            f"{self.graph['sources']} sources, {self.graph['corpora']} corpora",
        ]


GENERIC_STEM = "corpus"   # MultiHop-RAG's file name (and the bundled sample's): named after its folder


def default_corpus_name(path: Path | str) -> str:
    """The file's stem (its folder's name for a file called corpus.*), made a valid corpus name."""
    path = Path(path).resolve()
    base = Path(path.stem).stem if is_gzip(path) else path.stem    # corpus.json.gz: corpus
    stem = path.parent.name if base.lower() == GENERIC_STEM and path.parent.name else base
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).lstrip("._-")[:MAX_CORPUS_NAME]
    return name or GENERIC_STEM


def default_corpus_names(path: Path | str) -> list[str]:
    """The file's default name, then (for a plain extension) that name with it, cut to stay a valid name."""
    name = default_corpus_name(path)
    suffix = plain_suffix(Path(path).resolve())[1:]
    return [name] + ([f"{name[:MAX_CORPUS_NAME - len(suffix) - 1]}-{suffix}"] if suffix.isalnum() else [])


def resolve_corpus_name(settings: Settings, path: Path | str, driver: Driver) -> str:
    """The configured corpus, else the file's default name, else that name with the file's
    extension (corpus.txt beside corpus.json): the first that is free or already holds this file."""
    if settings.corpus:
        return settings.corpus
    path = Path(path).resolve()
    names = default_corpus_names(path)
    taken = {}
    for candidate in names:
        records, _, _ = driver.execute_query(cypher.load("corpora/files"), name=candidate,
                                             database_=settings.neo4j_database)
        files = records[0]["files"] if records else None
        if not files or str(path) in files:
            return candidate
        taken[candidate] = files[0]
    uses = "; ".join(f"'{n}' holds {f}" for n, f in taken.items())
    raise MhgraphError(f"the default corpus names for {path.name} are taken ({uses}): name this corpus with "
                       f"--corpus NAME (or pass --corpus {names[0]} to add the file to it)")


def document_id(corpus: str, article: Article) -> str:
    """One per corpus and version (content hash): the same article in two corpora is two Documents,
    each deleted with its corpus; a new version of an article is a new Document that replaces the old."""
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
    written_ids: list[str] = field(default_factory=list)   # the documents written now (added or replacing)
    written_chunks: int = 0
    sources: set[str] = field(default_factory=set)
    replaced: int = 0
    # the ids and keys seen (about 100 bytes each, the only things kept per article): the same
    # article twice in one file is stored once; documents of the file whose keys were not seen are removed
    seen: set[str] = field(default_factory=set)
    keys: set[str] = field(default_factory=set)
    # documents whose stored version was read from another file (a few keys kept, to name them), and those files
    foreign: int = 0
    foreign_keys: list[str] = field(default_factory=list)
    foreign_files: set[str] = field(default_factory=set)

    def count_replacement(self, d: PreparedDocument) -> None:
        """A document about to be written: it replaces stored versions, perhaps another file's."""
        self.count_written(d.key, bool(d.replaces), d.written_by_others)

    def count_written(self, key: str, replaced: bool, written_by_others: list[str]) -> None:
        self.replaced += replaced
        if written_by_others:   # two files give the key different content: the last ingest wins
            self.foreign += 1
            self.foreign_files.update(written_by_others)
            if len(self.foreign_keys) < 3:
                self.foreign_keys.append(key)

    def warn_foreign(self, path: Path | str) -> None:
        if self.foreign:
            warnings.warn(f"{path}: {counted(self.foreign, 'document')} replaced versions read from other files "
                          f"({', '.join(sorted(self.foreign_files)[:3])}), e.g. {', '.join(self.foreign_keys)}: the "
                          f"last ingest wins, and an ingest of the other file puts its version back", stacklevel=3)


def prepare(articles: Iterable[Article], name: str, chunker: TokenChunker, model: str,
            tally: Tally, embed_header: str = "none", key_rule: str = "auto") -> list[PreparedDocument]:
    """Chunked documents of corpus `name`, counted in `tally`."""
    prepared = []
    for article in articles:
        doc_id = document_id(name, article)
        if doc_id in tally.seen:
            continue
        tally.seen.add(doc_id)
        key = article_key(article, key_rule)
        assert key, "CorpusFile.check() refuses an article without a key"
        tally.keys.add(key)
        spans = chunker.split(article.body)
        if not spans:
            tally.tokenless += 1
            continue
        ids = [chunk_id(doc_id, s.start_char, s.end_char) for s in spans]
        prepared.append(PreparedDocument(doc_id, key, article, spans, ids,
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


def against_stored(documents: list[PreparedDocument], stored: dict[str, list[StoredVersion]],
                   file: str) -> tuple[list[PreparedDocument], list[PreparedDocument]]:
    """(to write, unchanged) given the stored versions of their keys. A document to write replaces
    every stored version of its key: an older one, or this one made another way (another model or
    chunking), or one half-written by an older mhgraph; the files that held it still do."""
    todo, unchanged = [], []
    for d in documents:
        versions = stored.get(d.key, [])
        if [(v.id, v.fingerprint) for v in versions] == [(d.id, d.fingerprint)]:
            unchanged.append(d)
            continue
        d.replaces = [v.id for v in versions]
        d.files = sorted({file, *(f for v in versions for f in v.files)})
        d.written_by_others = sorted({v.written_by for v in versions if v.written_by and v.written_by != file})
        todo.append(d)
    return todo, unchanged


def embed_prepared(embedder: TextEmbedder, documents: list[PreparedDocument], embed_header: str) -> int:
    """Embed the documents' chunks in one call, each document given its vectors; the number of chunks."""
    vectors = embedder.embed_documents([text_to_embed(d.article, span.text, embed_header)
                                        for d in documents for span in d.chunks])
    offset = 0
    for d in documents:
        d.embeddings = vectors[offset:offset + len(d.chunks)]
        offset += len(d.chunks)
    return offset


def check_files(files: Sequence[CorpusFile], *, ordered: bool) -> tuple[int, int]:
    """(articles, empty entries) of all the files, each checked whole (InputError at the first bad
    record; a file with no article too). Unless the files are written in order (`ordered`: the
    local engine's, where the last file's version of a key is kept), a key that two files give
    different content is refused: the Ray engine's workers write them in no set order."""
    articles = empty = 0
    seen: dict[bytes, tuple[bytes, int, int]] = {}   # key hash -> (version hash, file, line): 40 bytes an article
    for n, corpus in enumerate(files):
        count, blank = corpus.check()
        if not count:
            raise InputError(corpus.path, "", f"no articles to ingest ({blank} empty entries)")
        articles, empty = articles + count, empty + blank
        if ordered or len(files) == 1:
            continue
        for article in corpus.articles():
            key = hashlib.blake2b((article_key(article, corpus.key) or "").encode(), digest_size=16).digest()
            version = hashlib.blake2b(article.id.encode(), digest_size=8).digest()
            first = seen.setdefault(key, (version, n, article.line))
            if first[0] != version and first[1] != n:
                raise InputError(corpus.path, f"{article.line}", f"article '{article.title[:60]}' has the same "
                                 f"{corpus.key} key as {files[first[1]].path}:{first[2]}, with other content: the "
                                 "Ray engine writes files in no set order; ingest them one after the other "
                                 "(--engine local) or key them apart (--key)")
    return articles, empty


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
    on_progress: Callable[[int, int], None] | None = None,
) -> IngestSummary:
    """Parse, chunk, embed and write the corpus file `path`; `on_progress(done, total)` is
    called as articles are written (a server's job reports it)."""
    started = time.perf_counter()
    corpus = open_corpus(path, fmt, settings.document_key)
    # A first pass validates the whole file, holding none of it: bad input raises InputError
    # before anything is written. The second pass below reads it again, one batch at a time.
    articles, empty = corpus.check()
    if not articles:
        raise InputError(path, "", f"no articles to ingest ({empty} empty entries)")
    if on_progress is not None:
        on_progress(0, articles)
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
    file = str(Path(path).resolve())
    writer = GraphWriter(driver, database, name, embedder.model_name, settings.chunk_size, settings.chunk_overlap,
                         settings.embed_header, file)
    writer.open_corpus(settings.document_key)
    ensure_fulltext_indexes(driver, database, name)

    # Parse, chunk, embed and write one batch of articles at a time: memory holds one batch's text
    # and vectors however large the corpus. Each document is written in its own transaction, which
    # also removes the version it replaces, so an ingest killed at any point leaves every document
    # old or new, and a re-run skips what is stored (by key and fingerprint). overlap=True writes a
    # batch in a second thread while the next is embedded (two batches in memory, two lost to a
    # kill): no gain with a local server on 2 cores, whose write
    # work competes with the model for the same cores (bench/results/ingest.json); it can hide a
    # remote server's latency.
    tally = Tally()
    removal = Removal()
    timings = {"embed": 0.0, "write": 0.0}

    def write(batch: list[PreparedDocument], unchanged: list[PreparedDocument], articles_read: int) -> int:
        t0 = time.perf_counter()
        if batch:
            removal.add(writer.write(batch))
        writer.touch(unchanged)
        timings["write"] += time.perf_counter() - t0
        return articles_read

    with tqdm(total=articles, desc="ingest", unit="doc", disable=not progress) as bar, \
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-writer") as pool:
        pending: Future[int] | None = None

        done = [0]   # articles read and written so far (a disabled bar counts nothing)

        def advance(articles_done: int) -> None:
            bar.update(articles_done)
            done[0] += articles_done
            if on_progress is not None:
                on_progress(done[0], articles)
        for batch in batched(corpus.articles(), batch_size):
            documents = prepare(batch, name, chunker, embedder.model_name, tally, settings.embed_header,
                                corpus.key)
            todo, unchanged = against_stored(documents, writer.stored(d.key for d in documents), file)
            for d in todo:
                tally.count_replacement(d)
            if todo:
                t0 = time.perf_counter()
                written_chunks = embed_prepared(embedder, todo, settings.embed_header)
                timings["embed"] += time.perf_counter() - t0
                tally.written_ids.extend(d.id for d in todo)
                tally.written_chunks += written_chunks
            if pending is not None:
                advance(pending.result())  # re-raises a failed write before more is embedded
            pending = pool.submit(write, todo, unchanged, len(batch))
            if not overlap:
                advance(pending.result())
                pending = None
            release_free_memory()  # the batch's activations, freed by now, go back to the system
            bar.set_postfix(chunks=tally.written_chunks, refresh=False)
        if pending is not None:
            advance(pending.result())

    tally.warn_foreign(path)
    # documents this file held at an earlier ingest and holds no more
    gone = documents_of_file(driver, database, name, file, keep=sorted(tally.keys))
    t0 = time.perf_counter()
    removal.add(writer.remove(gone))
    timings["write"] += time.perf_counter() - t0
    reindex = rebuild_corpus_fulltext(driver, database, name) if removal.chunks else 0.0
    return IngestSummary(
        path=str(path), format=corpus.format, corpus=name, documents=tally.documents, chunks=tally.chunks,
        sources=len(tally.sources), skipped_empty=empty + tally.tokenless, written=len(tally.written_ids),
        written_chunks=tally.written_chunks, unchanged=tally.documents - len(tally.written_ids),
        seconds=time.perf_counter() - started - model_load_seconds, model_load_seconds=model_load_seconds,
        embed_seconds=timings["embed"], write_seconds=timings["write"], model=embedder.model_name,
        embed_header=settings.embed_header, graph=writer.counts(), document_key=corpus.key, replaced=tally.replaced,
        removed=len(gone), removal=removal, reindex_seconds=reindex, written_ids=tally.written_ids,
    )
