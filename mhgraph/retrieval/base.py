"""The one interface every retrieval method implements.

A method answers `search(question, top_k=...)` with a `RetrievalResult`: the evidence per hop
(for hop r, the ranked chunks fetched at that hop, with scores), the query text and metadata
filter used at each hop, and timings. Single-hop methods return one hop.
"""

from __future__ import annotations

import abc
from typing import Any

from mhgraph.types import RetrievalResult


class Retriever(abc.ABC):
    """A retrieval method running as Cypher against Neo4j."""

    name: str

    @property
    def params(self) -> dict[str, Any]:
        """Settings of the method that shape its results, recorded with every evaluation run."""
        return {}

    @abc.abstractmethod
    def search(self, question: str, *, top_k: int = 10, **options: Any) -> RetrievalResult:
        ...
