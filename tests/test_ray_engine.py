"""`--engine ray` (issue 29) on a real local Ray cluster (`ray start --head` and a second node on
this machine) against the real Neo4j: the Ray ingest writes the graph the local engine writes
(nodes, relationships, properties, embeddings); a bad record in one of several files stops the job
before anything is written; an embedding worker killed mid-ingest, and Neo4j restarted mid-write,
still end in the clean run's graph (each fault lands while a write waits on a lock the test
holds, so it is mid-write however fast the machine)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from mhgraph.app.ingestion import ingest_files
from mhgraph.graph.capabilities import detect
from mhgraph.graph.schema import ensure_schema
from tests.conftest import SAMPLE, cli_env, eval_run_dir, run_cli, wipe
from tests.graph_state import whole_graph

pytest.importorskip("ray", reason="the Ray engine needs the 'ray' extra, which the test command installs")

RAY = Path(sys.executable).with_name("ray")
ARTICLES = json.loads((SAMPLE / "corpus.json").read_text())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ray_address():
    """A two-node Ray cluster on this machine, started as a user starts one; stopped after."""
    temp = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))   # Ray's socket paths must stay short
    port = _free_port()
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
    common = ["--disable-usage-stats", f"--temp-dir={temp}", "--object-store-memory=400000000"]
    subprocess.run([str(RAY), "start", "--head", f"--port={port}", "--num-cpus=1", "--include-dashboard=false",
                    *common], env=env, check=True, capture_output=True, timeout=180)
    address = f"127.0.0.1:{port}"
    subprocess.run([str(RAY), "start", f"--address={address}", "--num-cpus=1", *common], env=env, check=True,
                   capture_output=True, timeout=180)
    yield address
    subprocess.run([str(RAY), "stop", "--force"], env=env, capture_output=True, timeout=120)


def ray_env(address: str) -> dict[str, str]:
    return {"RAY_ADDRESS": address, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}


def corpus_file(path: Path, copies: int = 1) -> Path:
    """The sample, `copies` times over (each copy retitled, so it is new documents)."""
    articles = [dict(a, title=f"{a['title']} (copy {k})", url=f"{a.get('url') or a['title']}#{k}")
                if k else a for k in range(copies) for a in ARTICLES]
    path.write_text(json.dumps(articles), encoding="utf-8")
    return path


def assert_same_graph(ray_side: dict, local_side: dict) -> None:
    assert ray_side["nodes"] == local_side["nodes"]
    assert ray_side["relationships"] == local_side["relationships"]
    assert ray_side["embeddings"].keys() == local_side["embeddings"].keys()
    for key, vector in local_side["embeddings"].items():
        assert np.allclose(ray_side["embeddings"][key], vector, atol=1e-5), key


def clean_run(settings, driver, path: Path, corpus: str) -> dict:
    """The local engine's graph of `path` in an empty database (the database is emptied again after)."""
    wipe(driver, settings.neo4j_database)
    ingest_files(replace(settings, corpus=corpus), [path], progress=False)
    graph = whole_graph(driver, settings.neo4j_database)
    wipe(driver, settings.neo4j_database)
    return graph


def test_the_ray_engine_writes_the_graph_the_local_engine_writes(settings, empty_graph, ray_address, tmp_path):
    path = corpus_file(tmp_path / "news.json")
    local = clean_run(settings, empty_graph, path, "news")
    done = run_cli(settings, "ingest", str(path), "--corpus", "news", "--engine", "ray", "--workers", "2",
                   "--no-progress", env=ray_env(ray_address))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "engine    ray: 2 embedding workers on 2 nodes" in done.stdout
    assert f"documents {len(ARTICLES)} keyed by auto (added {len(ARTICLES)}," in done.stdout
    assert_same_graph(whole_graph(empty_graph, settings.neo4j_database), local)

    # a second run finds everything stored: it writes nothing and changes nothing
    again = run_cli(settings, "ingest", str(path), "--corpus", "news", "--engine", "ray", "--no-progress",
                    env=ray_env(ray_address))
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"unchanged {len(ARTICLES)}" in again.stdout and "(nothing to write)" in again.stdout
    assert_same_graph(whole_graph(empty_graph, settings.neo4j_database), local)


