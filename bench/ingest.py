"""Ingest benchmark: mhgraph's pipeline against neo4j-graphrag's lexical-graph pipeline.

    python bench/ingest.py [--corpus PATH] [--sides SIDE ...] [--copies N] [--out bench/results/ingest.json]

Every side ingests the same articles into the same Neo4j server. The database is emptied (nodes,
constraints, indexes) before each side, and each side runs in its own child process (this script
with a hidden flag), so the peak RSS reported is that side's own. Model loading is timed apart
from ingest.

Sides (--sides; default: all of DEFAULT_SIDES, in that order):
(a) mhgraph[:MODEL][:overlap]  mhgraph.ingest.pipeline.ingest_corpus (token windows, batched
                    embedding, UNWIND writes, constraints + vector + fulltext indexes) with MODEL
                    (default: the configured embedding model); with ':overlap', each batch is written
                    in a second thread while the next is embedded (ingest --overlap-writes).
(b) neo4j-graphrag  FixedSizeSplitter -> TextChunkEmbedder -> LexicalGraphBuilder -> Neo4jWriter,
                    awaited per document, plus a vector index made with its create_vector_index,
                    with the configured model through neo4j-graphrag's SentenceTransformerEmbeddings.
                    FixedSizeSplitter counts characters: its chunk size and overlap are mhgraph's
                    token settings times the corpus's characters per token, measured with the
                    embedding model's tokenizer.

Server: NEO4J_URI if set (its database is wiped, so --wipe must confirm it), else a private
local server (mhgraph.server.LocalNeo4j) in a temporary home on ports 27687/27474, stopped and
removed at the end.

--copies N ingests N copies of the corpus, each article retitled "(copy k)" so that every copy is
new documents and chunks: peak memory at 1x and at Nx shows whether it grows with the corpus.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from environment import machine, versions

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "data" / "multihop-rag" / "corpus.json"
SAMPLE_CORPUS = REPO / "mhgraph" / "data" / "sample" / "corpus.json"
RESULTS = REPO / "bench" / "results"
GRAPHRAG = "neo4j-graphrag"
DEFAULT_SIDES = ("mhgraph", "mhgraph::overlap", "mhgraph:all-MiniLM-L6-v2+int8", "mhgraph:bge-small-en-v1.5+int8",
                 "mhgraph:bge-small-en-v1.5", GRAPHRAG)
GRAPHRAG_VECTOR_INDEX = "graphrag_chunk_embedding"


class BenchError(Exception):
    """Reported as one line, without a traceback."""


def rel(path: Path) -> str:
    """A path relative to the repository root (../shared/... for the shared folder beside it)."""
    return os.path.relpath(path.resolve(), REPO)


def mib(kib: int) -> float:
    return round(kib / 1024, 1)


def peak_rss_kib() -> int:
    """This process's peak RSS in KiB. VmHWM, since Linux keeps ru_maxrss across exec: a child's
    ru_maxrss starts at what its parent held when it forked (gigabytes for --copies 10)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


class RssTimeline:
    """Samples this process's resident memory every `every` seconds in a daemon thread: where
    memory grows during an ingest (flat, a plateau, or with the corpus) shows in the curve, not in
    one peak figure. At most `points` samples are kept (every other one dropped when full)."""

    def __init__(self, every: float = 2.0, points: int = 240) -> None:
        import threading

        self.every, self.points, self.samples = every, points, []
        self._stop = threading.Event()
        self._started = time.perf_counter()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "RssTimeline":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        step = self.every
        while not self._stop.wait(step):
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    self.samples.append([round(time.perf_counter() - self._started, 1), mib(int(line.split()[1]))])
            if len(self.samples) >= self.points:  # keep the whole run's shape at half the resolution
                self.samples, step = self.samples[::2], step * 2


def articles_of(path: Path) -> list[Any]:
    """The corpus's articles, each once (as mhgraph stores them): both sides get the same list."""
    from mhgraph.ingest.corpus import read_corpus

    seen, out = set(), []
    for article in read_corpus(path).articles:
        if article.id not in seen:
            seen.add(article.id)
            out.append(article)
    return out


