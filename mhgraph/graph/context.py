"""The graph a command works on: the driver, the database, one corpus, and what the server can do."""

from __future__ import annotations

from dataclasses import dataclass, field

import neo4j

from mhgraph.graph.capabilities import Capabilities, detect
from mhgraph.graph.corpora import resolve_corpus


@dataclass
class GraphContext:
    driver: neo4j.Driver
    database: str | None
    corpus: str
    _capabilities: Capabilities | None = field(default=None, repr=False)

    @property
    def capabilities(self) -> Capabilities:
        """Detected on first use, once."""
        if self._capabilities is None:
            self._capabilities = detect(self.driver, self.database)
        return self._capabilities

    @classmethod
    def open(cls, driver: neo4j.Driver, database: str | None, corpus: str | None) -> "GraphContext":
        """The context of `corpus`, else of the graph's only corpus (a one-line error otherwise)."""
        return cls(driver, database, resolve_corpus(driver, database, corpus))