def test_chunking_apart_from_the_embedders_as_on_gpus_writes_the_same_graph(settings, empty_graph, ray_address,
                                                                           tmp_path):
    """On GPUs, chunking and the check against the graph run in CPU actors of their own; forced
    here on CPUs, that path writes the local engine's graph and a rerun writes nothing."""
    from mhgraph.ingest.ray_engine import RayIngestOptions

    path = corpus_file(tmp_path / "news.json")
    local = clean_run(settings, empty_graph, path, "news")
    options = RayIngestOptions(address=ray_address, workers=1, chunk_apart=True)
    first = ingest_files(replace(settings, corpus="news"), [path], progress=False, engine="ray", ray=options)
    summary = first.summary
    assert "chunking in up to 2 actors of its own" in summary.engine
    assert summary.written == len(ARTICLES) and summary.written_chunks == summary.chunks > 0
    assert summary.embed_seconds > 0
    assert_same_graph(whole_graph(empty_graph, settings.neo4j_database), local)

    again = ingest_files(replace(settings, corpus="news"), [path], progress=False, engine="ray", ray=options)
    assert again.summary.written == 0 and again.summary.unchanged == len(ARTICLES)
    assert_same_graph(whole_graph(empty_graph, settings.neo4j_database), local)


@pytest.mark.parametrize("engine", ["local", "ray"])
def test_several_files_and_gzip_go_into_one_corpus(settings, empty_graph, ray_address, tmp_path, engine):
    import gzip

    # articles 5 to 9 are in both files: one document each, held by both
    first = tmp_path / "part-1.json"
    first.write_text(json.dumps(ARTICLES[:10]), encoding="utf-8")
    second = tmp_path / "part-2.json.gz"
    second.write_bytes(gzip.compress(json.dumps(ARTICLES[5:]).encode()))
    refused = run_cli(settings, "ingest", str(first), str(second), "--engine", engine, "--no-progress",
                      env=ray_env(ray_address))
    assert refused.returncode != 0 and "name it with --corpus NAME" in refused.stderr
    done = run_cli(settings, "ingest", str(first), str(second), "--corpus", "news", "--engine", engine,
                   "--no-progress", env=ray_env(ray_address))
    assert done.returncode == 0, done.stderr[-2000:]
    records, _, _ = empty_graph.execute_query(
        "MATCH (d:Document {corpus: 'news'}) RETURN d.title AS title, d.files AS files", database_=settings.neo4j_database)
    files = {r["title"]: sorted(r["files"]) for r in records}
    assert len(files) == len(ARTICLES)
    both = sorted([str(first.resolve()), str(second.resolve())])
    assert {t for t, f in files.items() if f == both} == {a["title"] for a in ARTICLES[5:10]}


