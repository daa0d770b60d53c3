"""Artifacts from Maven Central (or any Maven repository), pinned with their sha256.

Neo4j's jars and the ONNX embedders packaged in jars are fetched the same way: through Maven
(`mvn`), or straight from the repository named in MHGRAPH_MAVEN_REPOSITORY, into a staging
folder, and moved into place only once every checksum matches.
"""

from __future__ import annotations

import hashlib
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


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def pom(dependencies: list[tuple[str, str, str, str]], transitive: bool) -> str:
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


def mvn(workdir: Path, *goals: str) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise MhgraphError(
            "Maven ('mvn') is needed to fetch artifacts from Maven Central: install it, or set MHGRAPH_MAVEN_REPOSITORY "
            "to the base URL of a Maven repository that mirrors Maven Central"
        )
    proc = subprocess.run([mvn, "-B", "-q", *goals], cwd=workdir, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
        raise MhgraphError(f"mvn {' '.join(goals)} failed: {' | '.join(tail)}")


def _fetch_with_maven(missing: list[Artifact], target: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        coords = [(a.group, a.artifact, a.version, a.classifier) for a in missing]
        (work / "pom.xml").write_text(pom(coords, transitive=False), encoding="utf-8")
        mvn(work, "dependency:copy-dependencies", f"-DoutputDirectory={target}", "-DexcludeTransitive=true")


def _fetch_from_repository(missing: list[Artifact], target: Path, base_url: str) -> None:
    for a in tqdm(missing, desc="download jars", unit="jar"):
        url = f"{base_url.rstrip('/')}/{a.repository_path}"
        try:
            with urllib.request.urlopen(url, timeout=120) as resp, (target / a.file_name).open("wb") as out:
                shutil.copyfileobj(resp, out)
        except OSError as exc:
            raise MhgraphError(f"could not download {a.file_name} from {url}: {exc}") from exc


def missing_artifacts(artifacts: tuple[Artifact, ...] | list[Artifact], directory: Path) -> list[Artifact]:
    """The artifacts not in `directory` with their pinned checksum."""
    return [a for a in artifacts
            if not (directory / a.file_name).is_file() or sha256_of(directory / a.file_name) != a.sha256]


def fetch_artifacts(missing: list[Artifact], directory: Path) -> None:
    """Fetch `missing` into `directory`, each checksum-verified before it gets there."""
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=directory.parent) as tmp:
        staging = Path(tmp)
        if repo := os.environ.get("MHGRAPH_MAVEN_REPOSITORY"):
            _fetch_from_repository(missing, staging, repo)
        else:
            _fetch_with_maven(missing, staging)
        for a in missing:  # verify before anything reaches the directory
            got = staging / a.file_name
            if not got.is_file():
                raise MhgraphError(f"{a.group}:{a.artifact}:{a.version}: jar was not fetched")
            if (digest := sha256_of(got)) != a.sha256:
                raise MhgraphError(f"{a.file_name}: sha256 {digest} does not match the pinned {a.sha256}")
            os.replace(got, directory / a.file_name)