# -- the two sides (each runs in a child process) ------------------------------------------------
def parse_side(side: str) -> tuple[str, str | None, bool]:
    """'mhgraph[:MODEL][:overlap]' or 'neo4j-graphrag' -> (pipeline, model or None, overlap)."""
    if side == GRAPHRAG:
        return GRAPHRAG, None, False
    name, _, rest = side.partition(":")
    model, _, mode = rest.partition(":")
    if name != "mhgraph" or mode not in ("", "overlap"):
        raise BenchError(f"unknown side {side!r}: use mhgraph[:MODEL][:overlap] or {GRAPHRAG}")
    return "mhgraph", model or None, mode == "overlap"


def side_mhgraph(settings: Any, corpus: Path, params: dict[str, Any]) -> dict[str, Any]:
    from mhgraph.embeddings import load_embedder
    from mhgraph.graph.connection import connect
    from mhgraph.ingest.pipeline import ingest_corpus

    started = time.perf_counter()
    embedder = load_embedder(params.get("model") or settings.embedding_model, settings.cache_dir)
    load_s = time.perf_counter() - started
    rss_loaded = peak_rss_kib()
    overlap = params.get("overlap", False)
    with connect(settings) as driver:
        started = time.perf_counter()
        summary = ingest_corpus(corpus, settings, driver, embedder=embedder, overlap=overlap, progress=True)
        ingest_s = time.perf_counter() - started
    model = getattr(embedder, "model", None)
    return {
        "documents": summary.documents, "chunks": summary.chunks, "model_load_s": load_s,
        "ingest_s": ingest_s, "rss_after_model_load_kib": rss_loaded, "embedding_model": embedder.model_name,
        "runtime": f"sentence-transformers (torch {model.device})" if model is not None
                   else "ONNX Runtime (CPUExecutionProvider)",
        "device": str(model.device) if model is not None else "cpu", "max_seq_length": embedder.max_seq_length,
        "phases_s": {"embed": round(summary.embed_seconds, 3), "write": round(summary.write_seconds, 3)},
        "chunking": {"splitter": "mhgraph.ingest.chunking.TokenChunker", "unit": "tokens",
                     "chunk_size": settings.chunk_size, "chunk_overlap": settings.chunk_overlap},
        "embedding": "streamed: each batch of 32 documents embedded (embed_documents, encode batch 32), then "
                     + ("written in a second thread while the next batch is embedded" if overlap
                        else "written before the next batch is embedded (sequential)"),
        "writer": "mhgraph GraphWriter: UNWIND batches of 32 documents per transaction",
        "schema": f"{schema_summary()}, vector index chunk_embedding (with filter properties on 2026.01+), "
                  "a fulltext index per corpus (chunk_text_<corpus>)",
    }


def schema_summary() -> str:
    """What mhgraph's constraints file creates, counted from it."""
    from mhgraph import cypher

    statements = cypher.load_statements("schema/constraints")
    constraints = sum("CREATE CONSTRAINT" in s for s in statements)
    return f"{constraints} uniqueness constraints, {len(statements) - constraints} range indexes"


def make_writer(driver: Any, database: str, apoc: bool) -> tuple[Any, str]:
    """neo4j-graphrag's Neo4jWriter. Its relationship upsert calls apoc.merge.relationship; on a
    server without APOC (mhgraph's local Community server has none) that one query is replaced by
    the same MERGE in plain Cypher (dynamic relationship type, Neo4j 5.26+)."""
    from neo4j_graphrag.components.kg_writer import Neo4jWriter

    if apoc:
        return Neo4jWriter(driver, neo4j_database=database), "neo4j_graphrag Neo4jWriter (batch 1000)"

    class Neo4jWriterWithoutApoc(Neo4jWriter):
        QUERY = (
            "UNWIND $rows AS row "
            "MATCH (start:__KGBuilder__ {__tmp_internal_id: row.start_node_id}), "
            "      (end:__KGBuilder__ {__tmp_internal_id: row.end_node_id}) "
            "MERGE (start)-[rel:$(row.type)]->(end) "
            "SET rel += coalesce(row.properties, {}) "
            "WITH rel, row "
            "CALL (rel, row) { "
            "WITH rel, row WHERE row.embedding_properties IS NOT NULL "
            "UNWIND keys(row.embedding_properties) AS emb "
            "CALL db.create.setRelationshipVectorProperty(rel, emb, row.embedding_properties[emb]) "
            "} "
            "RETURN elementId(rel)"
        )

        def _upsert_relationships(self, rels: list[Any]) -> None:
            self.driver.execute_query(self.QUERY, parameters_={"rows": self._relationships_to_rows(rels)},
                                      database_=self.neo4j_database)

    return (Neo4jWriterWithoutApoc(driver, neo4j_database=database),
            "neo4j_graphrag Neo4jWriter (batch 1000); no APOC on the server, so its relationship "
            "query (apoc.merge.relationship) is replaced by the equivalent plain-Cypher MERGE")


