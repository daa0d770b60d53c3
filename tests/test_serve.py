"""`mhgraph serve` and `mhgraph mcp` against real servers: uvicorn started on a loopback port by the
test and called with httpx, the MCP server driven by the mcp SDK's own client (stdio and
streamable HTTP), Neo4j the test server, the language model a scripted OpenAI-compatible endpoint
on loopback where a test needs one that streams."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Iterator

import anyio
import httpx
import pytest

from mhgraph.app.search import retrieve
from mhgraph.ingest.pipeline import ingest_corpus
from mhgraph.retrieval import registry
from tests.conftest import SAMPLE, cli_env, run_cli, wipe
from tests.scripted_llm_server import ScriptedServer, Step

QUESTION = "Which company recalled its Atlas Home robots over battery fire risk?"
COMPARED = ("vector", "bm25", "hybrid", "metarag")
OFFLINE = {"MHGRAPH_LLM_BACKEND": "none", "OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(settings, *args: str, env: dict[str, str] | None = None, command: str = "serve",
            ready: str = "/health") -> Iterator[str]:
    """`mhgraph <command>` on a free loopback port until the block ends; yields its base URL."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "mhgraph.cli", command, "--port", str(port), *args],
                            env={**cli_env(settings), **OFFLINE, **(env or {})}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, f"the server exited: {proc.stderr.read()[-1500:]}"
            assert time.monotonic() < deadline, "the server did not start in 120 s"
            try:
                if httpx.get(base + ready, timeout=2).status_code < 500:
                    break
            except httpx.TransportError:
                time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def sample_graph(driver, settings, server, embedder):
    wipe(driver, settings.neo4j_database)
    ingest_corpus(SAMPLE / "corpus.json", settings, driver, embedder=embedder, progress=False)
    return driver


@pytest.fixture(scope="module")
def ingest_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("ingest-root")


@pytest.fixture(scope="module")
def api(sample_graph, settings, tmp_path_factory, ingest_root) -> Iterator[str]:
    # requests that name no corpus search the sample (the graph gets more corpora below)
    with serving(settings, "--corpus", "sample", "--uploads", str(tmp_path_factory.mktemp("uploads")),
                 "--ingest-root", str(ingest_root)) as base:
        yield base


def ids(result: dict) -> list[list[tuple[str, float]]]:
    return [[(c["chunk_id"], round(c["score"], 6)) for c in hop["chunks"]] for hop in result["hops"]]


def test_query_returns_what_the_cli_finds(api, settings) -> None:
    for method in COMPARED:
        response = httpx.post(f"{api}/query", json={"question": QUESTION, "method": method, "k": 4}, timeout=120)
        assert response.status_code == 200, response.text
        body = response.json()
        expected = retrieve(replace(settings, corpus="sample"), method, QUESTION, 4)   # what `mhgraph query` runs
        assert body["method"] == method and body["corpus"] == "sample"
        assert ids(body) == [[(c.chunk_id, round(c.score, 6)) for c in h.chunks] for h in expected.hops], method
        assert all(c["text"] and c["title"] for hop in body["hops"] for c in hop["chunks"])
    # the method's diagnostics come along: metarag's filter
    body = httpx.post(f"{api}/query", json={"question": QUESTION, "method": "metarag", "k": 2}, timeout=60).json()
    assert [d["kind"] for d in body["diagnostics"]] == ["filters"]
    # options over the server's: an option the method does not have is refused, naming it
    bad = httpx.post(f"{api}/query", json={"question": QUESTION, "method": "vector", "options": {"hops": 2}})
    assert bad.status_code == 422 and "options.hops" in bad.json()["detail"]


