"""Neo4j Community jars from Maven Central, pinned with their checksums.

`neo4j-artifacts.json` lists every jar of the server's runtime classpath (the server, the kernel,
Bolt, Neo4j Browser and all they pull in) with its sha256. It is written once by
`mhgraph neo4j lock` and read by `mhgraph neo4j install`, which fetches exactly those jars
through Maven (or any Maven repository named in MHGRAPH_MAVEN_REPOSITORY) and refuses a jar whose
checksum differs.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from tqdm import tqdm

from mhgraph.errors import MhgraphError

LOCK_FILE = Path(__file__).with_name("neo4j-artifacts.json")
MAIN_CLASS = "org.neo4j.server.Neo4jCommunity"
ADMIN_CLASS = "org.neo4j.cli.AdminTool"


@dataclass(frozen=True)
class Artifact:
    group: str
    artifact: str
    version: str
    classifier: str
    sha256: str

    @property
    def file_name(self) -> str:
        suffix = f"-{self.classifier}" if self.classifier else ""
        return f"{self.artifact}-{self.version}{suffix}.jar"

    @property
    def repository_path(self) -> str:
        return f"{self.group.replace('.', '/')}/{self.artifact}/{self.version}/{self.file_name}"


@dataclass(frozen=True)
class Lock:
    neo4j_version: str
    browser_version: str
    main_class: str
    artifacts: tuple[Artifact, ...]


def load_lock(path: Path = LOCK_FILE) -> Lock:
    data = json.loads(path.read_text(encoding="utf-8"))
    return Lock(
        neo4j_version=data["neo4j_version"],
        browser_version=data["browser_version"],
        main_class=data["main_class"],
        artifacts=tuple(Artifact(**a) for a in data["artifacts"]),
    )


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _pom(dependencies: list[tuple[str, str, str, str]], transitive: bool) -> str:
    deps = []
    for group, artifact, version, classifier in dependencies:
        extra = f"<classifier>{escape(classifier)}</classifier>" if classifier else ""
        exclusions = (
            ""
            if transitive
            else "<exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion></exclusions>"
        )
        deps.append(
            f"<dependency><groupId>{escape(group)}</groupId><artifactId>{escape(artifact)}</artifactId>"
            f"<version>{escape(version)}</version>{extra}{exclusions}</dependency>"
        )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        "<groupId>local.mhgraph</groupId><artifactId>neo4j-runtime</artifactId><version>1</version>"
        f"<dependencies>{''.join(deps)}</dependencies></project>"
    )


def _mvn(workdir: Path, *goals: str) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise MhgraphError(
            "Maven ('mvn') is needed to fetch Neo4j's jars: install it, or set MHGRAPH_MAVEN_REPOSITORY "
            "to the base URL of a Maven repository that mirrors Maven Central"
        )
    proc = subprocess.run([mvn, "-B", "-q", *goals], cwd=workdir, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
        raise MhgraphError(f"mvn {' '.join(goals)} failed: {' | '.join(tail)}")


def generate_lock(neo4j_version: str, browser_version: str, path: Path = LOCK_FILE) -> Lock:
    """Resolve the server's runtime classpath transitively and pin it (run by maintainers)."""
    roots = [
        ("org.neo4j.app", "neo4j-server", neo4j_version, ""),
        ("org.neo4j", "neo4j", neo4j_version, ""),
        ("org.neo4j.client", "neo4j-browser", browser_version, ""),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "pom.xml").write_text(_pom(roots, transitive=True), encoding="utf-8")
        _mvn(work, "dependency:list", "-DincludeScope=runtime", "-DoutputFile=deps.txt",
             "-DoutputAbsoluteArtifactFilename=true")
        artifacts = []
        for line in (work / "deps.txt").read_text(encoding="utf-8").splitlines():
            parts = line.strip().split(":")
            if len(parts) < 6 or parts[2] != "jar":
                continue
            if len(parts) == 7:  # group:artifact:jar:classifier:version:scope:file
                group, artifact, _, classifier, version, _, file = parts
            else:
                group, artifact, _, version, _, file = parts
                classifier = ""
            artifacts.append(Artifact(group, artifact, version, classifier, sha256_of(Path(file))))
    artifacts.sort(key=lambda a: (a.group, a.artifact, a.classifier))
    lock = Lock(neo4j_version, browser_version, MAIN_CLASS, tuple(artifacts))
    path.write_text(
        json.dumps(
            {
                "neo4j_version": lock.neo4j_version,
                "browser_version": lock.browser_version,
                "main_class": lock.main_class,
                "artifacts": [a.__dict__ for a in lock.artifacts],
            },
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    return lock


def _missing(lock: Lock, lib: Path) -> list[Artifact]:
    return [
        a for a in lock.artifacts
        if not (lib / a.file_name).is_file() or sha256_of(lib / a.file_name) != a.sha256
    ]


def _fetch_with_maven(missing: list[Artifact], target: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        coords = [(a.group, a.artifact, a.version, a.classifier) for a in missing]
        (work / "pom.xml").write_text(_pom(coords, transitive=False), encoding="utf-8")
        _mvn(work, "dependency:copy-dependencies", f"-DoutputDirectory={target}", "-DexcludeTransitive=true")


def _fetch_from_repository(missing: list[Artifact], target: Path, base_url: str) -> None:
    for a in tqdm(missing, desc="download jars", unit="jar"):
        url = f"{base_url.rstrip('/')}/{a.repository_path}"
        try:
            with urllib.request.urlopen(url, timeout=120) as resp, (target / a.file_name).open("wb") as out:
                shutil.copyfileobj(resp, out)
        except OSError as exc:
            raise MhgraphError(f"could not download {a.file_name} from {url}: {exc}") from exc


def install_jars(cache_dir: Path, lock: Lock | None = None) -> Path:
    """Make sure every pinned jar is in the cache, checksum-verified; return the lib dir."""
    lock = lock or load_lock()
    lib = cache_dir / f"neo4j-community-{lock.neo4j_version}" / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    missing = _missing(lock, lib)
    if not missing:
        return lib
    print(f"Fetching {len(missing)} of {len(lock.artifacts)} Neo4j {lock.neo4j_version} jars ...", flush=True)
    with tempfile.TemporaryDirectory(dir=lib.parent) as tmp:
        staging = Path(tmp)
        if repo := os.environ.get("MHGRAPH_MAVEN_REPOSITORY"):
            _fetch_from_repository(missing, staging, repo)
        else:
            _fetch_with_maven(missing, staging)
        for a in missing:  # verify before anything reaches lib/
            got = staging / a.file_name
            if not got.is_file():
                raise MhgraphError(f"{a.group}:{a.artifact}:{a.version}: jar was not fetched")
            if (digest := sha256_of(got)) != a.sha256:
                raise MhgraphError(f"{a.file_name}: sha256 {digest} does not match the pinned {a.sha256}")
            os.replace(got, lib / a.file_name)
    expected = {a.file_name for a in lock.artifacts}
    for stray in lib.glob("*.jar"):  # jars of another lock must not join the classpath
        if stray.name not in expected:
            stray.unlink()
    return lib