def test_what_the_ray_engine_cannot_order_or_ingest_is_refused_first(settings, empty_graph, ray_address, tmp_path):
    first = tmp_path / "a.json"
    first.write_text(json.dumps(ARTICLES[:3]), encoding="utf-8")
    other = tmp_path / "b.json"   # the same key (url) as a.json's second article, other content
    other.write_text(json.dumps([dict(ARTICLES[1], body="Another text under the same address.")], indent=1),
                     encoding="utf-8")
    empty = tmp_path / "c.json"
    empty.write_text(json.dumps([dict(ARTICLES[0], body="  ")]), encoding="utf-8")
    clash = run_cli(settings, "ingest", str(first), str(other), "--corpus", "news", "--engine", "ray",
                    "--no-progress", env=ray_env(ray_address))
    assert clash.returncode != 0
    assert f"{other}:2: article" in clash.stderr and f"{first}:" in clash.stderr and "no set order" in clash.stderr
    for engine in ("local", "ray"):
        blank = run_cli(settings, "ingest", str(first), str(empty), "--corpus", "news", "--engine", engine,
                        "--no-progress", env=ray_env(ray_address))
        assert blank.returncode != 0 and f"{empty}: no articles to ingest (1 empty entries)" in blank.stderr
    records, _, _ = empty_graph.execute_query("MATCH (n) RETURN count(n) AS n", database_=settings.neo4j_database)
    assert records[0]["n"] == 0
    # the local engine orders the files: the last one's version is kept
    done = run_cli(settings, "ingest", str(first), str(other), "--corpus", "news", "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    local_only = run_cli(settings, "ingest", str(first), "--corpus", "news", "--workers", "2", "--no-progress")
    assert local_only.returncode != 0 and "--workers go with --engine ray" in local_only.stderr


def test_workers_get_a_share_of_cpus_that_the_nodes_can_place():
    from mhgraph.engine.ray_cluster import ClusterResources

    two_small = ClusterResources(cpus=2, gpus=0, nodes=2, node_cpus=(1.0, 1.0))
    assert two_small.cpus_per_worker(1, reserved=0.3) == 1.0      # not 1.7: no node has it
    assert two_small.cpus_per_worker(2, reserved=0.3) == pytest.approx(0.85)
    uneven = ClusterResources(cpus=10, gpus=0, nodes=2, node_cpus=(8.0, 2.0))
    assert uneven.cpus_per_worker(2, reserved=0.3) == 4.0        # both on the large node
    assert uneven.cpus_per_worker(3, reserved=0.0) == pytest.approx(8 / 3)   # all three on the large node


def test_a_bad_record_in_one_of_several_files_writes_nothing(settings, empty_graph, ray_address, tmp_path):
    good = corpus_file(tmp_path / "good.json")
    bad_articles = [dict(a, title=f"{a['title']} (b)") for a in ARTICLES[:5]]
    bad_articles[3]["published_at"] = "the day before yesterday"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(bad_articles, indent=1), encoding="utf-8")
    # the error names the line where the bad record (the fourth) begins
    record_start = [n for n, text in enumerate(bad.read_text().splitlines(), 1) if text.strip() == "{"][3]
    done = run_cli(settings, "ingest", str(good), str(bad), "--corpus", "news", "--engine", "ray", "--no-progress",
                   env=ray_env(ray_address))
    assert done.returncode != 0
    errors = [x for x in done.stderr.strip().splitlines() if x.startswith("error")]
    assert len(errors) == 1, done.stderr[-2000:]
    assert f"{bad}:{record_start} (record 4)" in errors[0] and "bad date" in errors[0], errors[0]
    records, _, _ = empty_graph.execute_query("MATCH (n) RETURN count(n) AS n", database_=settings.neo4j_database)
    assert records[0]["n"] == 0   # not the good file's documents either, nor a Corpus node


def _processes(fragment: str) -> list[int]:
    """Pids of this machine's processes whose command line holds `fragment` (Ray names its actor
    processes after the stage they run)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if fragment in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _documents(driver, database: str) -> int:
    records, _, _ = driver.execute_query("MATCH (d:Document) RETURN count(d) AS n", database_=database)
    return records[0]["n"]


def _ingest_in_background(settings, path: Path, address: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "mhgraph.cli", "ingest", str(path), "--corpus", "news",
                             "--engine", "ray", "--workers", "2", "--batch-size", "8", "--no-progress"],
                            env={**cli_env(settings), **ray_env(address)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _until(check, job: subprocess.Popen, what: str, timeout: float = 300):
    """Poll `check()` until it returns something true while the job runs; fail naming `what`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and job.poll() is None:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    ended = job.poll() is not None   # reading a running job's stderr would wait for its end
    pytest.fail(f"{what} (job exit {job.poll()}): {job.stderr.read()[-2000:] if ended and job.stderr else ''}")


