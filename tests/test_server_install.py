"""`mhgraph neo4j install` against the real neo4j-admin and Neo4j: passwords that start with '-',
re-running an install cut short at any step, a lost password, and neo4j-admin's error line.

Every test has its own home and ports (18687/18474 and up, MHGRAPH_TEST_INSTALL_PORT moves them)
and stops the servers it starts.
"""

from __future__ import annotations

import itertools
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError

import mhgraph.server.local as local_module
from mhgraph.config import Settings
from mhgraph.errors import MhgraphError
from mhgraph.server import LocalNeo4j
from mhgraph.server.local import admin_error_line, generate_password
from tests.conftest import cli_env

BOLT_BASE = int(os.environ.get("MHGRAPH_TEST_INSTALL_PORT", "18687"))
_offsets = itertools.count()


class Interrupted(BaseException):
    """Stands for a kill: not an Exception, so no `except Exception` handler can swallow it."""


@pytest.fixture
def make_local(settings: Settings, tmp_path: Path):
    """Build LocalNeo4j instances on a fresh home and free ports; stop their servers afterwards."""
    if not settings.uses_local_server:
        pytest.skip("NEO4J_URI points at an external server; the local server is not under test")
    offset = next(_offsets)
    test_settings = replace(settings, home=tmp_path / "home", bolt_port=BOLT_BASE + offset,
                            http_port=BOLT_BASE - 213 + offset, neo4j_password=None,
                            heap_size="512m", pagecache_size="64m")
    made: list[LocalNeo4j] = []

    def make(password: str | None = None) -> LocalNeo4j:
        made.append(LocalNeo4j(replace(test_settings, neo4j_password=password)))
        return made[-1]

    yield make
    for local in made:  # killed, not stopped: the home is thrown away and Neo4j's shutdown takes ~11 s
        kill(local)


def kill(local: LocalNeo4j) -> None:
    if (pid := local.pid()) is not None:
        os.kill(pid, signal.SIGKILL)
        while local.pid() is not None:
            time.sleep(0.05)


def bolt_works(local: LocalNeo4j, password: str) -> bool:
    with GraphDatabase.driver(local.bolt_uri, auth=("neo4j", password)) as driver:
        records, _, _ = driver.execute_query("RETURN 1 AS one")
    return records[0]["one"] == 1


def assert_private_password(local: LocalNeo4j, password: str) -> None:
    assert local.password_file.read_text(encoding="utf-8") == password + "\n"
    assert stat.S_IMODE(local.password_file.stat().st_mode) == 0o600


# -- passwords that start with '-' -------------------------------------------------------------
def test_generated_passwords_are_letters_and_digits() -> None:
    passwords = {generate_password() for _ in range(2000)}
    assert len(passwords) == 2000
    assert all(len(p) == 24 and p.isalnum() and p.isascii() for p in passwords)


@pytest.mark.neo4j   # starts servers of its own (make_local)
def test_generated_password_starting_with_dash_works(make_local, monkeypatch) -> None:
    monkeypatch.setattr(local_module, "generate_password", lambda: "-generated-Pass1")
    local = make_local()
    local.start()
    assert_private_password(local, "-generated-Pass1")
    assert bolt_works(local, "-generated-Pass1")


@pytest.mark.neo4j   # starts servers of its own (make_local)
def test_given_password_starting_with_dash_works(make_local) -> None:
    local = make_local(password="--given-Pass2")  # '--' alone ends picocli's options: the hardest case
    local.start()
    assert_private_password(local, "--given-Pass2")
    assert bolt_works(local, "--given-Pass2")


# -- an install cut short, then re-run ----------------------------------------------------------
def _raise_after(monkeypatch, owner: object, name: str) -> None:
    real = getattr(owner, name)

    def wrapper(*args, **kwargs):
        real(*args, **kwargs)
        raise Interrupted(name)

    monkeypatch.setattr(owner, name, wrapper)