def test_bad_requests_get_one_line_errors(api) -> None:
    cases = [({"question": QUESTION, "k": 0}, 422, "body.k: Input should be greater than or equal to 1"),
             ({"method": "vector"}, 422, "body.question: Field required"),
             ({"question": QUESTION, "corpus": "nope"}, 404, "no corpus 'nope' in the graph"),
             ({"question": QUESTION, "method": "nope"}, 404, "unknown method 'nope'"),
             ({"question": QUESTION, "colour": "red"}, 422, "body.colour: Extra inputs are not permitted")]
    for payload, status, detail in cases:
        response = httpx.post(f"{api}/query", json=payload)
        assert response.status_code == status, (payload, response.text)
        assert detail in response.json()["detail"] and "\n" not in response.json()["detail"]
    malformed = httpx.post(f"{api}/query", content=b"{not json", headers={"content-type": "application/json"})
    assert malformed.status_code == 422 and "JSON" in malformed.json()["detail"]
    assert httpx.get(f"{api}/runs/nope").status_code == 404
    assert httpx.get(f"{api}/jobs/nope").status_code == 404
    # a method whose layer is not built: refused in one line, as on the command line
    claims = httpx.post(f"{api}/query", json={"question": QUESTION, "method": "claims"})
    assert claims.status_code == 400 and "claims build" in claims.json()["detail"], claims.text
    asked = httpx.post(f"{api}/ask", json={"question": QUESTION, "method": "nope"})
    assert asked.status_code == 404 and "unknown method 'nope'" in asked.json()["detail"]
    # a server without a key answers only to loopback names (a page cannot rebind a name of its own)
    rebound = httpx.get(f"{api}/corpora", headers={"host": "attacker.example"})
    assert rebound.status_code == 400 and "Invalid host header" in rebound.text
    port = api.rsplit(":", 1)[1]
    assert httpx.get(f"http://localhost:{port}/corpora").status_code == 200
    # nor to a page of another origin posting to it (a form needs no permission to be sent)
    posted = httpx.post(f"{api}/query", json={"question": QUESTION}, headers={"origin": "http://evil.example"})
    assert posted.status_code == 403 and "origin http://evil.example may not call" in posted.json()["detail"]
    own = httpx.post(f"{api}/query", json={"question": QUESTION, "k": 1}, headers={"origin": api})
    assert own.status_code == 200   # the docs page at /docs, on this machine


def test_catalogue_endpoints(api, sample_graph, settings, tmp_path) -> None:
    health = httpx.get(f"{api}/health").json()
    assert health["status"] == "ok"
    corpora = {c["name"]: c for c in httpx.get(f"{api}/corpora").json()}
    assert corpora["sample"]["documents"] == len(json.loads((SAMPLE / "corpus.json").read_text()))
    methods = {m["name"]: m for m in httpx.get(f"{api}/methods").json()}
    assert set(methods) == set(registry.names())
    assert "top_k" not in methods["vector"]["options"].get("properties", {})
    assert "filter_mode" in methods["metarag"]["options"]["properties"]
    assert httpx.get(f"{api}/docs").status_code == 200
    assert "/query" in httpx.get(f"{api}/openapi.json").json()["paths"]
    # a run stored by `mhgraph eval` is listed and shown
    done = run_cli(settings, "eval", "--sample", "--method", "bm25", "-k", "3", "--run-id", "served",
                   "--runs-dir", str(tmp_path / "runs"), "--no-progress")
    assert done.returncode == 0, done.stderr
    runs = {r["id"]: r for r in httpx.get(f"{api}/runs").json()}
    assert runs["served"]["method"] == "bm25" and runs["served"]["stale"] is False
    shown = httpx.get(f"{api}/runs/served").json()
    assert shown["summary"]["method"] == "bm25" and shown["stale"] is False


def test_ask_answers_with_citations(api) -> None:
    response = httpx.post(f"{api}/ask", json={"question": QUESTION, "k": 3}, timeout=60)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["reader"].startswith("offline") and len(body["chunks"]) == 3
    answer = body["answer"]
    assert answer["failed"] is None and (answer["abstained"] or answer["citations"])
    cited = {c["chunk_id"] for c in answer["citations"]}
    assert cited <= {c["chunk_id"] for c in body["chunks"]}