def side_graphrag(settings: Any, corpus: Path, params: dict[str, Any]) -> dict[str, Any]:
    from neo4j_graphrag.components.embedder import TextChunkEmbedder
    from neo4j_graphrag.components.lexical_graph import LexicalGraphBuilder
    from neo4j_graphrag.components.text_splitters.fixed_size_splitter import FixedSizeSplitter
    from neo4j_graphrag.components.types import DocumentInfo, LexicalGraphConfig
    from neo4j_graphrag.indexes import create_vector_index
    from tqdm import tqdm

    from mhgraph.graph.connection import connect
    from mhgraph.embeddings.sentence import SentenceEmbedder

    started = time.perf_counter()
    embedder = SentenceEmbedder(settings.embedding_model)
    load_s = time.perf_counter() - started
    rss_loaded = peak_rss_kib()
    size, overlap = params["graphrag_chunk_size"], params["graphrag_chunk_overlap"]
    database = settings.neo4j_database
    phases = {"read": 0.0, "split": 0.0, "embed": 0.0, "lexical_graph": 0.0, "write": 0.0, "schema": 0.0}

    async def run(driver: Any) -> tuple[int, int, str]:
        t = time.perf_counter()
        articles = articles_of(corpus)
        phases["read"] += time.perf_counter() - t
        t = time.perf_counter()
        create_vector_index(driver, GRAPHRAG_VECTOR_INDEX, label="Chunk", embedding_property="embedding",
                            dimensions=embedder.dimensions, similarity_fn="cosine", neo4j_database=database)
        driver.execute_query("CALL db.awaitIndexes(300)", database_=database)
        phases["schema"] += time.perf_counter() - t
        records, _, _ = driver.execute_query(
            "SHOW PROCEDURES YIELD name WHERE name = 'apoc.merge.relationship' RETURN count(*) AS n",
            database_=database)
        splitter = FixedSizeSplitter(chunk_size=size, chunk_overlap=overlap, approximate=True)
        chunk_embedder = TextChunkEmbedder(embedder)
        config = LexicalGraphConfig()
        builder = LexicalGraphBuilder(config)
        writer, writer_desc = make_writer(driver, database, apoc=records[0]["n"] > 0)
        chunks = 0
        for article in tqdm(articles, desc="graphrag split+embed+write", unit="doc"):
            info = DocumentInfo(
                path=str(corpus), uid=article.id,
                metadata={k: v for k, v in {
                    "title": article.title, "source": article.source, "author": article.author,
                    "category": article.category, "url": article.url,
                    "published_at": article.published_at.isoformat() if article.published_at else None,
                }.items() if v is not None},
            )
            t = time.perf_counter()
            text_chunks = await splitter.run(article.body)
            t2 = time.perf_counter()
            text_chunks = await chunk_embedder.run(text_chunks)
            t3 = time.perf_counter()
            graph = (await builder.run(text_chunks, document_info=info)).graph
            t4 = time.perf_counter()
            result = await writer.run(graph, config)
            t5 = time.perf_counter()
            if result.status != "SUCCESS":
                raise BenchError(f"Neo4jWriter failed: {(result.metadata or {}).get('error', 'no detail')}")
            phases["split"] += t2 - t
            phases["embed"] += t3 - t2
            phases["lexical_graph"] += t4 - t3
            phases["write"] += t5 - t4
            chunks += len(text_chunks.chunks)
        return len(articles), chunks, writer_desc

    with connect(settings) as driver:
        started = time.perf_counter()
        documents, chunks, writer_desc = asyncio.run(run(driver))
        ingest_s = time.perf_counter() - started
    return {
        "documents": documents, "chunks": chunks, "model_load_s": load_s, "ingest_s": ingest_s,
        "rss_after_model_load_kib": rss_loaded, "device": str(embedder.model.device),
        "max_seq_length": embedder.max_seq_length,
        "phases_s": {k: round(v, 3) for k, v in phases.items()},
        "chunking": {"splitter": "neo4j_graphrag FixedSizeSplitter(approximate=True)", "unit": "characters",
                     "chunk_size": size, "chunk_overlap": overlap,
                     "approximates_tokens": [settings.chunk_size, settings.chunk_overlap],
                     "chars_per_token": params["chars_per_token"]},
        "embedding": "TextChunkEmbedder: one embed_query (one encode call) per chunk",
        "embedding_model": settings.embedding_model, "runtime": f"sentence-transformers (torch {embedder.model.device})",
        "writer": writer_desc,
        "schema": f"vector index {GRAPHRAG_VECTOR_INDEX} (neo4j_graphrag.indexes.create_vector_index), "
                  "Neo4jWriter's own range index __entity__tmp_internal_id",
    }


