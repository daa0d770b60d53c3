"""Fixtures: one real Neo4j server for the whole test session.

By default the tests install and start mhgraph's own local server in a temporary home on ports
17687/17474 (MHGRAPH_TEST_BOLT_PORT / MHGRAPH_TEST_HTTP_PORT change them), so a server a user
runs on the default ports is never touched. With NEO4J_URI set, the tests use that server instead
and EMPTY ITS DATABASE between tests: point it only at a scratch server.

Two tiers: every test that needs Neo4j carries the `neo4j` marker, so `pytest -m "not neo4j"` runs
the rest with no server. The marker is put on automatically for tests whose fixtures include
NEO4J_FIXTURES (a fixture that depends on one of them counts too: pytest lists the whole closure);
tests that start a server some other way are marked by hand (test_server_install.py,
test_server.py, test_browser.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mhgraph.config import Settings, load_settings
from mhgraph.graph.connection import connect

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(os.environ.get("MHGRAPH_TEST_ARTIFACTS", REPO / "artifacts"))
SAMPLE = REPO / "mhgraph" / "data" / "sample"

# the fixtures that start or reach the test server (settings alone only names it)
NEO4J_FIXTURES = frozenset({"server", "driver", "empty_graph"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if NEO4J_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.neo4j)


@pytest.fixture(scope="session")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    if os.environ.get("NEO4J_URI"):
        return load_settings()
    home = tmp_path_factory.mktemp("neo4j-home")
    return load_settings({
        "home": home,
        "bolt_port": int(os.environ.get("MHGRAPH_TEST_BOLT_PORT", "17687")),
        "http_port": int(os.environ.get("MHGRAPH_TEST_HTTP_PORT", "17474")),
    })


@pytest.fixture(scope="session")
def server(settings: Settings, request: pytest.FixtureRequest):
    """The running local server (None when the tests use an external NEO4J_URI)."""
    if "not neo4j" in (request.config.option.markexpr or ""):
        pytest.fail("the server was asked for under -m 'not neo4j': mark the test that needs it with "
                    "@pytest.mark.neo4j or give it one of conftest.NEO4J_FIXTURES", pytrace=False)
    if not settings.uses_local_server:
        yield None
        return
    from mhgraph.server import LocalNeo4j

    local = LocalNeo4j(settings)
    local.start()
    yield local
    local.stop()


@pytest.fixture(scope="session")
def driver(settings: Settings, server):
    with connect(settings) as drv:
        yield drv


@pytest.fixture(scope="session")
def embedder():
    from mhgraph.embeddings.sentence import SentenceEmbedder

    return SentenceEmbedder()


def wipe(driver, database: str) -> None:
    """Empty the database: data, constraints and indexes."""
    with driver.session(database=database) as session:  # IN TRANSACTIONS needs an auto-commit transaction
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()
    for kind in ("CONSTRAINT", "INDEX"):
        records, _, _ = driver.execute_query(
            f"SHOW {kind}ES YIELD name, type WHERE type <> 'LOOKUP' RETURN name" if kind == "INDEX"
            else "SHOW CONSTRAINTS YIELD name RETURN name",
            database_=database,
        )
        for r in records:
            driver.execute_query(f"DROP {kind} $name IF EXISTS", name=r["name"], database_=database)


@pytest.fixture
def empty_graph(driver, settings: Settings):
    wipe(driver, settings.neo4j_database)
    return driver


def cli_env(settings: Settings) -> dict[str, str]:
    """Environment that points a `mhgraph` subprocess at the test server."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "MHGRAPH_CONFIG": str(REPO / "tests" / "no-config.toml")}
    if settings.uses_local_server:
        env.update({"MHGRAPH_HOME": str(settings.home), "MHGRAPH_BOLT_PORT": str(settings.bolt_port),
                    "MHGRAPH_HTTP_PORT": str(settings.http_port)})
        env.pop("NEO4J_URI", None)
    return env


def eval_run_dir(stdout: str) -> Path:
    """The run folder `mhgraph eval` names on its last line ("run ID: FOLDER (...)")."""
    return Path(stdout.strip().splitlines()[-1].split(": ", 1)[1].split(" (")[0])


def run_cli(settings: Settings, *args: str, timeout: float = 600,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mhgraph.cli", *args], env={**cli_env(settings), **(env or {})},
                          capture_output=True, text=True, timeout=timeout)
