"""A `neo4j://` routing URI (issue 29, item 4), against the real server the tests start.

The Python driver takes a routing URI to a single server too: it asks the server for its routing
table, which names the server itself for reads and for writes. So the commands are run here over
bolt:// and over neo4j:// and must succeed and give the same graph, output and results.

Where each transaction would go in a cluster is checked in two ways, neither touching Neo4j's own
behaviour: the driver the commands open is wrapped (connection.GraphDatabase) to record the access
mode every call asks for (execute_query's routing_, a session's default_access_mode,
execute_read / execute_write); and the same wrapper can open every transaction READ, as a
secondary would serve it, and then the server itself refuses any write ("Writing in read access
mode not allowed"). Query, ask, eval's retrieval and scoring, corpora, documents list/show, runs
list and the HTTP API's search ask for READ only and run whole on read-only transactions; eval's
traces and ingest ask for WRITE, and an ingest on read-only transactions fails.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any

import neo4j
import pytest
from click.testing import CliRunner

from mhgraph import cypher
from mhgraph.graph import connection
from mhgraph.graph.connection import credentials
from tests.conftest import REPO, SAMPLE, run_cli, wipe
from tests.graph_state import snapshot

READ, WRITE = "READ", "WRITE"
QUESTION = "Which company recalled its Atlas Home robots over battery fire risk?"
METHODS = ("vector", "bm25", "hybrid", "metarag")


# ---- the URIs ---------------------------------------------------------------------------------

def uri_as(settings, scheme: str) -> str:
    """The test server's URI under `scheme` (bolt / neo4j; +s / +ssc kept)."""
    old, rest = settings.uri.split("://", 1)
    return f"{scheme}{old[old.index('+'):] if '+' in old else ''}://{rest}"


def uri_env(settings, scheme: str) -> dict[str, str]:
    """Environment pointing a command at the test server through `scheme`, as a user of a remote
    server sets it (NEO4J_URI and the credentials)."""
    username, password = credentials(settings)
    return {"NEO4J_URI": uri_as(settings, scheme), "NEO4J_USERNAME": username, "NEO4J_PASSWORD": password,
            "MHGRAPH_LLM_BACKEND": "none", "MHGRAPH_CONFIG": str(REPO / "tests" / "no-config.toml")}


def timeless(output: str) -> str:
    """Output with its timings (how many ms, s) taken out."""
    return re.sub(r"\d+(\.\d+)? ?(ms|s)\b", "T", output)


NUMBER = re.compile(r"-?\d+\.\d+")


def assert_same_output(got: str, expected: str, what: Any) -> None:
    """The same lines but for timings, and scores equal to 1e-3 (an embedding computed in another
    process may differ in its last bits)."""
    got, expected = timeless(got), timeless(expected)
    diff = "\n".join(difflib.unified_diff(expected.splitlines(), got.splitlines(), "bolt://", "neo4j://",
                                        lineterm="", n=1))
    assert NUMBER.split(got) == NUMBER.split(expected), (what, diff)
    assert [float(x) for x in NUMBER.findall(got)] == pytest.approx(
        [float(x) for x in NUMBER.findall(expected)], abs=1e-3), (what, diff)


def cli(settings, scheme: str, *args: str):
    proc = run_cli(settings, *args, env=uri_env(settings, scheme))
    assert proc.returncode == 0, f"mhgraph {' '.join(args)} over {scheme}://: {proc.stderr[-2000:]}"
    return proc


# ---- the recording driver ---------------------------------------------------------------------

@functools.cache
def statement_names() -> dict[str, str]:
    """Each statement of mhgraph/cypher as its file's name ('eval/write_retrieved')."""
    names = {}
    root = resources.files(cypher.__name__)
    for folder in root.iterdir():
        if not folder.is_dir() or folder.name.startswith("_"):
            continue
        for file in folder.iterdir():
            if file.name.endswith(".cypher"):
                name = f"{folder.name}/{file.name[:-len('.cypher')]}"
                names[cypher.load(name)] = name
                names.update({s: name for s in cypher.load_statements(name)})
    return names