def child_main(args: argparse.Namespace) -> int:
    from mhgraph.config import load_settings
    from mhgraph.errors import MhgraphError

    job = json.loads(Path(args.child_job).read_text())
    try:
        import torch

        settings = load_settings(job["flags"])
        run = side_mhgraph if job["side"] == "mhgraph" else side_graphrag
        with RssTimeline() as timeline:
            out = run(settings, Path(job["corpus"]), job["params"])
        out["peak_rss_kib"] = peak_rss_kib()
        out["rss_timeline_mib"] = timeline.samples
        out["torch_threads"] = torch.get_num_threads()
    except (MhgraphError, BenchError) as exc:
        print(f"error ({job['side']}): {exc}", file=sys.stderr)
        return 1
    Path(job["result"]).write_text(json.dumps(out))
    return 0


# -- the parent: server, database wipes, machine facts, report ------------------------------------
def port_in_use(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def wipe(driver: Any, database: str) -> None:
    """All nodes and relationships, then every constraint and index except the token lookups."""
    with driver.session(database=database) as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS").consume()
    for record in driver.execute_query("SHOW CONSTRAINTS YIELD name", database_=database).records:
        driver.execute_query("DROP CONSTRAINT $name IF EXISTS", name=record["name"], database_=database)
    for record in driver.execute_query("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name",
                                       database_=database).records:
        driver.execute_query("DROP INDEX $name IF EXISTS", name=record["name"], database_=database)


def graph_facts(driver: Any, database: str, tokenizer: Any) -> dict[str, Any]:
    """What a side left in the database, and how its chunks measure in model tokens."""
    rec = driver.execute_query(
        "RETURN COUNT { (:Document) } AS documents, COUNT { (:Chunk) } AS chunks, "
        "COUNT { (:Chunk)-[:NEXT_CHUNK]->(:Chunk) } AS next_chunk, "
        "COUNT { (c:Chunk) WHERE c.embedding IS NOT NULL } AS embedded", database_=database).records[0]
    texts = [r["t"] for r in driver.execute_query("MATCH (c:Chunk) RETURN c.text AS t", database_=database).records]
    lengths = [len(ids) for ids in tokenizer(texts, add_special_tokens=False, verbose=False)["input_ids"]] if texts else []
    indexes = [r["name"] for r in driver.execute_query(
        "SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name ORDER BY name", database_=database).records]
    return {
        **dict(rec), "indexes": indexes,
        "chunk_tokens": {
            "mean": round(statistics.fmean(lengths), 1) if lengths else None,
            "min": min(lengths, default=None), "max": max(lengths, default=None),
            "chars_mean": round(statistics.fmean(len(t) for t in texts), 1) if texts else None,
        },
        "_lengths": lengths,
    }


def corpus_label(path: Path, description: str | None = None) -> str:
    if description:
        return description
    if path.resolve() == SAMPLE_CORPUS.resolve():
        return "mhgraph bundled sample corpus (mhgraph/data/sample/corpus.json)"
    if path.resolve() == DEFAULT_CORPUS.resolve():
        return "MultiHop-RAG corpus"
    if (copies := re.fullmatch(r"(.+)-x(\d+)", path.parent.name)) and path.name == "corpus.json":
        return f"{copies[2]} retitled copies of the {copies[1]} corpus (bench/ingest.py --copies)"
    return f"user-supplied corpus ({path.name})"


def default_out(corpus: Path, copies: int = 1) -> Path:
    times = f"-x{copies}" if copies > 1 else ""
    if corpus.resolve() == DEFAULT_CORPUS.resolve():
        return RESULTS / f"ingest{times}.json"
    if corpus.resolve() == SAMPLE_CORPUS.resolve():
        return RESULTS / f"ingest-sample{times}.json"
    return RESULTS / f"ingest-{corpus.stem}{times}.json"


def copies_of(corpus: Path, copies: int, tmp: Path) -> Path:
    """A JSON corpus of `copies` copies of `corpus`'s articles, each copy retitled (new documents)."""
    try:
        articles = json.loads(corpus.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise BenchError(f"{corpus}: --copies needs a JSON corpus (a list of articles): {exc}") from exc
    if not isinstance(articles, list) or not all(isinstance(a, dict) for a in articles):
        raise BenchError(f"{corpus}: --copies needs a JSON corpus (a list of articles)")
    out = tmp / f"{corpus.parent.name}-x{copies}" / "corpus.json"
    out.parent.mkdir(parents=True)
    out.write_text(json.dumps([{**a, "title": f"{a.get('title') or ''} (copy {k})"}
                               for k in range(1, copies + 1) for a in articles]), encoding="utf-8")
    return out


def run_side(side: str, flags: dict[str, Any], corpus: Path, params: dict[str, Any], tmp: Path) -> dict[str, Any]:
    pipeline, model, overlap = parse_side(side)
    job, result = tmp / "side.job.json", tmp / "side.result.json"
    result.unlink(missing_ok=True)
    job.write_text(json.dumps({"side": pipeline, "flags": flags, "corpus": str(corpus),
                               "params": {**params, "model": model, "overlap": overlap}, "result": str(result)}))
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false", "PYTHONWARNINGS": "ignore::DeprecationWarning"}
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child-job", str(job)], env=env)
    if proc.returncode != 0 or not result.is_file():
        raise BenchError(f"the {side} side failed (exit code {proc.returncode}); see the message above")
    return json.loads(result.read_text())


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| side | embedding model | documents | chunks | chunk size / overlap | model load s | ingest s | "
             "chunks/s | x neo4j-graphrag | peak RSS MiB |",
             "|---|---|---:|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        c = r["chunking"]
        ratio = r.get("speedup_vs_neo4j_graphrag")
        lines.append(f"| {r['side']} | {r['embedding_model']} | {r['documents']} | {r['chunks']} | "
                     f"{c['chunk_size']}/{c['chunk_overlap']} {c['unit']} | {r['model_load_s']:.1f} | {r['ingest_s']:.1f} | "
                     f"{r['chunks_per_s']:.1f} | {f'{ratio:.2f}' if ratio else '-'} | {r['peak_rss_mib']:.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                        help=f"corpus file (default: {rel(DEFAULT_CORPUS)})")
    parser.add_argument("--out", type=Path, help="result JSON (default: bench/results/ingest.json for the "
                        "default corpus, bench/results/ingest-<name>.json otherwise)")
    parser.add_argument("--sides", nargs="+", default=list(DEFAULT_SIDES), metavar="SIDE",
                        help="mhgraph[:MODEL][:overlap] and/or neo4j-graphrag (default: %(default)s)")
    parser.add_argument("--copies", type=int, default=1, help="ingest this many retitled copies of the corpus")
    parser.add_argument("--corpus-description", help="what the corpus is, for the report (e.g. how it was generated)")
    parser.add_argument("--bolt-port", type=int, default=27687, help="Bolt port of the bench's own server")
    parser.add_argument("--http-port", type=int, default=27474, help="HTTP port of the bench's own server")
    parser.add_argument("--chars-per-token", type=float,
                        help="override the measured characters per token for FixedSizeSplitter")
    parser.add_argument("--wipe", action="store_true",
                        help="confirm emptying the NEO4J_URI database (needed only when NEO4J_URI is set)")
    parser.add_argument("--child-job", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_job:
        return child_main(args)

    from mhgraph.errors import MhgraphError

    try:
        return bench(args)
    except (BenchError, MhgraphError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def bench(args: argparse.Namespace) -> int:
    corpus: Path = args.corpus
    if not corpus.is_file():
        hint = " (the MultiHop-RAG corpus is not there)" if corpus == DEFAULT_CORPUS else ""
        raise BenchError(f"corpus not found: {corpus}{hint}; pass --corpus PATH, e.g. --corpus {rel(SAMPLE_CORPUS)}")
    out = args.out or default_out(corpus, args.copies)
    env_uri = os.environ.get("NEO4J_URI")
    if env_uri and not args.wipe:
        raise BenchError(f"NEO4J_URI is set ({env_uri}): the bench empties that database before each side "
                         "(all nodes, constraints and indexes); pass --wipe to confirm, or unset NEO4J_URI")
    for side in args.sides:
        parse_side(side)
    if args.copies < 1:
        raise BenchError("--copies must be at least 1")
    tmp = Path(tempfile.mkdtemp(prefix="mhgraph-bench-"))
    try:
        if args.copies > 1:
            corpus = copies_of(corpus, args.copies, tmp)
        return run_bench(args, corpus, out, env_uri, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_bench(args: argparse.Namespace, corpus: Path, out: Path, env_uri: str | None, tmp: Path) -> int:
    from transformers import AutoTokenizer

    from mhgraph.config import load_settings
    from mhgraph.graph.capabilities import detect
    from mhgraph.graph.connection import connect
    from mhgraph.embeddings.sentence import resolve_model

    flags: dict[str, Any] = {} if env_uri else {"home": str(tmp / "neo4j"), "bolt_port": args.bolt_port,
                                                 "http_port": args.http_port}
    settings = load_settings(flags)

    # Characters per token on this corpus, with the embedding model's own tokenizer.
    articles = articles_of(corpus)
    if not articles:
        raise BenchError(f"{corpus}: no non-empty articles")
    tokenizer = AutoTokenizer.from_pretrained(resolve_model(settings.embedding_model))
    bodies = [a.body for a in articles]
    n_chars = sum(len(b) for b in bodies)
    n_tokens = sum(len(ids) for ids in tokenizer(bodies, add_special_tokens=False, verbose=False)["input_ids"])
    cpt = args.chars_per_token or round(n_chars / n_tokens, 2)
    params = {"chars_per_token": cpt, "graphrag_chunk_size": round(settings.chunk_size * cpt),
              "graphrag_chunk_overlap": round(settings.chunk_overlap * cpt)}
    raw = corpus.read_bytes()

    server = None
    started_here = False
    try:
        if settings.uses_local_server:
            from mhgraph.server import LocalNeo4j

            for port in (settings.bolt_port, settings.http_port):
                if port_in_use(port):
                    raise BenchError(f"port {port} on 127.0.0.1 is already in use; pick free ones with "
                                     "--bolt-port/--http-port")
            server = LocalNeo4j(settings)
            print(f"starting a private Neo4j in {server.home} (bolt {settings.bolt_port}, http {settings.http_port})",
                  file=sys.stderr)
            started_here = True
            t = time.perf_counter()
            server.start()
            print(f"server up in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        database = settings.neo4j_database
        with connect(settings) as driver:
            caps = detect(driver, database)
        print(f"Neo4j {caps.version} {caps.edition} at {settings.uri}; corpus {rel(corpus)}: {len(articles)} "
              f"documents, {n_tokens} tokens, {cpt} chars/token", file=sys.stderr)

        rows = []
        for side in args.sides:
            with connect(settings) as driver:
                wipe(driver, database)
            print(f"--- {side} (database emptied)", file=sys.stderr)
            load_before = os.getloadavg()[0]
            r = run_side(side, flags, corpus, params, tmp)
            load_after = os.getloadavg()[0]
            with connect(settings) as driver:
                facts = graph_facts(driver, database, tokenizer)
            lengths = facts.pop("_lengths")
            row = {
                "side": side, "pipeline": parse_side(side)[0], "documents": r["documents"], "chunks": r["chunks"],
                "model_load_s": round(r["model_load_s"], 2), "ingest_s": round(r["ingest_s"], 2),
                "chunks_per_s": round(r["chunks"] / r["ingest_s"], 1) if r["ingest_s"] else None,
                "peak_rss_mib": mib(r["peak_rss_kib"]),
                "rss_after_model_load_mib": mib(r["rss_after_model_load_kib"]),
                "rss_timeline_mib": r["rss_timeline_mib"],
                "embedding_model": r["embedding_model"], "runtime": r["runtime"], "embedding_device": r["device"],
                "torch_threads": r["torch_threads"],
                "load_average_1min": {"before": round(load_before, 2), "after": round(load_after, 2)},
                "chunking": r["chunking"], "embedding": r["embedding"], "writer": r["writer"], "schema": r["schema"],
                "graph_after": facts,
            }
            if "phases_s" in r:
                row["phases_s"] = r["phases_s"]
            # the model reads at most max_seq_length tokens, [CLS] and [SEP] included: the rest is cut
            window = r["max_seq_length"]
            row["graph_after"]["model_max_seq_length"] = window
            row["graph_after"]["chunks_truncated_by_model"] = sum(1 for n in lengths if n + 2 > window)
            rows.append(row)
        graphrag = next((r for r in rows if r["pipeline"] == GRAPHRAG), None)
        for r in rows:
            if graphrag and r is not graphrag and r["ingest_s"]:
                r["speedup_vs_neo4j_graphrag"] = round(graphrag["ingest_s"] / r["ingest_s"], 2)
    finally:
        if server is not None and started_here:
            server.stop()
            print("private server stopped", file=sys.stderr)

    report = {
        "benchmark": "ingest",
        "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "corpus": {"description": corpus_label(corpus, args.corpus_description), "path": rel(corpus), "bytes": len(raw),
                   "sha256": hashlib.sha256(raw).hexdigest(), "documents": len(articles),
                   "characters": n_chars, "tokens": n_tokens},
        "chunk_settings": {
            "mhgraph": f"{settings.chunk_size} tokens, overlap {settings.chunk_overlap} tokens (model tokenizer)",
            "neo4j-graphrag": f"{params['graphrag_chunk_size']} characters, overlap {params['graphrag_chunk_overlap']} "
                              f"characters = {settings.chunk_size}/{settings.chunk_overlap} tokens x {cpt} characters "
                              "per token, " + ("given with --chars-per-token" if args.chars_per_token else
                                               f"measured on this corpus ({n_chars} characters / {n_tokens} "
                                               f"tokens of {settings.embedding_model}'s tokenizer, no special tokens)"),
        },
        "embedding_model": f"{settings.embedding_model} (neo4j-graphrag, and mhgraph sides that name none; "
                           "each result names its own)",
        "neo4j": {"version": caps.version, "edition": caps.edition,
                  "server": "private local server started by the bench (mhgraph.server.LocalNeo4j, heap "
                            f"{settings.heap_size}, pagecache {settings.pagecache_size})" if started_here
                            else f"NEO4J_URI ({env_uri})"},
        "machine": machine(),
        "software": versions(),
        "method": ("one run per side, in order " + ", ".join(args.sides) + "; database emptied (nodes, constraints, "
                   "indexes) before each; each side in its own child process; model_load_s is loading "
                   "the side's embedder, ingest_s is everything after (reading the corpus, chunking, schema, "
                   "embedding, writing); chunks_per_s = chunks / ingest_s; peak RSS is the child's VmHWM, "
                   "rss_timeline_mib its VmRSS sampled every 2 s or more ([seconds, MiB]); load_average_1min shows how busy the machine was (other work shares its cores)"),
        "results": rows,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nIngest benchmark, {corpus_label(corpus, args.corpus_description)}; Neo4j {caps.version}; {report['machine']['cpu']}, "
          f"{report['machine']['usable_cores']} cores\n")
    print(markdown(rows))
    print(f"\nneo4j-graphrag chunks: {report['chunk_settings']['neo4j-graphrag']}")
    print(f"written to {rel(out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