@pytest.mark.neo4j   # starts servers of its own (make_local)
@pytest.mark.parametrize("step", [
    (local_module, "install_jars"),      # after the jars
    (LocalNeo4j, "_write_conf"),         # after the config
    (local_module, "write_private"),     # after the password file is written
    (LocalNeo4j, "_admin"),              # after neo4j-admin set the password
], ids=["after-jars", "after-conf", "after-password-file", "after-neo4j-admin"])
def test_install_cut_short_then_rerun_works(make_local, monkeypatch, step) -> None:
    monkeypatch.setattr(local_module, "generate_password", lambda: "-cut-short-Pass3")
    _raise_after(monkeypatch, *step)
    with pytest.raises(Interrupted):
        make_local().install()
    monkeypatch.undo()
    local = make_local()
    local.start()
    assert bolt_works(local, local.password())
    if step[1] in ("write_private", "_admin"):  # the password stored before the cut is the one kept
        assert local.password() == "-cut-short-Pass3"


@pytest.mark.neo4j   # starts servers of its own (make_local)
def test_server_killed_after_first_start_then_rerun_works(make_local) -> None:
    first = make_local()
    first.start()
    password = first.password()
    kill(first)
    again = make_local()
    again.install()
    again.start()
    assert again.password() == password and bolt_works(again, password)


@pytest.mark.neo4j   # starts servers of its own (make_local)
def test_server_killed_during_first_start_then_rerun_works(make_local) -> None:
    first = make_local()
    system_db = first.data_dir / "databases" / "system"
    errors: list[BaseException] = []
    starter = threading.Thread(target=lambda: _catch(errors, first.start))
    starter.start()
    deadline = time.monotonic() + 120
    while not system_db.exists() and time.monotonic() < deadline:  # kill as soon as Neo4j creates it
        time.sleep(0.02)
    assert system_db.exists(), "Neo4j never created its system database"
    os.kill(first.pid(), signal.SIGKILL)
    starter.join(timeout=60)
    assert errors and "Neo4j exited with code -9" in str(errors[0])
    again = make_local()
    again.start()
    assert bolt_works(again, again.password())


def _catch(errors: list[BaseException], fn) -> None:
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
        errors.append(exc)