def wait_for(api: str, job: dict, timeout: float = 300) -> dict:
    deadline = time.monotonic() + timeout
    while job["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, job
        time.sleep(0.5)
        job = httpx.get(f"{api}/jobs/{job['id']}").json()
    return job


def test_ingest_jobs_named_uploaded_and_refused(api, tmp_path, ingest_root) -> None:
    articles = json.loads((SAMPLE / "corpus.json").read_text())[:3]
    named = ingest_root / "named.json"
    named.write_text(json.dumps(articles))
    started = httpx.post(f"{api}/ingest", json={"path": str(named), "corpus": "named"})
    assert started.status_code == 202, started.text
    job = wait_for(api, started.json())
    assert job["status"] == "done", job
    assert job["result"]["added"] == 3 and job["done"] == job["total"] == 3
    # uploaded: the corpus is named after the file, as on the command line
    upload = {"file": ("uploaded.json", json.dumps(articles[:2]).encode(), "application/json")}
    job = wait_for(api, httpx.post(f"{api}/ingest", files=upload).json())
    assert job["status"] == "done" and job["result"]["corpus"] == "uploaded" and job["result"]["added"] == 2
    # the same name uploaded again is the same file: an article it drops is removed
    upload = {"file": ("uploaded.json", json.dumps(articles[:1]).encode(), "application/json")}
    job = wait_for(api, httpx.post(f"{api}/ingest", files=upload).json())
    assert (job["result"]["unchanged"], job["result"]["removed"]) == (1, 1), job
    corpora = {c["name"]: c["documents"] for c in httpx.get(f"{api}/corpora").json()}
    assert corpora["named"] == 3 and corpora["uploaded"] == 1
    assert {j["id"] for j in httpx.get(f"{api}/jobs").json()} >= {job["id"]}
    # bad input: refused before a job is queued, one line naming the file and the line
    broken = '[{"title": "A", "body": "text", "url": "u1"},\n {"title": "B", "body": 7}]'
    refused = httpx.post(f"{api}/ingest", files={"file": ("broken.json", broken.encode(), "application/json")})
    assert refused.status_code == 422 and refused.json()["detail"].startswith("broken.json:2"), refused.text
    missing = httpx.post(f"{api}/ingest", json={"path": str(ingest_root / "absent.json")})
    assert missing.status_code == 422 and "no such file" in missing.json()["detail"]
    # a file outside the server's ingest roots is not read, nor can an upload be put elsewhere
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(articles))
    for path in (str(outside), str(ingest_root / ".." / outside.name)):
        refused = httpx.post(f"{api}/ingest", json={"path": path})
        assert refused.status_code == 422 and "not under an ingest root" in refused.json()["detail"], refused.text
    moved = httpx.post(f"{api}/ingest", data={"path": str(tmp_path / "elsewhere.json")},
                       files={"file": ("x.json", json.dumps(articles).encode(), "application/json")})
    assert moved.status_code == 422 and "path: not a field of an upload" in moved.json()["detail"], moved.text
    assert not (tmp_path / "elsewhere.json").exists()
    plain = httpx.post(f"{api}/ingest", content=json.dumps({"path": str(named)}), headers={"content-type": "text/plain"})
    assert plain.status_code == 422 and "content-type" in plain.json()["detail"]
    bad_key = httpx.post(f"{api}/ingest", json={"path": str(named), "corpus": "named", "document_key": "a b"})
    assert bad_key.status_code == 422 and "document key 'a b'" in bad_key.json()["detail"]
    assert {c["name"]: c["documents"] for c in httpx.get(f"{api}/corpora").json()} == corpora


def test_concurrent_requests_get_their_own_answers(api) -> None:
    questions = [QUESTION, "What did the central bank decide about interest rates?"]
    expected = {(q, m): ids(httpx.post(f"{api}/query", json={"question": q, "method": m, "k": 3}, timeout=60).json())
                for q in questions for m in ("vector", "bm25", "metarag")}
    got: dict[int, tuple] = {}

    def call(i: int) -> None:
        q, m = list(expected)[i % len(expected)]
        response = httpx.post(f"{api}/query", json={"question": q, "method": m, "k": 3}, timeout=120)
        got[i] = (q, m, response.status_code, ids(response.json()) if response.status_code == 200 else response.text)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 24
    for q, m, status, found in got.values():
        assert status == 200, found
        assert found == expected[(q, m)], (q, m)


