"""Neo4j Community jars from Maven Central, pinned with their checksums.

`neo4j-artifacts.json` lists every jar of the server's runtime classpath (the server, the kernel,
Bolt, Neo4j Browser and all they pull in) with its sha256. It is written once by
`mhgraph neo4j lock` and read by `mhgraph neo4j install`, which fetches exactly those jars
through Maven (or any Maven repository named in MHGRAPH_MAVEN_REPOSITORY) and refuses a jar whose
checksum differs.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mhgraph.maven import (
    Artifact,
    fetch_artifacts,
    missing_artifacts,
    mvn,
    pom,
    sha256_of,
)

LOCK_FILE = Path(__file__).with_name("neo4j-artifacts.json")
MAIN_CLASS = "org.neo4j.server.Neo4jCommunity"
ADMIN_CLASS = "org.neo4j.cli.AdminTool"


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


def generate_lock(neo4j_version: str, browser_version: str, path: Path = LOCK_FILE) -> Lock:
    """Resolve the server's runtime classpath transitively and pin it (run by maintainers)."""
    roots = [
        ("org.neo4j.app", "neo4j-server", neo4j_version, ""),
        ("org.neo4j", "neo4j", neo4j_version, ""),
        ("org.neo4j.client", "neo4j-browser", browser_version, ""),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "pom.xml").write_text(pom(roots, transitive=True), encoding="utf-8")
        mvn(work, "dependency:list", "-DincludeScope=runtime", "-DoutputFile=deps.txt",
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


def install_jars(cache_dir: Path, lock: Lock | None = None) -> Path:
    """Make sure every pinned jar is in the cache, checksum-verified; return the lib dir."""
    lock = lock or load_lock()
    lib = cache_dir / f"neo4j-community-{lock.neo4j_version}" / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    missing = missing_artifacts(lock.artifacts, lib)
    if not missing:
        return lib
    print(f"Fetching {len(missing)} of {len(lock.artifacts)} Neo4j {lock.neo4j_version} jars ...", flush=True)
    fetch_artifacts(missing, lib)
    expected = {a.file_name for a in lock.artifacts}
    for stray in lib.glob("*.jar"):  # jars of another lock must not join the classpath
        if stray.name not in expected:
            stray.unlink()
    return lib
