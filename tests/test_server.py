"""The local Neo4j server: install, start, status, capabilities, password storage, stop/start."""

import json
import stat
import urllib.request

import pytest

from mhgraph.graph.capabilities import detect
from tests.conftest import run_cli

pytestmark = pytest.mark.neo4j   # the server itself is under test


@pytest.fixture
def local(server):
    if server is None:
        pytest.skip("NEO4J_URI points at an external server; the local server is not under test")
    return server


def test_status_reports_version_edition_uri_data_dir(local, settings) -> None:
    status = local.status()
    assert status.running and status.pid
    assert status.version == local.lock.neo4j_version and status.version.startswith("2026.")
    assert status.edition == "community"
    assert status.bolt_uri == f"bolt://127.0.0.1:{settings.bolt_port}"
    assert status.data_dir == settings.home.resolve() / "data" and (status.data_dir / "databases").is_dir()
    out = run_cli(settings, "neo4j", "status")
    assert out.returncode == 0, out.stderr
    assert "running" in out.stdout and local.lock.neo4j_version in out.stdout
    assert "SEARCH clause: True" in out.stdout


def test_generated_password_is_private(local) -> None:
    mode = stat.S_IMODE(local.password_file.stat().st_mode)
    assert mode == 0o600
    assert len(local.password_file.read_text().strip()) >= 16


def test_http_serves_browser_and_discovery(local, settings) -> None:
    with urllib.request.urlopen(f"{local.http_url}/browser/", timeout=10) as resp:
        assert resp.status == 200 and b"<html" in resp.read().lower()
    with urllib.request.urlopen(f"{local.http_url}/", timeout=10) as resp:
        discovery = json.load(resp)
    assert discovery["bolt_direct"] == f"bolt://127.0.0.1:{settings.bolt_port}"
    assert discovery["neo4j_version"] == local.lock.neo4j_version and discovery["neo4j_edition"] == "community"


def test_start_refuses_a_port_in_use(local, settings, tmp_path) -> None:
    from dataclasses import replace

    from mhgraph.errors import MhgraphError
    from mhgraph.server import LocalNeo4j

    other = LocalNeo4j(replace(settings, home=tmp_path / "other-home", http_port=settings.http_port + 1000))
    with pytest.raises(MhgraphError, match=f"port {settings.bolt_port} on 127.0.0.1 is already in use"):
        other.start(timeout=30)
    assert other.pid() is None and local.status().running


def test_capabilities(driver, settings) -> None:
    caps = detect(driver, settings.neo4j_database)
    assert caps.vector_index and caps.cypher25
    assert caps.vector_filter_properties and caps.search_clause  # 2026.x


def test_start_is_idempotent_and_stop_start_keeps_data(local, settings, empty_graph) -> None:
    empty_graph.execute_query("CREATE (:Marker {name: $name})", name="kept", database_=settings.neo4j_database)
    pid = local.pid()
    assert local.start().pid == pid  # already running: same process
    assert local.stop() is True and local.pid() is None and not local.status().running
    assert local.stop() is False
    local.start()
    records, _, _ = empty_graph.execute_query("MATCH (m:Marker) RETURN m.name AS name", database_=settings.neo4j_database)
    assert [r["name"] for r in records] == ["kept"]