@pytest.mark.neo4j   # starts servers of its own (make_local)
def test_cli_install_sigkilled_during_neo4j_admin_then_rerun_works(make_local) -> None:
    local = make_local()
    env = {**cli_env(local.settings), "MHGRAPH_HEAP_SIZE": "512m", "MHGRAPH_PAGECACHE_SIZE": "64m"}
    env.pop("NEO4J_PASSWORD", None)
    cmd = [sys.executable, "-m", "mhgraph.cli", "neo4j", "install"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while not local.password_file.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc.poll() is None, "install finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)  # mhgraph and the neo4j-admin JVM it runs
    proc.wait()
    stored = local.password()
    assert not local.has_started()
    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    started = subprocess.run([*cmd[:-1], "start"], env=env, capture_output=True, text=True, timeout=300)
    assert started.returncode == 0, started.stderr
    assert local.password() == stored and bolt_works(local, stored)


@pytest.mark.neo4j   # starts servers of its own (make_local)
def test_recovers_when_set_initial_password_ran_but_no_password_was_stored(make_local) -> None:
    """The reported state: data/dbms from an interrupted set-initial-password, no password file,
    never started (the old install then stopped every run with 'no password for the local server')."""
    local = make_local()
    installed = local._install_files()
    local._admin(installed, "dbms", "set-initial-password", "--", "nobody-knows-this-1")
    (local.data_dir / "dbms" / "123_auth.ini.tmp").write_text("neo4j:SHA-256,cut")  # its temp file, cut short
    assert (local.data_dir / "dbms").is_dir() and not local.password_file.exists()
    with pytest.raises(MhgraphError, match="run 'mhgraph neo4j install'"):
        local.password()
    local.start()
    assert local.password() != "nobody-knows-this-1" and bolt_works(local, local.password())


# -- a password lost after the first start ------------------------------------------------------
@pytest.mark.neo4j   # starts servers of its own (make_local)
def test_lost_password_after_first_start_is_reset(make_local, monkeypatch) -> None:
    first = make_local()
    first.start()
    old = first.password()
    kill(first)
    first.password_file.unlink()
    local = make_local()
    for step in (local.password, local.install, local.start):
        with pytest.raises(MhgraphError, match="'mhgraph neo4j reset-password' to give it a new one"):
            step()

    env = {**cli_env(local.settings), "MHGRAPH_HEAP_SIZE": "512m", "MHGRAPH_PAGECACHE_SIZE": "64m"}
    env.pop("NEO4J_PASSWORD", None)
    out = subprocess.run([sys.executable, "-m", "mhgraph.cli", "neo4j", "reset-password"], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"password of user 'neo4j' set; stored in {local.password_file}"
    assert local.pid() is None  # it was stopped, and stays stopped
    new = local.password()
    assert new != old
    assert_private_password(local, new)
    local.start()
    assert bolt_works(local, new)
    with pytest.raises(AuthError):
        bolt_works(local, old)

    # A reset to a given password, of the running server, killed while Neo4j runs without
    # authentication (after the ALTER, before its stop): the next start must not keep that server.
    real_stop, calls = LocalNeo4j.stop, []

    def stop_then_cut(self: LocalNeo4j, timeout: float = 60.0) -> bool:
        calls.append(1)
        if len(calls) == 2:  # reset_password's own stop of the server without auth
            raise Interrupted("stop")
        return real_stop(self, timeout)

    given = make_local(password="-chosen-by-user-5")
    monkeypatch.setattr(LocalNeo4j, "stop", stop_then_cut)
    with pytest.raises(Interrupted):
        given.reset_password()
    monkeypatch.setattr(LocalNeo4j, "stop", real_stop)
    assert_private_password(local, "-chosen-by-user-5")
    assert local.pid() is not None and bolt_works(local, "any password at all")  # auth is off
    local.start()
    assert bolt_works(local, "-chosen-by-user-5")
    with pytest.raises(AuthError):
        bolt_works(local, "any password at all")

    # Re-run on the running server, with the password it already has (Neo4j refuses to ALTER to
    # the same one): restarted, unchanged.
    assert local.reset_password() is True
    assert bolt_works(local, "-chosen-by-user-5")


# -- neo4j-admin's error line -------------------------------------------------------------------
@pytest.mark.neo4j   # starts servers of its own (make_local)
def test_admin_error_names_the_line_that_says_what_went_wrong(make_local) -> None:
    local = make_local()
    installed = local._install_files()
    cases = [  # real neo4j-admin runs: picocli errors come before its usage text
        (("-abcdefgh",), "Missing required parameter: '<password>'"),
        (("--nonsense", "abcdefgh"), "Unknown option: '--nonsense'"),
    ]
    for args, line in cases:
        with pytest.raises(MhgraphError) as err:
            local._admin(installed, "dbms", "set-initial-password", *args)
        assert str(err.value) == f"neo4j-admin dbms set-initial-password failed: {line}"
    (local.data_dir / "dbms").write_text("a file where neo4j-admin wants a directory")
    with pytest.raises(MhgraphError, match=r"set-initial-password failed: java\.nio\.file\.FileSystemException: "
                                           r"\S*auth\.ini\.tmp: Not a directory$"):
        local.install()


def test_admin_error_line_falls_back_to_the_last_line() -> None:
    assert admin_error_line("Starting\n  Something odd happened  \n\n") == "Something odd happened"
    assert admin_error_line("Run with '--verbose' for a more detailed error message.\n") == "no output"
    assert admin_error_line("Full exception details written to: /x/logs/trace.log\nPlease provide this file if "
                            "requesting neo4j support\njava.io.IOException: disk full\n") == "java.io.IOException: disk full"
    assert admin_error_line("") == "no output"
    assert admin_error_line("Unknown option: '-x'\nUSAGE\n  Default: false\n") == "Unknown option: '-x'"


def test_status_of_a_home_never_installed_says_so(settings: Settings, tmp_path: Path) -> None:
    if not settings.uses_local_server:
        pytest.skip("NEO4J_URI points at an external server; the local server is not under test")
    home = replace(settings, home=tmp_path / "never", bolt_port=BOLT_BASE + 90, http_port=BOLT_BASE - 213 + 90)
    out = subprocess.run([sys.executable, "-m", "mhgraph.cli", "neo4j", "status"], env=cli_env(home),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == (f"state:    not installed in {home.home.resolve()} ('mhgraph neo4j start' "
                                          "installs and starts it)")
    local = LocalNeo4j(home)
    local._write_conf(local.conf_dir, auth=True)   # as install writes it (no jars fetched here); never started
    assert local.status().lines()[0] == "state:    stopped"