def _hold_the_corpus(driver, database: str, corpus: str, job: subprocess.Popen):
    """An open transaction holding the write lock on the Corpus node, which every write
    transaction of an ingest takes (next_revision.cypher): the job cannot finish while it is held,
    so the fault lands mid-write however fast this machine is. (The schema must exist first: an
    embedding actor's CREATE ... IF NOT EXISTS of a missing constraint would wait on this lock.)"""
    _until(lambda: driver.execute_query("MATCH (k:Corpus {name: $name}) RETURN count(k) AS n", name=corpus,
                                        database_=database).records[0]["n"], job, "the job made no Corpus node")
    session = driver.session(database=database)
    tx = session.begin_transaction()
    tx.run("MATCH (k:Corpus {name: $name}) SET k.held = true", name=corpus).consume()
    return session, tx


def _blocked_writes(driver, database: str) -> int:
    records, _, _ = driver.execute_query("SHOW TRANSACTIONS YIELD status WHERE status STARTS WITH 'Blocked' "
                                         "RETURN count(*) AS n", database_=database)
    return records[0]["n"]


def _fault_mid_ingest(settings, driver, ray_address, tmp_path, fault, what: str) -> None:
    """Ingest six copies of the sample on Ray, call `fault()` while one of its write transactions
    waits on a lock this test holds, and check the job still ends, with the graph a clean local
    run writes (the held transaction is rolled back, or lost with the server, writing nothing)."""
    path = corpus_file(tmp_path / "news.json", copies=6)
    clean = clean_run(settings, driver, path, "news")
    database = settings.neo4j_database
    dimensions = len(next(iter(clean["embeddings"].values())))
    ensure_schema(driver, database, dimensions, detect(driver, database), settings.vector_quantization)
    job = _ingest_in_background(settings, path, ray_address)
    try:
        session, tx = _hold_the_corpus(driver, database, "news", job)
        try:
            _until(lambda: _blocked_writes(driver, database), job, "no write of the job waited on the held lock")
            written = _documents(driver, database)
            fault()
        finally:
            with contextlib.suppress(Exception):   # gone already when the fault restarted the server
                tx.rollback()
            with contextlib.suppress(Exception):
                session.close()
        _, err = job.communicate(timeout=900)
    finally:
        if job.poll() is None:
            job.kill()
    assert job.returncode == 0, err[-3000:]
    assert written < len(ARTICLES) * 6, f"the job had written every document before {what}"
    assert_same_graph(whole_graph(driver, database), clean)


def test_an_embedding_worker_killed_mid_ingest_still_ends_in_the_clean_graph(settings, driver, ray_address,
                                                                             tmp_path):
    def kill_a_worker() -> None:
        victims = _processes("MapBatches(EmbedStage)")
        assert victims, "no embedding actor process found"
        os.kill(victims[0], signal.SIGKILL)

    _fault_mid_ingest(settings, driver, ray_address, tmp_path, kill_a_worker, "the worker was killed")


def test_neo4j_restarted_mid_write_still_ends_in_the_clean_graph(settings, driver, server, ray_address, tmp_path):
    if server is None:
        pytest.skip("restarts only the local server the tests start (NEO4J_URI names another)")

    def restart() -> None:
        server.stop()
        time.sleep(3)
        server.start()

    _fault_mid_ingest(settings, driver, ray_address, tmp_path, restart, "the server was restarted")


def _results(run_dir: Path) -> dict:
    rows = json.loads((run_dir / "results.json").read_text())
    rows = rows["questions"] if isinstance(rows, dict) else rows
    return {r["id"]: [(c["chunk_id"], round(c["score"], 5)) for h in r["hops"] for c in h["chunks"]] for r in rows}


@pytest.mark.parametrize("method", ["vector", "bm25"])
def test_eval_on_ray_gives_the_results_of_local_workers(settings, empty_graph, ray_address, tmp_path, method):
    ingest_files(replace(settings, corpus="sample"), [SAMPLE / "corpus.json"], progress=False)
    runs = {}
    for engine in ("local", "ray"):
        done = run_cli(settings, "eval", "--sample", "--method", method, "--workers", "2", "--engine", engine,
                       "--runs-dir", str(tmp_path / engine), "--no-progress", "--no-trace",
                       env=ray_env(ray_address))
        assert done.returncode == 0, done.stderr[-2000:]
        run_dir = eval_run_dir(done.stdout)
        runs[engine] = _results(run_dir)
        summary = json.loads((run_dir / "report.json").read_text())
        assert summary["engine"] == engine
    assert runs["ray"] == runs["local"] and len(runs["local"]) > 5


