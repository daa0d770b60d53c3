"""Install, start, stop and inspect a local Neo4j Community server.

Layout under `settings.home`: conf/neo4j.conf (generated), data/, logs/ (console.log holds the
JVM's output), run/neo4j.pid, and `password` (0600): the server's password, stored before
neo4j-admin sets it so that an install stopped at any point can be re-run.
The jars live in the user cache dir, shared by every home.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import string
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from neo4j import GraphDatabase
from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable

from mhgraph.config import Settings
from mhgraph.errors import MhgraphError
from mhgraph.server.artifacts import ADMIN_CLASS, install_jars, load_lock
from mhgraph.server.java import find_java

MIN_PASSWORD_LENGTH = 8  # Neo4j's default dbms.security.auth_minimum_password_length
# Letters and digits only: token_urlsafe's '-' and '_' could start the password, and
# neo4j-admin (picocli) would read a leading '-' as an option.
PASSWORD_ALPHABET = string.ascii_letters + string.digits
# neo4j-admin prints its error first, then the usage text or "Run with '--verbose' ..."; an
# exception comes after "Full exception details written to: <file>" and "Please provide this file ...".
_ADMIN_ERROR_LINE = re.compile(r"error|fail|invalid|unknown|missing|unmatched|exception|denied|cannot", re.I)
_ADMIN_NOISE = ("--verbose", "Full exception details written to", "Please provide this file")


def generate_password(length: int = 24) -> str:
    return "".join(secrets.choice(PASSWORD_ALPHABET) for _ in range(length))


def admin_error_line(output: str) -> str:
    """The line of neo4j-admin's output that says what went wrong, else its last line."""
    lines = [l.strip() for l in output.splitlines() if l.strip() and not any(n in l for n in _ADMIN_NOISE)]
    return next((l for l in lines if _ADMIN_ERROR_LINE.search(l)), lines[-1] if lines else "no output")


def write_private(path: Path, text: str) -> None:
    """Write a 0600 file via a temp file and a rename, so a kill leaves the old or the new file, never half."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as fh:
            os.fchmod(fh.fileno(), 0o600)  # a leftover temp file keeps its old mode through O_CREAT
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@dataclass(frozen=True)
class Installation:
    java: Path
    java_major: int
    lib: Path


@dataclass(frozen=True)
class ServerStatus:
    running: bool
    installed: bool   # its configuration written: 'mhgraph neo4j install' or 'start' has run in this home
    pid: int | None
    version: str | None
    edition: str | None
    bolt_uri: str
    browser_url: str
    home: Path
    data_dir: Path
    log_file: Path

    def lines(self) -> list[str]:
        state = (f"running (pid {self.pid})" if self.running else "stopped" if self.installed
                 else f"not installed in {self.home} ('mhgraph neo4j start' installs and starts it)")
        return [
            f"state:    {state}",
            f"version:  {self.version or '-'} {self.edition or ''}".rstrip(),
            f"bolt:     {self.bolt_uri}",
            f"browser:  {self.browser_url}",
            f"data dir: {self.data_dir}",
            f"log:      {self.log_file}",
        ]


def _port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


class LocalNeo4j:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.home = settings.home.expanduser().resolve()
        self.conf_dir = self.home / "conf"
        self.data_dir = self.home / "data"
        self.logs_dir = self.home / "logs"
        self.pid_file = self.home / "run" / "neo4j.pid"
        self.password_file = self.home / "password"
        # reset_password runs the server once from here, with authentication off
        self.no_auth_conf_dir = self.home / "run" / "no-auth-conf"
        self.lock = load_lock()

    # -- paths and credentials -------------------------------------------------------------
    @property
    def bolt_uri(self) -> str:
        return f"bolt://127.0.0.1:{self.settings.bolt_port}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.settings.http_port}"

    @property
    def log_file(self) -> Path:
        return self.logs_dir / "console.log"

    def has_started(self) -> bool:
        """Whether Neo4j has ever started in this home: it creates the system database on first start.

        (Not data/dbms: neo4j-admin set-initial-password creates that before any start.)"""
        return (self.data_dir / "databases" / "system").exists()

    def _known_password(self) -> str | None:
        if self.settings.neo4j_password:
            return self.settings.neo4j_password
        try:
            stored = self.password_file.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise MhgraphError(f"cannot read the local server's password from {self.password_file}: {exc}") from exc
        return stored or None  # an empty file (an old non-atomic write cut short) says nothing

    def password(self) -> str:
        """NEO4J_PASSWORD (or the flag) if given, else the one stored at install."""
        if (password := self._known_password()) is not None:
            return password
        if self.has_started():
            raise MhgraphError(f"no password for the local server in {self.home}: {self.password_file} is missing and "
                               "NEO4J_PASSWORD is unset; set NEO4J_PASSWORD to its password, or run "
                               "'mhgraph neo4j reset-password' to give it a new one")
        raise MhgraphError(f"no password for the local server: set NEO4J_PASSWORD or run 'mhgraph neo4j install' "
                           f"({self.password_file} is missing)")

    def _store_password(self, password: str) -> None:
        if len(password) < MIN_PASSWORD_LENGTH:
            raise MhgraphError(f"NEO4J_PASSWORD must have at least {MIN_PASSWORD_LENGTH} characters for a new server")
        if password != password.strip():  # the file is read back stripped
            raise MhgraphError("NEO4J_PASSWORD must not start or end with whitespace")
        self.home.mkdir(parents=True, exist_ok=True)
        write_private(self.password_file, password + "\n")

    # -- install ---------------------------------------------------------------------------
    def install(self) -> Installation:
        """Fetch jars, check Java, write the config and set the initial password.

        Safe to re-run after a failure or a kill at any point: until Neo4j first starts, every
        run stores the password (if new) and sets it again with neo4j-admin."""
        installed = self._install_files()
        if not self.has_started():  # the initial password only counts before the first start
            self._set_initial_password(installed)
        else:
            self.password()  # fail here, with how to recover, if it is lost
        return installed

    def _install_files(self) -> Installation:
        java, major = find_java(self.settings.java)
        lib = install_jars(self.settings.cache_dir, self.lock)
        for d in (self.conf_dir, self.data_dir, self.logs_dir, self.pid_file.parent):
            d.mkdir(parents=True, exist_ok=True)
        self._write_conf(self.conf_dir, auth=True)
        return Installation(java, major, lib)

    def _write_conf(self, conf_dir: Path, auth: bool) -> None:
        s = self.settings
        conf = f"""# Generated by mhgraph from its settings on every install/start; edit those instead.
