"""Settings resolve flags > environment > config file > defaults; `mhgraph config` masks secrets."""

import subprocess
import sys
from pathlib import Path

import pytest

from mhgraph.config import load_settings
from mhgraph.errors import MhgraphError
from mhgraph.retrieval.registry import check_config

EMPTY = Path(__file__).with_name("no-config.toml")


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "mhgraph.toml"
    path.write_text('neo4j_database = "fromfile"\nneo4j_username = "fileuser"\nchunk_size = 128\n'
                    'neo4j_password = "file-secret-123"\n')
    return path


def test_precedence_flag_env_file_default(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEO4J_DATABASE", "fromenv")
    monkeypatch.delenv("NEO4J_USERNAME", raising=False)
    monkeypatch.delenv("NEO4J_URI", raising=False)
    s = load_settings({"neo4j_database": "fromflag"}, config_file)
    assert s.neo4j_database == "fromflag" and s.origins["neo4j_database"] == "flag"
    s = load_settings({}, config_file)
    assert s.neo4j_database == "fromenv" and s.origins["neo4j_database"] == "env"
    assert s.neo4j_username == "fileuser" and s.origins["neo4j_username"] == "file"
    assert s.chunk_size == 128
    assert s.chunk_overlap == 32 and s.origins["chunk_overlap"] == "default"
    assert s.uses_local_server and s.uri == "bolt://127.0.0.1:7687"


def test_missing_explicit_config_file_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(MhgraphError, match=r"nope\.toml: config file not found"):
        load_settings({}, tmp_path / "nope.toml")
    monkeypatch.setenv("MHGRAPH_CONFIG", str(tmp_path / "gone.toml"))
    with pytest.raises(MhgraphError, match=r"gone\.toml: config file not found"):
        load_settings({})


def test_env_uri_means_external_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NEO4J_URI", "neo4j+s://example.databases.neo4j.io")
    s = load_settings({}, EMPTY)
    assert not s.uses_local_server and s.uri == "neo4j+s://example.databases.neo4j.io"


def test_bad_config_values_are_one_line_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("chunk_sizes = 3\n")
    with pytest.raises(MhgraphError, match=r"bad\.toml: unknown setting 'chunk_sizes'"):
        check_config(load_settings({}, bad).option_sources)
    bad.write_text("chunk_size = [\n")
    with pytest.raises(MhgraphError, match=r"bad\.toml: invalid TOML"):
        load_settings({}, bad)
    with pytest.raises(MhgraphError, match=r"'chunk_overlap' from flag: expected 0 or more and below chunk_size \(32\)"):
        load_settings({"chunk_size": 32, "chunk_overlap": 32}, EMPTY)
    with pytest.raises(MhgraphError, match="'vector_search_ratio' from flag: expected 1 or more, got 0"):
        load_settings({"vector_search_ratio": 0}, EMPTY)
    bad.write_text('vector_quantization = "int8"\n')
    with pytest.raises(MhgraphError, match=r"'vector_quantization' from .*bad\.toml: expected one of none, scalar, binary"):
        load_settings({}, bad)


@pytest.mark.parametrize(("line", "error"), [
    ("chunk_size = 300.9", r"'chunk_size' from .*bad\.toml: expected an integer, got 300\.9"),
    ("chunk_overlap = true", r"'chunk_overlap' from .*bad\.toml: expected an integer, got True"),
    ("bolt_port = 99999999", r"'bolt_port' from .*bad\.toml: expected a port, 1 to 65535, got 99999999"),
    ("llm_timeout = -5", r"'llm_timeout' from .*bad\.toml: expected a number of seconds above 0, got -5"),
    ("llm_max_retries = -2", r"'llm_max_retries' from .*bad\.toml: expected 0 or more, got -2"),
])
def test_numbers_are_taken_as_written_and_within_their_range(tmp_path: Path, line: str, error: str) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(line + "\n")
    with pytest.raises(MhgraphError, match=error):
        load_settings({}, bad)
    # a whole number written as a float is that number
    bad.write_text("chunk_size = 128.0\n")
    assert load_settings({}, bad).chunk_size == 128


def test_port_from_the_environment_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MHGRAPH_BOLT_PORT", "-1")
    with pytest.raises(MhgraphError, match=r"'bolt_port' from \$MHGRAPH_BOLT_PORT: expected a port, 1 to 65535, got -1"):
        load_settings({}, EMPTY)


def test_vector_quantization_is_case_insensitive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MHGRAPH_VECTOR_QUANTIZATION", raising=False)
    assert load_settings({}, EMPTY).vector_quantization == "none"
    monkeypatch.setenv("MHGRAPH_VECTOR_QUANTIZATION", "BINARY")
    assert load_settings({}, EMPTY).vector_quantization == "binary"


def test_config_command_masks_password(config_file: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "NEO4J_PASSWORD": "env-secret-456", "HOME": str(config_file.parent)}
    out = subprocess.run([sys.executable, "-m", "mhgraph.cli", "--config", str(config_file), "config"],
                         capture_output=True, text=True, env=env, check=True).stdout
    assert "env-secret-456" not in out and "file-secret-123" not in out
    password_line = next(l for l in out.splitlines() if l.startswith("neo4j_password"))
    assert "********" in password_line and "[env]" in password_line
    assert any(l.startswith("neo4j_database") and "fromfile" in l and "[file]" in l for l in out.splitlines())


def test_bad_embed_header_names_its_origin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MHGRAPH_EMBED_HEADER", "everything")
    with pytest.raises(MhgraphError, match=r"setting 'embed_header' from \$MHGRAPH_EMBED_HEADER: expected one of "
                                           r"none, title, title\+source\+date, got 'everything'"):
        load_settings({}, EMPTY)
    monkeypatch.setenv("MHGRAPH_EMBED_HEADER", "title+source+date")
    assert load_settings({}, EMPTY).embed_header == "title+source+date"


@pytest.mark.parametrize(("uri", "error"), [
    ("foo", "error: foo: not a Neo4j URI: URI scheme '' is not supported."),
    ("bolt://127.0.0.1:9?x=1", "error: bolt://127.0.0.1:9?x=1: not a Neo4j URI: Routing context (providing URI query"),
    ("bolt://[::1", "error: bolt://[::1: not a Neo4j URI: Invalid IPv6 URL"),
])
def test_a_uri_the_driver_does_not_take_is_one_line_naming_it(tmp_path: Path, uri: str, error: str) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    result = subprocess.run([sys.executable, "-m", "mhgraph.cli", "--uri", uri, "--password", "x", "corpora"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(error), result.stderr
