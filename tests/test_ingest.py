"""Ingest into the real server: schema, counts, chunk boundaries, idempotence, resume, both formats."""

from __future__ import annotations

import json
from dataclasses import replace
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest
from neo4j.time import DateTime

from mhgraph.errors import InputError
from mhgraph.graph.schema import VECTOR_INDEX, corpus_chunk_label, fulltext_index
from mhgraph.ingest.corpus import read_corpus
from mhgraph.ingest.pipeline import ingest_corpus
from tests.conftest import SAMPLE, cli_env, wipe
from tests.graph_state import snapshot

CORPUS = SAMPLE / "corpus.json"
FLAT = SAMPLE / "corpus.txt"


@pytest.fixture
def ingested(empty_graph, settings, embedder):
    summary = ingest_corpus(CORPUS, settings, empty_graph, embedder=embedder, progress=False)
    return summary


def query(driver, settings, cypher: str, **params):
    records, _, _ = driver.execute_query(cypher, params, database_=settings.neo4j_database)
    return [r.data() for r in records]


def test_schema_and_indexes_exist(ingested, driver, settings, embedder) -> None:
    constraints = {(r["labels"][0], r["properties"][0]) for r in query(
        driver, settings, "SHOW CONSTRAINTS YIELD type, labelsOrTypes AS labels, properties WHERE type = 'UNIQUENESS' RETURN *")}
    assert {("Source", "name"), ("Document", "id"), ("Chunk", "id")} <= constraints
    indexes = {r["name"]: r for r in query(
        driver, settings, "SHOW INDEXES YIELD name, type, state, labelsOrTypes, properties, options RETURN *")}
    vector = indexes[VECTOR_INDEX]
    assert vector["type"] == "VECTOR" and vector["state"] == "ONLINE" and vector["labelsOrTypes"] == ["Chunk"]
    assert vector["properties"] == ["embedding", "source", "published_at", "corpus"]  # filter properties (2026.x)
    assert vector["options"]["indexConfig"]["vector.dimensions"] == embedder.dimensions == 384
    # full-precision vectors unless configured otherwise (the server's own default is BINARY)
    assert vector["options"]["indexConfig"]["vector.quantization.type"] == "NONE"
    # the corpus's own fulltext index, over its own Chunk label (BM25 statistics per corpus)
    fulltext = indexes[fulltext_index(ingested.corpus)]
    assert fulltext["type"] == "FULLTEXT" and fulltext["properties"] == ["text"] and fulltext["state"] == "ONLINE"
    assert fulltext["labelsOrTypes"] == [corpus_chunk_label(ingested.corpus)] == ["Chunk_sample"]
    assert "chunk_text" not in indexes
    ranges = {(tuple(r["labelsOrTypes"]), tuple(r["properties"])) for r in indexes.values() if r["type"] == "RANGE"}
    assert {(("Chunk",), ("source",)), (("Chunk",), ("published_at",))} <= ranges


def test_counts_match_the_corpus(ingested, driver, settings, embedder) -> None:
    articles = json.loads(CORPUS.read_text())
    from mhgraph.ingest.chunking import TokenChunker

    chunker = TokenChunker(embedder.tokenizer, 256, 32)
    expected_chunks = sum(len(chunker.split(a["body"].strip())) for a in articles)
    counts = query(driver, settings, "RETURN COUNT{(:Document)} AS d, COUNT{(:Chunk)} AS c, COUNT{(:Source)} AS s, "
                   "COUNT{()-[:PUBLISHED_BY]->()} AS p, COUNT{()-[:FROM_DOCUMENT]->()} AS f, COUNT{()-[:NEXT_CHUNK]->()} AS n")[0]
    assert counts["d"] == len(articles) == ingested.documents == 18
    assert counts["s"] == len({a["source"] for a in articles}) == ingested.sources
    assert counts["c"] == expected_chunks == ingested.chunks and expected_chunks > len(articles)
    assert counts["p"] == counts["d"] and counts["f"] == counts["c"]
    assert counts["n"] == counts["c"] - counts["d"]  # one chain per document
    assert ingested.written == 18 and ingested.unchanged == 0


def test_metadata_types_and_values(ingested, driver, settings) -> None:
    articles = {a["title"]: a for a in json.loads(CORPUS.read_text())}
    rows = query(driver, settings, "MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d:Document)-[:PUBLISHED_BY]->(s:Source) "
                 "RETURN d.title AS title, d.url AS url, d.author AS author, d.category AS category, "
                 "d.published_at AS d_at, c.published_at AS c_at, c.source AS c_source, s.name AS source")
    for r in rows:
        a = articles[r["title"]]
        assert isinstance(r["d_at"], DateTime) and r["d_at"] == r["c_at"]
        assert r["d_at"].to_native() == datetime.fromisoformat(a["published_at"])
        assert r["source"] == r["c_source"] == a["source"]
        assert (r["url"], r["author"], r["category"]) == (a["url"], a["author"], a["category"])