def test_api_key_is_required_when_set_and_off_loopback(sample_graph, settings) -> None:
    with serving(settings, "--cors-origin", "http://app.example", env={"MHGRAPH_API_KEY": "s3cret"}) as base:
        assert httpx.get(f"{base}/health").status_code == 200   # a load balancer's probe needs no key
        # a browser page at the configured origin may call it; another origin is not told it may
        preflight = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-api-key"}
        allowed = httpx.options(f"{base}/query", headers={"Origin": "http://app.example", **preflight})
        assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == "http://app.example"
        other = httpx.options(f"{base}/query", headers={"Origin": "http://other.example", **preflight})
        assert "access-control-allow-origin" not in other.headers
        refused = httpx.get(f"{base}/corpora")
        assert refused.status_code == 401 and "API key" in refused.json()["detail"]
        assert httpx.get(f"{base}/corpora", headers={"X-API-Key": "wrong"}).status_code == 401
        assert httpx.get(f"{base}/corpora", headers={"X-API-Key": "s3cret"}).status_code == 200
        assert httpx.get(f"{base}/corpora", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        assert httpx.post(f"{base}/query", json={"question": QUESTION}).status_code == 401
    # reachable from other machines without a key: refused before anything starts
    proc = run_cli(settings, "serve", "--host", "0.0.0.0", "--port", str(free_port()), env={"MHGRAPH_API_KEY": ""},
                   timeout=60)
    assert proc.returncode != 0 and "set MHGRAPH_API_KEY" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_a_port_in_use_or_an_unknown_corpus_is_one_line_before_serving(sample_graph, settings) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for command in ("serve", "mcp"):
            args = (command, "--port", str(port)) + (("--transport", "http") if command == "mcp" else ())
            proc = run_cli(settings, *args, env=OFFLINE, timeout=120)
            assert proc.returncode == 1
            assert proc.stderr.strip().splitlines() == [   # not the address, then uvicorn's error
                f"error: cannot listen on 127.0.0.1:{port}: Address already in use (another server there? choose "
                "another --port)"]
    # the corpus named on the line, or in the environment (as a config file's is): not there
    for given, env in ((("--corpus", "nope"), OFFLINE), ((), {**OFFLINE, "MHGRAPH_CORPUS": "nope"})):
        proc = run_cli(settings, "serve", "--port", str(free_port()), *given, env=env, timeout=120)
        assert proc.returncode == 1 and proc.stderr.strip().splitlines()[0].startswith("error: ") \
            and "'nope'" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def events(response: httpx.Response) -> Iterator[tuple[float, str, dict]]:
    """(seconds since the request, event, data) of a server-sent event stream, as they arrive."""
    started, event = time.monotonic(), None
    for line in response.iter_lines():
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            yield time.monotonic() - started, event, json.loads(line[6:])


def test_ask_streams_tokens_before_the_end_and_survives_a_client_that_leaves(sample_graph, settings) -> None:
    endpoint = ScriptedServer(default=lambda body: Step("Veltrix Robotics recalled them [1]", chunk_delay=0.4))
    env = {"MHGRAPH_LLM_BACKEND": "openai", "OPENAI_BASE_URL": endpoint.base_url, "MHGRAPH_LLM_MODEL": "scripted",
           "MHGRAPH_LLM_MAX_RETRIES": "0", "MHGRAPH_LLM_TIMEOUT": "30"}
    try:
        with serving(settings, "--no-cache", "--corpus", "sample", env=env) as base:
            with httpx.stream("POST", f"{base}/ask", json={"question": QUESTION, "k": 3, "stream": True},
                              timeout=60) as response:
                assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
                received = list(events(response))
            kinds = [e for _, e, _ in received]
            assert kinds[0] == "evidence" and kinds[-1] == "answer" and kinds.count("token") == 5
            first_token = next(t for t, e, _ in received if e == "token")
            assert received[-1][0] - first_token > 1.0    # the tokens came as they were generated
            answer, evidence = received[-1][2], received[0][2]
            assert "".join(d["text"] for _, e, d in received if e == "token") == answer["raw"]
            assert answer["text"] == "Veltrix Robotics recalled them" and answer["reader"] == "openai:scripted"
            assert [c["chunk_id"] for c in answer["citations"]] == [evidence["chunks"][0]["chunk_id"]]
            # a client that leaves after the first token: the server goes on serving
            with httpx.stream("POST", f"{base}/ask", json={"question": QUESTION, "stream": True},
                              timeout=60) as response:
                for _, event, _ in events(response):
                    if event == "token":
                        break
            started = time.monotonic()
            again = httpx.post(f"{base}/ask", json={"question": QUESTION, "k": 3}, timeout=60)
            assert again.status_code == 200 and again.json()["answer"]["text"] == "Veltrix Robotics recalled them"
            assert time.monotonic() - started < 30
            assert httpx.get(f"{base}/health").json()["status"] == "ok"
    finally:
        endpoint.close()


async def _mcp_session(client) -> dict:
    async with client:
        tools = {t.name for t in (await client.list_tools()).tools}
        found = await client.call_tool("search", {"question": QUESTION, "method": "bm25", "k": 3})
        explained = await client.call_tool("explain_evidence", {"question": QUESTION, "method": "bm25", "k": 2})
        corpora = await client.call_tool("list_corpora", {})
        answered = await client.call_tool("ask", {"question": QUESTION, "k": 3})
        missing = await client.call_tool("search", {"question": QUESTION, "corpus": "nope"})
    return {"tools": tools, "search": found, "explain": explained, "corpora": corpora, "ask": answered,
            "missing": missing}


def check_mcp(results: dict, settings) -> None:
    assert results["tools"] == {"search", "ask", "list_corpora", "explain_evidence"}
    found = results["search"].structured_content
    expected = retrieve(replace(settings, corpus="sample"), "bm25", QUESTION, 3)
    assert [c["chunk_id"] for c in found["hops"][0]["chunks"]] == [c.chunk_id for c in expected.hops[0].chunks]
    text = results["explain"].content[0].text
    assert text.startswith(f"Question: {QUESTION}") and ":param ids => [" in text and "MATCH (c:Chunk)" in text
    assert expected.hops[0].chunks[0].chunk_id in text
    corpora = results["corpora"].structured_content
    assert "sample" in json.dumps(corpora)
    assert results["ask"].structured_content["answer"]["reader"].startswith("offline")
    assert results["missing"].is_error and "no corpus 'nope'" in results["missing"].content[0].text


def test_mcp_over_stdio_with_the_sdk_client(sample_graph, settings) -> None:
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "mhgraph.cli", "mcp", "--corpus", "sample"],
                                   env={**cli_env(settings), **OFFLINE})
    check_mcp(anyio.run(_mcp_session, Client(params, read_timeout_seconds=120)), settings)


