"""The machine and package versions a benchmark ran with, recorded beside its results."""

from __future__ import annotations

import os
import platform
from importlib import metadata
from pathlib import Path
from typing import Any


def machine() -> dict[str, Any]:
    cpu = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram_gib = round(int(line.split()[1]) / 1024 ** 2, 1)
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cpu": cpu or platform.processor() or None, "cores": os.cpu_count(), "usable_cores": usable,
            "ram_gib": ram_gib, "os": platform.platform()}


def versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for dist in ("mhgraph", "neo4j-graphrag", "torch", "sentence-transformers", "transformers", "neo4j", "ray"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def describe(info: dict[str, Any]) -> str:
    """One line for a report: CPU, cores, memory, OS."""
    return f"{info['cpu']}, {info['usable_cores']} cores, {info['ram_gib']} GiB, {info['os']}"