def test_chunk_boundaries_and_overlap(ingested, driver, settings, embedder) -> None:
    """Windows of 256 tokens stepping by 224, computed here from the tokenizer's own offsets."""
    bodies = {a["title"]: a["body"].strip() for a in json.loads(CORPUS.read_text())}
    docs = query(driver, settings, "MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d:Document) WITH d, c ORDER BY c.index "
                 "RETURN d.title AS title, collect(c {.index, .text, .token_count, .start_char, .end_char, .id}) AS chunks")
    multi = 0
    for doc in docs:
        body = bodies[doc["title"]]
        offsets = embedder.tokenizer(body, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
        chunks = doc["chunks"]
        assert [c["index"] for c in chunks] == list(range(len(chunks)))
        for c in chunks:
            first, last = c["index"] * 224, min(c["index"] * 224 + 256, len(offsets)) - 1
            assert c["start_char"] == offsets[first][0] and c["end_char"] == offsets[last][1]
            assert c["text"] == body[c["start_char"]:c["end_char"]]
            assert c["token_count"] == last - first + 1
        assert all(c["token_count"] == 256 for c in chunks[:-1]) and 0 < chunks[-1]["token_count"] <= 256
        assert chunks[-1]["end_char"] == offsets[-1][1]  # nothing lost at the end
        for a, b in zip(chunks, chunks[1:]):
            shared = body[b["start_char"]:a["end_char"]]
            assert len(embedder.tokenizer(shared, add_special_tokens=False)["input_ids"]) == 32
            multi += 1
        chain = query(driver, settings, "MATCH (a:Chunk)-[:NEXT_CHUNK]->(b:Chunk) WHERE a.id IN $ids "
                      "RETURN a.id AS a, b.id AS b", ids=[c["id"] for c in chunks])
        assert {(r["a"], r["b"]) for r in chain} == {(a["id"], b["id"]) for a, b in zip(chunks, chunks[1:])}
    assert multi >= 8  # the long articles really were split


def test_reingest_changes_nothing(ingested, driver, settings, embedder) -> None:
    before = snapshot(driver, settings.neo4j_database)
    ids_before = query(driver, settings, "MATCH (n) RETURN elementId(n) AS e ORDER BY e")
    again = ingest_corpus(CORPUS, settings, driver, embedder=embedder, progress=False)
    assert again.written == 0 and again.unchanged == 18
    assert snapshot(driver, settings.neo4j_database) == before
    assert query(driver, settings, "MATCH (n) RETURN elementId(n) AS e ORDER BY e") == ids_before


def test_changed_chunking_replaces_chunks(ingested, driver, settings, embedder) -> None:
    from dataclasses import replace

    smaller = replace(settings, chunk_size=128, chunk_overlap=16)
    summary = ingest_corpus(CORPUS, smaller, driver, embedder=embedder, progress=False)
    assert summary.written == 18
    stats = query(driver, settings, "MATCH (c:Chunk) RETURN count(c) AS n, max(c.token_count) AS biggest")[0]
    assert stats["n"] == summary.chunks > ingested.chunks and stats["biggest"] == 128


def test_changed_quantization_rebuilds_the_vector_index(ingested, driver, settings, embedder) -> None:
    from dataclasses import replace

    from mhgraph.retrieval import build_retriever

    def index_config():
        return query(driver, settings, "SHOW INDEXES YIELD name, options WHERE name = $name RETURN options",
                     name=VECTOR_INDEX)[0]["options"]["indexConfig"]

    question = "Which outlet covered the ruling on the lawsuit?"
    retriever = build_retriever("vector", driver, settings, embedder)
    exact = [c.chunk_id for c in retriever.search(question, top_k=5).final_ranking()]
    before = snapshot(driver, settings.neo4j_database)
    summary = ingest_corpus(CORPUS, replace(settings, vector_quantization="binary"), driver, embedder=embedder,
                            progress=False)
    assert summary.written == 0  # the chunks stay; only the index is rebuilt
    assert index_config()["vector.quantization.type"] == "BINARY"
    assert snapshot(driver, settings.neo4j_database) == before
    assert len(retriever.search(question, top_k=5).final_ranking()) == len(exact) == 5
    ingest_corpus(CORPUS, settings, driver, embedder=embedder, progress=False)
    assert index_config()["vector.quantization.type"] == "NONE"


def test_quotes_and_braces_in_titles_survive(ingested, driver, settings) -> None:
    title = next(a["title"] for a in json.loads(CORPUS.read_text()) if '"' in a["title"] and "}" in a["title"])
    rows = query(driver, settings, "MATCH (d:Document {title: $title}) RETURN d.title AS title", title=title)
    assert rows == [{"title": title}]


def test_flat_format_gives_same_text_without_metadata(empty_graph, settings, embedder) -> None:
    summary = ingest_corpus(FLAT, settings, empty_graph, embedder=embedder, progress=False)
    assert summary.format == "flat" and summary.documents == 18 and summary.sources == 0
    titles = {a.title for a in read_corpus(CORPUS).articles}
    rows = query(empty_graph, settings, "MATCH (d:Document) RETURN d.title AS title, d.published_at AS at, "
                 "COUNT { (d)-[:PUBLISHED_BY]->() } AS sources")
    assert {r["title"] for r in rows} == titles
    assert all(r["at"] is None and r["sources"] == 0 for r in rows)
    from mhgraph.ingest.chunking import TokenChunker

    chunker = TokenChunker(embedder.tokenizer, 256, 32)
    assert summary.chunks == sum(len(chunker.split(a.body)) for a in read_corpus(CORPUS).articles)


def test_format_flag_overrides_detection(empty_graph, settings, embedder, tmp_path: Path) -> None:
    flat_named_json = tmp_path / "corpus.data"
    flat_named_json.write_text(FLAT.read_text())
    with pytest.raises(InputError, match=r"corpus\.data:1: expected a JSON list of articles"):
        ingest_corpus(flat_named_json, settings, empty_graph, fmt="json", embedder=embedder, progress=False)
    summary = ingest_corpus(flat_named_json, settings, empty_graph, fmt="flat", embedder=embedder, progress=False)
    assert summary.documents == 18


def _big_corpus(path: Path, copies: int) -> int:
    articles = json.loads(CORPUS.read_text())
    big = [{**a, "title": f"{a['title']} (part {i})", "url": f"{a['url']}?part={i}"}
           for i in range(copies) for a in articles]
    path.write_text(json.dumps(big))
    return len(big)


def test_resume_after_kill_matches_clean_run(empty_graph, settings, tmp_path: Path) -> None:
    corpus = tmp_path / "big.json"
    total = _big_corpus(corpus, 6)
    cmd = [sys.executable, "-m", "mhgraph.cli", "ingest", str(corpus), "--batch-size", "1", "--no-progress"]
    count = lambda: empty_graph.execute_query("RETURN COUNT{(:Document)} AS n",  # noqa: E731
                                              database_=settings.neo4j_database).records[0]["n"]
    proc = subprocess.Popen(cmd, env=cli_env(settings), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while count() < 5 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed_at = count()
    assert 0 < killed_at < total, f"kill landed outside the write phase ({killed_at} of {total})"

    resumed = subprocess.run(cmd, env=cli_env(settings), capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert f"unchanged {killed_at}" in resumed.stdout  # the finished documents were not redone
    after_resume = snapshot(empty_graph, settings.neo4j_database)

    wipe(empty_graph, settings.neo4j_database)
    clean = subprocess.run(cmd, env=cli_env(settings), capture_output=True, text=True, timeout=600)
    assert clean.returncode == 0, clean.stderr
    assert snapshot(empty_graph, settings.neo4j_database) == after_resume
    assert len(after_resume["documents"]) == total


class _WatchingEmbedder:
    """The real embedder, recording at each call how many chunks it embeds and how many Documents
    the graph already holds."""

    def __init__(self, inner, driver, database: str, started: list | None = None) -> None:
        self.inner, self.driver, self.database = inner, driver, database
        self.calls: list[tuple[int, int]] = []
        self.started = started or []   # threading.Events, set as each call starts

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def embed_documents(self, texts):
        stored = self.driver.execute_query("RETURN COUNT{(:Document)} AS n", database_=self.database).records[0]["n"]
        self.calls.append((len(texts), stored))
        if len(self.calls) <= len(self.started):
            self.started[len(self.calls) - 1].set()
        return self.inner.embed_documents(texts)


def _batches_per_doc(embedder) -> list[int]:
    from mhgraph.ingest.chunking import TokenChunker

    chunker = TokenChunker(embedder.tokenizer, 256, 32)
    return [len(chunker.split(a["body"].strip())) for a in json.loads(CORPUS.read_text())]


def test_ingest_writes_each_batch_before_embedding_the_next(empty_graph, settings, embedder) -> None:
    """Streaming (the default): each embedding call covers one batch of documents, and every
    earlier batch is already written, so memory holds one batch's vectors and a kill loses at
    most that batch."""
    watching = _WatchingEmbedder(embedder, empty_graph, settings.neo4j_database)
    summary = ingest_corpus(CORPUS, settings, empty_graph, embedder=watching, batch_size=5, progress=False)
    per_doc = _batches_per_doc(embedder)
    assert [stored for _, stored in watching.calls] == [0, 5, 10, 15]
    assert [n for n, _ in watching.calls] == [sum(per_doc[i:i + 5]) for i in range(0, 18, 5)]
    assert summary.written == 18 and summary.written_chunks == sum(per_doc) == summary.chunks


def test_overlapped_ingest_writes_while_the_next_batch_embeds(empty_graph, settings, embedder,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """--overlap-writes: batch k is written while batch k+1 is embedded (each write waits until the
    next embedding has started, which the sequential path would never do), yet every batch before
    k is stored by then: at most two batches' vectors in memory."""
    from mhgraph.ingest.writer import GraphWriter

    started = [threading.Event() for _ in range(4)]
    watching = _WatchingEmbedder(embedder, empty_graph, settings.neo4j_database, started=started)
    write, writes = GraphWriter.write, []

    def write_after_next_embedding_starts(self, batch):
        k = len(writes)
        writes.append(k)
        if k + 1 < len(started):
            assert started[k + 1].wait(timeout=60), f"batch {k + 1} was not being embedded while batch {k} was written"
        return write(self, batch)

    monkeypatch.setattr(GraphWriter, "write", write_after_next_embedding_starts)
    summary = ingest_corpus(CORPUS, settings, empty_graph, embedder=watching, batch_size=5, overlap=True,
                            progress=False)
    stored = [n for _, n in watching.calls]
    assert writes == [0, 1, 2, 3] and len(stored) == 4
    assert all(max(0, 5 * (k - 1)) <= n <= 5 * k for k, n in enumerate(stored)), stored
    assert summary.written == 18 and summary.written_chunks == summary.chunks == sum(_batches_per_doc(embedder))
    assert summary.embed_seconds > 0 and summary.write_seconds > 0


def test_overlap_does_not_change_what_is_stored(empty_graph, settings, embedder) -> None:
    for name, overlap in (("overlapped", True), ("sequential", False)):
        ingest_corpus(CORPUS, replace(settings, corpus=name), empty_graph, embedder=embedder, batch_size=4,
                      overlap=overlap, progress=False)
    records, _, _ = empty_graph.execute_query(
        "MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d:Document) "
        "RETURN c.corpus AS corpus, d.title AS title, c.index AS i, c.text AS text, c.embedding AS e "
        "ORDER BY title, i", database_=settings.neo4j_database)
    by_corpus = {name: [(r["title"], r["i"], r["text"], r["e"]) for r in records if r["corpus"] == name]
                 for name in ("overlapped", "sequential")}
    assert len(by_corpus["overlapped"]) == sum(_batches_per_doc(embedder))
    assert by_corpus["overlapped"] == by_corpus["sequential"]


def test_freed_heap_pages_go_back_to_the_system() -> None:
    """release_free_memory (called after every ingest batch) returns the free pages between live
    blocks, which glibc would otherwise keep: run in a fresh interpreter so the heap is its own."""
    script = (
        "from mhgraph.ingest.memory import release_free_memory\n"
        "rss = lambda: next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmRSS'))\n"
        "blocks = [bytearray(16000) for _ in range(12000)]\n"
        "del blocks[::2]\n"
        "before = rss()\n"
        "print(release_free_memory(), before, rss())\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    released, before, after = out.stdout.split()
    assert released == "True"
    assert int(before) - int(after) > 50_000   # KiB: most of the ~94 MiB of holes


def test_embed_header_lines_follow_llamaindex_template() -> None:
    from mhgraph.ingest.corpus import Article
    from mhgraph.ingest.header import header, text_to_embed

    article = Article(title="FTX's fall", body="...", line=1, source="TechCrunch",
                      published_at=datetime.fromisoformat("2023-10-05T14:30:00+00:00"))
    assert text_to_embed(article, "Chunk text.", "none") == "Chunk text."
    assert text_to_embed(article, "Chunk text.", "title") == "title: FTX's fall\n\nChunk text."
    assert text_to_embed(article, "Chunk text.", "title+source+date") == (
        "title: FTX's fall\nsource: TechCrunch\npublished_at: 2023-10-05\n\nChunk text.")
    # a field the article lacks (flat corpora have no source or date) is left out, not written empty
    assert header(replace(article, source=None, published_at=None), "title+source+date") == "title: FTX's fall"
    with pytest.raises(ValueError, match="embed_header"):
        header(article, "everything")


def test_embed_header_changes_only_the_vectors_and_is_recorded(ingested, driver, settings, embedder) -> None:
    """The header goes into the embedding, not the stored text; changing it re-embeds every document,
    and re-ingesting with the same header changes nothing."""
    from mhgraph.ingest.header import text_to_embed

    def chunks():
        return query(driver, settings, "MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d:Document) RETURN c.id AS id, "
                     "c.text AS text, c.embedding AS e, d.title AS title, d.embed_header AS header ORDER BY id")

    plain = chunks()
    assert {c["header"] for c in plain} == {"none"}
    headed = replace(settings, embed_header="title+source+date")
    summary = ingest_corpus(CORPUS, headed, driver, embedder=embedder, progress=False)
    assert summary.written == 18 and summary.embed_header == "title+source+date"
    after = chunks()
    assert [(c["id"], c["text"]) for c in after] == [(c["id"], c["text"]) for c in plain]  # same chunks
    assert {c["header"] for c in after} == {"title+source+date"}
    assert all(a["e"] != p["e"] for a, p in zip(after, plain))
    # each vector is the embedding of the header above the chunk's text
    articles = {a.title: a for a in read_corpus(CORPUS).articles}
    sample = after[:5]
    expected = embedder.embed_documents([text_to_embed(articles[c["title"]], c["text"], "title+source+date")
                                         for c in sample])
    for c, vector in zip(sample, expected):
        assert c["e"] == pytest.approx([float(x) for x in vector], abs=1e-5)
    again = ingest_corpus(CORPUS, headed, driver, embedder=embedder, progress=False)
    assert again.written == 0 and again.unchanged == 18
    from mhgraph.graph.schema import corpus_embed_header
    assert corpus_embed_header(driver, settings.neo4j_database, summary.corpus) == "title+source+date"


def test_a_write_whose_lock_wait_is_stopped_is_tried_again(empty_graph, settings) -> None:
    """A write waiting on a lock whose transaction the server stops (as it does when shutting down:
    LockClientStopped, a client error the driver does not retry) is tried again and lands once;
    any other client error is not retried."""
    from neo4j.exceptions import ClientError

    from mhgraph.ingest.writer import execute_write_retrying

    db = settings.neo4j_database
    empty_graph.execute_query("CREATE (:Held {n: 0})", database_=db)
    tries: list[int] = []
    outcome: dict[str, object] = {}

    def add_ten(tx) -> None:
        tries.append(1)
        tx.run("MATCH (h:Held) SET h.n = h.n + 10").consume()

    def write() -> None:
        with empty_graph.session(database=db) as session:
            try:
                execute_write_retrying(session, add_ten)
                outcome["written"] = True
            except Exception as exc:   # noqa: BLE001 - the assertion below shows it
                outcome["error"] = exc

    def blocked(attempts: int) -> list[str]:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            records, _, _ = empty_graph.execute_query(
                "SHOW TRANSACTIONS YIELD transactionId, status WHERE status STARTS WITH 'Blocked' "
                "RETURN transactionId AS id", database_=db)
            if records and len(tries) == attempts:
                return [r["id"] for r in records]
            time.sleep(0.1)
        pytest.fail(f"no write waited on the lock (tries {len(tries)}, {outcome})")

    holder = empty_graph.session(database=db)
    held = holder.begin_transaction()
    held.run("MATCH (h:Held) SET h.n = 1").consume()
    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    try:
        empty_graph.execute_query("TERMINATE TRANSACTIONS $ids", ids=blocked(1), database_=db)
        blocked(2)    # tried again, and waiting again
    finally:
        held.rollback()
        holder.close()
        thread.join(60)
    assert outcome == {"written": True} and len(tries) == 2
    records, _, _ = empty_graph.execute_query("MATCH (h:Held) RETURN h.n AS n", database_=db)
    assert records[0]["n"] == 10

    def bad(tx) -> None:
        tries.append(1)
        tx.run("MATCH (h:Held) SET h.n = ").consume()

    with empty_graph.session(database=db) as session, pytest.raises(ClientError):
        execute_write_retrying(session, bad)
    assert len(tries) == 3
