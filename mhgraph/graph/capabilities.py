"""What the connected server can do, detected once; later code picks its query form from it."""

from __future__ import annotations

import re
from dataclasses import dataclass

import neo4j
from neo4j import Driver

from mhgraph import cypher
from mhgraph.errors import MhgraphError


@dataclass(frozen=True)
class Capabilities:
    version: str
    edition: str
    cypher_versions: tuple[str, ...]
    vector_index: bool             # CREATE VECTOR INDEX / db.index.vector.queryNodes (5.11+)
    vector_filter_properties: bool  # vector indexes WITH [n.prop, ...] for in-index filtering (2026.01+)
    search_clause: bool            # Cypher 25 MATCH ... SEARCH ... (2026.01+)

    @property
    def cypher25(self) -> bool:
        return "25" in self.cypher_versions

    def require_search_clause(self, what: str, instead: str = "") -> None:
        """A one-line error where `what` needs the Cypher 25 SEARCH clause and this server lacks it."""
        if not self.search_clause:
            raise MhgraphError(f"{what} needs the Cypher 25 SEARCH clause, in Neo4j 2026.01 or later; this server is "
                               f"{self.version}{': ' + instead if instead else ''}")


def _version_tuple(version: str) -> tuple[int, int]:
    m = re.match(r"(\d+)\.(\d+)", version)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def detect(driver: Driver, database: str | None = None) -> Capabilities:
    records, _, _ = driver.execute_query(cypher.load("schema/components"), database_=database,
                                         routing_=neo4j.RoutingControl.READ)
    kernel = next((r for r in records if r["name"] == "Neo4j Kernel"), records[0])
    language = next((r for r in records if r["name"] == "Cypher"), None)
    version = kernel["versions"][0]
    cypher_versions = tuple(language["versions"]) if language else ("5",)
    at_least = lambda major, minor: _version_tuple(version) >= (major, minor)  # noqa: E731
    modern = at_least(2026, 1) and "25" in cypher_versions
    return Capabilities(
        version=version,
        edition=kernel["edition"],
        cypher_versions=cypher_versions,
        vector_index=at_least(5, 11),
        vector_filter_properties=modern,
        search_clause=modern,
    )
