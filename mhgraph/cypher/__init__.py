"""The Cypher mhgraph runs, kept as .cypher files that can be pasted into Neo4j Browser.

Every value is a query parameter ($name). Files hold one statement each; `load("ingest/merge_chunks")`
returns the text of `ingest/merge_chunks.cypher` with its leading `//` comment lines removed.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=None)
def load(name: str) -> str:
    text = resources.files(__package__).joinpath(f"{name}.cypher").read_text(encoding="utf-8")
    body = [line for line in text.splitlines() if not line.lstrip().startswith("//")]
    return "\n".join(body).strip().rstrip(";")


def load_statements(name: str) -> list[str]:
    """A file of several statements, each ended by ';' at the end of a line."""
    statements, current = [], []
    for line in load(name).splitlines():
        current.append(line)
        if line.rstrip().endswith(";"):
            statements.append("\n".join(current).strip().rstrip(";"))
            current = []
    if "".join(current).strip():
        statements.append("\n".join(current).strip())
    return statements