server.default_listen_address=127.0.0.1
server.bolt.listen_address=127.0.0.1:{s.bolt_port}
server.bolt.advertised_address=127.0.0.1:{s.bolt_port}
server.http.listen_address=127.0.0.1:{s.http_port}
server.http.advertised_address=127.0.0.1:{s.http_port}
server.http.enabled={str(auth).lower()}
server.https.enabled=false
dbms.security.auth_enabled={str(auth).lower()}
server.directories.data={self.data_dir}
server.directories.logs={self.logs_dir}
server.memory.heap.initial_size={s.heap_size}
server.memory.heap.max_size={s.heap_size}
server.memory.pagecache.size={s.pagecache_size}
dbms.usage_report.enabled=false
"""
        conf_dir.mkdir(parents=True, exist_ok=True)
        (conf_dir / "neo4j.conf").write_text(conf, encoding="utf-8")

    def _set_initial_password(self, installed: Installation) -> None:
        password = self._known_password() or generate_password()
        # Stored first: if neo4j-admin or anything after it is cut short, the next run knows the
        # password and sets it again (set-initial-password overwrites data/dbms/auth.ini).
        self._store_password(password)
        self._admin(installed, "dbms", "set-initial-password", "--", password)  # '--': a password may start with '-'

    def _admin(self, installed: Installation, *args: str) -> None:
        proc = subprocess.run(
            [str(installed.java), "-cp", f"{installed.lib}/*", ADMIN_CLASS, *args],
            env=self._env(self.conf_dir), capture_output=True, text=True,
        )
        if proc.returncode != 0:
            command = " ".join(args[:2])
            raise MhgraphError(f"neo4j-admin {command} failed: {admin_error_line(proc.stdout + proc.stderr)}")

    def _env(self, conf_dir: Path) -> dict[str, str]:
        return {**os.environ, "NEO4J_HOME": str(self.home), "NEO4J_CONF": str(conf_dir)}

    # -- run -------------------------------------------------------------------------------
    def _cmdline(self, pid: int) -> list[bytes] | None:
        try:
            return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return None

    def pid(self) -> int | None:
        """The pid of this home's server if it is alive, else None."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None
        args = self._cmdline(pid)
        if args is not None:  # make sure the pid was not reused by another program
            ours = self.lock.main_class.encode() in args and f"--home-dir={self.home}".encode() in args
            return pid if ours else None
        try:
            os.kill(pid, 0)
        except OSError:
            return None
        return pid

    def _running_without_auth(self, pid: int) -> bool:
        """A server left running by an interrupted reset_password: it must not be used as is."""
        args = self._cmdline(pid) or []
        return f"--config-dir={self.no_auth_conf_dir}".encode() in args

    def _check_ports(self) -> None:
        for port in (self.settings.bolt_port, self.settings.http_port):
            if _port_in_use(port):  # else we would talk to whatever answers there
                raise MhgraphError(f"port {port} on 127.0.0.1 is already in use (another Neo4j?): stop it or "
                                   "choose other ports (--bolt-port/--http-port, MHGRAPH_BOLT_PORT/MHGRAPH_HTTP_PORT)")

    def start(self, timeout: float = 180.0) -> ServerStatus:
        """Start the server (installing first if needed) and return once Bolt answers."""
        if (pid := self.pid()) is not None and self._running_without_auth(pid):
            self.stop()
        if self.pid() is not None:
            self._wait_for_bolt(timeout, None, ("neo4j", self.password()))
            return self.status()
        self._check_ports()
        installed = self.install()
        proc = self._launch(installed, self.conf_dir)
        self._wait_for_bolt(timeout, proc, ("neo4j", self.password()))
        return self.status()

    def _launch(self, installed: Installation, conf_dir: Path) -> subprocess.Popen:
        cmd = [
            str(installed.java),
            f"-Xms{self.settings.heap_size}", f"-Xmx{self.settings.heap_size}",
            "-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError", "-Dfile.encoding=UTF-8",
            "--enable-native-access=ALL-UNNAMED",
            "-cp", f"{installed.lib}/*", self.lock.main_class,
            f"--home-dir={self.home}", f"--config-dir={conf_dir}",
        ]
        with self.log_file.open("ab") as log:
            proc = subprocess.Popen(cmd, env=self._env(conf_dir), stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, cwd=self.home, start_new_session=True)
        self.pid_file.write_text(f"{proc.pid}\n")
        return proc

    def _wait_for_bolt(self, timeout: float, proc: subprocess.Popen | None, auth: tuple[str, str] | None) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if proc is not None and proc.poll() is not None:
                raise MhgraphError(f"Neo4j exited with code {proc.returncode} while starting: {self._log_tail()}")
            try:
                with GraphDatabase.driver(self.bolt_uri, auth=auth) as driver:
                    driver.verify_connectivity()
                return
            except AuthError as exc:
                raise MhgraphError(f"Neo4j at {self.bolt_uri} rejected the password: {exc.message}") from exc
            except (ServiceUnavailable, OSError):
                pass
            if time.monotonic() > deadline:
                raise MhgraphError(f"Neo4j did not answer on {self.bolt_uri} within {timeout:.0f}s; see {self.log_file}")
            time.sleep(0.5)

    # -- lost password ---------------------------------------------------------------------
    def reset_password(self, timeout: float = 180.0) -> bool:
        """Give the 'neo4j' user NEO4J_PASSWORD, else the stored password, else a new one (stored).

        For a server whose password is lost. After the first start, Neo4j runs once with
        authentication off (Bolt on 127.0.0.1 only, no HTTP) to ALTER the user, then stops.
        A running server is restarted; returns whether it was running."""
        was_running = self.stop()
        installed = self._install_files()
        if not self.has_started():
            self._set_initial_password(installed)
        else:
            password = self._known_password() or generate_password()
            self._store_password(password)  # first, so a re-run after a kill sets the same one
            self._alter_password_without_auth(installed, password, timeout)
        if was_running:
            self.start(timeout)
        return was_running

    def _alter_password_without_auth(self, installed: Installation, password: str, timeout: float) -> None:
        self._check_ports()
        self._write_conf(self.no_auth_conf_dir, auth=False)
        proc = self._launch(installed, self.no_auth_conf_dir)
        try:
            self._wait_for_bolt(timeout, proc, None)
            with GraphDatabase.driver(self.bolt_uri, auth=None) as driver:
                driver.execute_query("ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
                                     password=password, database_="system")
        except Neo4jError as exc:  # Neo4j refuses to "change" a password to itself: a re-run after a kill
            if "old password and new password cannot be the same" not in (exc.message or "").lower():
                raise MhgraphError(f"could not set the password of user 'neo4j' in {self.home}: {exc.message}") from exc
        finally:
            self.stop()

    def _log_tail(self) -> str:
        try:
            lines = [l for l in self.log_file.read_text(errors="replace").splitlines() if l.strip()]
        except OSError:
            return "(no log)"
        errors = [l for l in lines if "ERROR" in l or "Exception" in l]
        return (errors or lines or ["(empty log)"])[-1].strip()

    def stop(self, timeout: float = 60.0) -> bool:
        """Stop the server; True if one was running."""
        pid = self.pid()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            return False
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while self.pid() is not None and time.monotonic() < deadline:
            time.sleep(0.3)
        if self.pid() is not None:
            os.kill(pid, signal.SIGKILL)
            time.sleep(0.5)
        self.pid_file.unlink(missing_ok=True)
        return True

    def status(self) -> ServerStatus:
        pid = self.pid()
        version = edition = None
        if pid is not None:
            try:  # the HTTP discovery document answers without credentials
                with urllib.request.urlopen(self.http_url + "/", timeout=5) as resp:
                    info = json.load(resp)
                version, edition = info.get("neo4j_version"), info.get("neo4j_edition")
            except (OSError, ValueError):   # HTTP may answer a moment after Bolt: the version installed
                version, edition = self.lock.neo4j_version, "community"
        return ServerStatus(
            running=pid is not None, installed=(self.conf_dir / "neo4j.conf").is_file(), pid=pid, version=version,
            edition=edition,
            bolt_uri=self.bolt_uri, browser_url=f"{self.http_url}/browser/",
            home=self.home, data_dir=self.data_dir, log_file=self.log_file,
        )