def test_claims_on_ray_write_the_claim_layer_the_local_engine_writes(settings, empty_graph, ray_address):
    sample = replace(settings, corpus="sample", llm_backend="none")
    ingest_files(sample, [SAMPLE / "corpus.json"], progress=False)
    local = run_cli(settings, "claims", "build", "--corpus", "sample", "--no-progress", "--llm-backend", "none")
    assert local.returncode == 0, local.stderr[-2000:]
    expected = whole_graph(empty_graph, settings.neo4j_database)
    wipe(empty_graph, settings.neo4j_database)
    ingest_files(sample, [SAMPLE / "corpus.json"], progress=False)
    done = run_cli(settings, "claims", "build", "--corpus", "sample", "--no-progress", "--llm-backend", "none",
                   "--engine", "ray", "--workers", "2", env=ray_env(ray_address))
    assert done.returncode == 0, done.stderr[-2000:]
    assert_same_graph(whole_graph(empty_graph, settings.neo4j_database), expected)
    assert any(n[0] == ["Claim"] for n in expected["nodes"])


def test_claims_on_ray_with_a_model_keep_each_endpoints_requests_bounded(settings, empty_graph, ray_address):
    """Two OpenAI-compatible endpoints, one request in flight on each: every chunk is extracted by
    the model, both endpoints answer, and no endpoint ever has two requests at once."""
    import threading

    from tests.scripted_llm_server import ScriptedServer, Step

    delay = 0.5   # long enough that the second worker is up before the first has done every batch
    arrivals: dict[int, list[float]] = {0: [], 1: []}
    lock = threading.Lock()

    def answer(n: int):
        def reply(body: dict) -> Step:
            with lock:
                arrivals[n].append(time.monotonic())
            words = body["messages"][-1]["content"].split("Excerpt:\n", 1)[1].split() or ["nothing"]
            return Step(json.dumps({"claims": [{"claim": " ".join(words[:12]), "topic": "news", "target": words[0]}]}),
                        delay=delay)
        return reply

    servers = [ScriptedServer(default=answer(n)) for n in range(2)]
    try:
        ingest_files(replace(settings, corpus="sample"), [SAMPLE / "corpus.json"], progress=False)
        done = run_cli(settings, "claims", "build", "--corpus", "sample", "--no-progress", "--engine", "ray",
                       "--llm-backend", "openai", "--llm-model", "scripted", "--per-endpoint", "1", "--no-cache",
                       "--batch-size", "2",
                       "--endpoints", ",".join(s.base_url for s in servers), env=ray_env(ray_address))
        assert done.returncode == 0, done.stderr[-2000:]
        assert "openai:scripted on 2 endpoints" in done.stdout
        records, _, _ = empty_graph.execute_query(
            "MATCH (c:Chunk {corpus: 'sample'}) RETURN count(c) AS chunks, "
            "count(CASE WHEN c.claims_by = 'openai:scripted' THEN 1 END) AS done", database_=settings.neo4j_database)
        assert records[0]["chunks"] == records[0]["done"] > 0
        assert all(arrivals[n] for n in arrivals), "an endpoint got no request"
        assert sum(len(a) for a in arrivals.values()) == records[0]["chunks"]
        # the workers' usage, summed here, counts every request the endpoints answered
        assert f"openai:scripted on 2 endpoints: {records[0]['chunks']} calls (0 cached)" in done.stdout
        for times in arrivals.values():   # one request at a time: each came after the last was answered
            assert all(b - a >= delay * 0.9 for a, b in zip(times, times[1:])), times
    finally:
        for s in servers:
            s.close()