def test_mcp_over_streamable_http_with_a_key(sample_graph, settings) -> None:
    import httpx2
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client

    with serving(settings, "--transport", "http", "--corpus", "sample", command="mcp", env={"MHGRAPH_API_KEY": "k3y"},
                 ready="/mcp") as base:
        assert httpx.post(f"{base}/mcp", json={}).status_code == 401
        transport = streamable_http_client(f"{base}/mcp",
                                           http_client=httpx2.AsyncClient(headers={"Authorization": "Bearer k3y"},
                                                                          timeout=120))
        check_mcp(anyio.run(_mcp_session, Client(transport, read_timeout_seconds=120)), settings)


def test_a_request_naming_a_preset_gets_the_presets_options(sample_graph, settings) -> None:
    """The server rebuilds a method's options with a request's over its own: what neither set
    stays unset, so a shipped pipeline's options (PRESET_OPTIONS) fill it."""
    from mhgraph.serve.resources import Resources

    resources = Resources(settings, cache=False)
    try:
        options = resources.options("compose", {"stages": "in-domain", "expand_k": 9}).with_preset()
        assert (options.candidate_k, options.expand_k, options.rerank_fusion) == (50, 9, "ranks")
        assert resources.options("compose", {}).with_preset().rerank_fusion == "scores"
    finally:
        resources.close()


def test_a_combined_rerankers_parts_score_under_the_servers_lock() -> None:
    from mhgraph.serve.resources import RERANKER_CALLS, Serialized

    class Parts:
        name = "a+b"
        inside: list[bool] = []

        def scores_by_part(self, query: str, passages: list[str]) -> dict[str, list[float]]:
            self.inside.append(served._lock.locked())
            return {"a": [1.0] * len(passages)}

    served = Serialized(Parts(), RERANKER_CALLS)
    assert served.scores_by_part("q", ["p"]) == {"a": [1.0]} and Parts.inside == [True]
