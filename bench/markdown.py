"""What the benchmark reports share: number cells, Markdown tables, and the Neo4j server they ran on."""

from __future__ import annotations

import subprocess


def f(value: float | None) -> str:
    """A score cell: three decimals, '-' for none."""
    return "-" if value is None else f"{value:.3f}"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header), *("| " + " | ".join(r) + " |" for r in rows)]


def neo4j_server() -> str:
    """The local server's version line from `mhgraph neo4j status` ('-' when it does not say)."""
    status = subprocess.run(["mhgraph", "neo4j", "status"], capture_output=True, text=True).stdout
    return next((line.split(":", 1)[1].strip() for line in status.splitlines() if line.startswith("server:")), "-")