def name_of(query: Any) -> str:
    text = str(getattr(query, "text", query))
    found = statement_names().get(text.strip().rstrip(";"))
    if found is None and "{label}" not in text:   # a file with its label filled in
        for body, name in statement_names().items():
            if "{label}" in body and re.fullmatch(re.escape(body).replace(re.escape("{label}"), ".+"), text.strip()):
                return name
    return found or " ".join(text.split())[:80]


@dataclass(frozen=True)
class Access:
    mode: str       # what the code asked for: READ or WRITE
    name: str       # the .cypher file, else the statement's start
    how: str        # execute_query, session.run, execute_read, execute_write


class AccessLog(list):
    def modes(self) -> set[str]:
        return {a.mode for a in self}

    def named(self, mode: str) -> set[str]:
        return {a.name for a in self if a.mode == mode}


class Recording:
    """Stands for neo4j.GraphDatabase in mhgraph.graph.connection: its drivers are the real ones,
    wrapped to log the access mode each call asks for; with read_only, every transaction is opened
    READ whatever was asked."""

    def __init__(self, log: AccessLog, read_only: bool) -> None:
        self.log, self.read_only = log, read_only

    def driver(self, uri: str, **config: Any) -> RecordingDriver:
        return RecordingDriver(neo4j.GraphDatabase.driver(uri, **config), self.log, self.read_only)


class RecordingDriver:
    def __init__(self, driver: neo4j.Driver, log: AccessLog, read_only: bool) -> None:
        self._driver, self._log, self._read_only = driver, log, read_only

    def __getattr__(self, name: str) -> Any:
        return getattr(self._driver, name)

    def __enter__(self) -> RecordingDriver:
        return self

    def __exit__(self, *exc: object) -> None:
        self._driver.close()

    def execute_query(self, query_: Any, *args: Any, routing_: Any = neo4j.RoutingControl.WRITE, **kwargs: Any):
        asked = READ if routing_ == neo4j.RoutingControl.READ else WRITE
        self._log.append(Access(asked, name_of(query_), "execute_query"))
        if self._read_only:
            routing_ = neo4j.RoutingControl.READ
        return self._driver.execute_query(query_, *args, routing_=routing_, **kwargs)

    def session(self, **config: Any) -> RecordingSession:
        asked = READ if config.get("default_access_mode", neo4j.WRITE_ACCESS) == neo4j.READ_ACCESS else WRITE
        if self._read_only:
            config["default_access_mode"] = neo4j.READ_ACCESS
        return RecordingSession(self._driver.session(**config), asked, self._log, self._read_only)


class RecordingSession:
    def __init__(self, session: neo4j.Session, asked: str, log: AccessLog, read_only: bool) -> None:
        self._session, self._asked, self._log, self._read_only = session, asked, log, read_only

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    def __enter__(self) -> RecordingSession:
        self._session.__enter__()
        return self

    def __exit__(self, *exc: object) -> Any:
        return self._session.__exit__(*exc)

    def run(self, query: Any, *args: Any, **kwargs: Any):
        self._log.append(Access(self._asked, name_of(query), "session.run"))
        return self._session.run(query, *args, **kwargs)

    def begin_transaction(self, *args: Any, **kwargs: Any):
        raise AssertionError("an explicit transaction: teach RecordingSession to record it")

    def execute_read(self, work: Any, *args: Any, **kwargs: Any):
        return self._session.execute_read(self._traced(work, READ, "execute_read"), *args, **kwargs)

    def execute_write(self, work: Any, *args: Any, **kwargs: Any):
        run = self._session.execute_read if self._read_only else self._session.execute_write
        return run(self._traced(work, WRITE, "execute_write"), *args, **kwargs)

    def _traced(self, work: Any, asked: str, how: str) -> Any:
        log = self._log

        @functools.wraps(work)
        def traced(tx: neo4j.ManagedTransaction, *args: Any, **kwargs: Any) -> Any:
            return work(RecordingTransaction(tx, asked, how, log), *args, **kwargs)
        return traced


class RecordingTransaction:
    def __init__(self, tx: neo4j.ManagedTransaction, asked: str, how: str, log: AccessLog) -> None:
        self._tx, self._asked, self._how, self._log = tx, asked, how, log

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tx, name)

    def run(self, query: Any, *args: Any, **kwargs: Any):
        self._log.append(Access(self._asked, name_of(query), self._how))
        return self._tx.run(query, *args, **kwargs)


@pytest.fixture
def recorded(monkeypatch):
    """recorded(read_only) -> the AccessLog of every driver mhgraph connects from now on."""
    def start(read_only: bool = False) -> AccessLog:
        log = AccessLog()
        monkeypatch.setattr(connection, "GraphDatabase", Recording(log, read_only))
        return log
    return start


def invoke(settings, *args: str, scheme: str = "neo4j"):
    """`mhgraph ARGS` in this process (so through the recording driver), over `scheme`."""
    from mhgraph.cli import cli as root

    result = CliRunner().invoke(root, list(args), env=uri_env(settings, scheme), catch_exceptions=True)
    return result


def ok(result) -> str:
    assert result.exception is None and result.exit_code == 0, (result.output[-2000:], repr(result.exception))
    return result.output


# ---- the graph --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ingested(driver, settings, server) -> dict[str, dict]:
    """The sample corpus ingested over bolt:// and, afresh, over neo4j:// (left in the graph):
    the graph's snapshot after each."""
    graphs = {}
    for scheme in ("bolt", "neo4j"):
        wipe(driver, settings.neo4j_database)
        cli(settings, scheme, "ingest", str(SAMPLE / "corpus.json"), "--no-progress")
        graphs[scheme] = snapshot(driver, settings.neo4j_database)
    return graphs


def test_routing_uri_is_a_routing_driver(settings, server) -> None:
    routed = replace(settings, neo4j_uri=uri_as(settings, "neo4j"), neo4j_password=credentials(settings)[1])
    with connection.connect(routed) as drv:
        assert type(drv).__name__ == "Neo4jDriver"   # the routing driver; bolt:// gives a BoltDriver
        records, _, _ = drv.execute_query("RETURN 1 AS one", routing_=neo4j.RoutingControl.READ,
                                          database_=settings.neo4j_database)
        assert records[0]["one"] == 1


def test_ingest_over_a_routing_uri_writes_the_same_graph(ingested) -> None:
    assert ingested["neo4j"]["documents"] and ingested["neo4j"]["chunks"]
    assert ingested["neo4j"] == ingested["bolt"]


def test_read_commands_print_the_same_over_both_uris(ingested, settings, tmp_path) -> None:
    key = json.loads((SAMPLE / "corpus.json").read_text())[0]["url"]
    commands = [("corpora",), ("documents", "list"), ("documents", "show", "--key", key),
                *[("query", QUESTION, "--method", m, "-k", "4") for m in METHODS[:3]],
                ("ask", QUESTION, "--method", "bm25", "-k", "4")]
    for args in commands:
        over = {scheme: cli(settings, scheme, *args).stdout for scheme in ("bolt", "neo4j")}
        assert over["neo4j"].strip(), args
        assert_same_output(over["neo4j"], over["bolt"], args)


def test_eval_and_runs_over_both_uris(ingested, settings, tmp_path) -> None:
    results = {}
    for scheme in ("bolt", "neo4j"):
        out = tmp_path / scheme
        cli(settings, scheme, "eval", "--method", "bm25", "--sample", "--limit", "3", "-k", "4", "--no-progress",
            "--runs-dir", str(out), "--run-id", f"routing-{scheme}")
        results[scheme] = [(r["id"], [[(c["chunk_id"], c["rank"], c["score"]) for c in h["chunks"]]
                                      for h in r["hops"]])
                           for r in json.loads((out / f"routing-{scheme}" / "results.json").read_text())]
    assert len(results["bolt"]) == 3
    assert_same_output(repr(results["neo4j"]), repr(results["bolt"]), "eval results")
    listed = {scheme: cli(settings, scheme, "runs", "list").stdout for scheme in ("bolt", "neo4j")}
    assert listed["neo4j"] == listed["bolt"] and "routing-neo4j" in listed["bolt"]
    shown = cli(settings, "neo4j", "runs", "show", "routing-bolt", "--runs-dir", str(tmp_path / "elsewhere"))
    assert "bm25" in shown.stdout


# ---- access modes -----------------------------------------------------------------------------

def test_read_commands_ask_for_read_and_run_on_read_only_transactions(ingested, settings, recorded,
                                                                       tmp_path) -> None:
    key = json.loads((SAMPLE / "corpus.json").read_text())[0]["url"]
    commands = [("corpora",), ("documents", "list"), ("documents", "show", "--key", key), ("runs", "list"),
                *[("query", QUESTION, "--method", m, "-k", "4") for m in METHODS],
                ("ask", QUESTION, "--method", "hybrid", "-k", "4"),
                ("eval", "--method", "vector", "--sample", "--limit", "2", "-k", "4", "--no-progress", "--no-trace",
                 "--runs-dir", str(tmp_path / "runs"))]
    for args in commands:
        log = recorded(read_only=True)
        ok(invoke(settings, *args))
        assert log, args
        assert log.modes() == {READ}, (args, sorted(log.named(WRITE)))


def test_eval_reads_then_writes_only_its_traces(ingested, settings, recorded, tmp_path) -> None:
    log = recorded()
    ok(invoke(settings, "eval", "--method", "metarag", "--sample", "--limit", "3", "-k", "4", "--no-progress",
              "--runs-dir", str(tmp_path), "--run-id", "routing-modes"))
    first_write = next(i for i, a in enumerate(log) if a.mode == WRITE)
    assert first_write > 0 and all(a.mode == READ for a in log[:first_write])   # retrieval and scoring
    writes = log.named(WRITE)
    assert {"eval/create_run", "eval/write_questions", "eval/write_retrieved"} <= writes
    assert all(name.startswith("eval/") for name in writes), writes
    # and they are refused on read-only transactions: the check bites
    recorded(read_only=True)
    result = invoke(settings, "eval", "--method", "bm25", "--sample", "--limit", "1", "-k", "4", "--no-progress",
                    "--runs-dir", str(tmp_path), "--run-id", "routing-refused")
    assert isinstance(result.exception, neo4j.exceptions.Neo4jError)
    assert "read access mode" in str(result.exception).lower() or "AccessMode" in str(result.exception.code)


def test_ingest_asks_for_write_and_fails_on_read_only_transactions(ingested, driver, settings, recorded,
                                                                   tmp_path) -> None:
    before = snapshot(driver, settings.neo4j_database)
    small = tmp_path / "two.json"
    small.write_text(json.dumps(json.loads((SAMPLE / "corpus.json").read_text())[:2]), encoding="utf-8")
    recorded(read_only=True)
    result = invoke(settings, "ingest", str(small), "--corpus", "refused", "--no-progress")
    assert isinstance(result.exception, neo4j.exceptions.Neo4jError), (result.output, repr(result.exception))
    assert "read access mode" in str(result.exception).lower() or "AccessMode" in str(result.exception.code)
    assert snapshot(driver, settings.neo4j_database) == before
    log = recorded()
    ok(invoke(settings, "ingest", str(small), "--corpus", "routed", "--no-progress"))
    assert {"ingest/merge_documents", "ingest/merge_chunks"} <= log.named(WRITE)
    assert {a.how for a in log if a.name == "ingest/merge_documents"} == {"execute_write"}
    ok(invoke(settings, "corpora", "delete", "routed"))


def test_http_api_searches_on_read_only_transactions(ingested, settings, recorded) -> None:
    from mhgraph.serve.resources import Resources

    log = recorded(read_only=True)
    routed = replace(settings, neo4j_uri=uri_as(settings, "neo4j"), neo4j_password=credentials(settings)[1],
                     llm_backend="none")
    resources = Resources(routed, cache=False)
    try:
        for method in ("vector", "bm25"):
            assert resources.search(QUESTION, method, 4, "sample").final_ranking()
    finally:
        resources.close()
    assert log and log.modes() == {READ}, sorted(log.named(WRITE))
