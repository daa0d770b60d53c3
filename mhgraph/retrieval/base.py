"""The one interface every retrieval method implements.

A method answers `search(question, top_k=...)` with a `RetrievalResult`: the evidence per hop
(for hop r, the ranked chunks fetched at that hop, with scores), the query text and metadata
filter used at each hop, and timings. Single-hop methods return one hop.
"""

from __future__ import annotations

import abc
from typing import Any, Sequence

from mhgraph.types import RetrievalResult


class Retriever(abc.ABC):
    """A retrieval method running as Cypher against Neo4j."""

    name: str

    @property
    def params(self) -> dict[str, Any]:
        """Settings of the method that shape its results, recorded with every evaluation run."""
        return {}

    def trained_models(self) -> Sequence[Any]:
        """The models trained here that this retriever runs, each with a `name` and `saw(question)`
        (whether it was trained on that question), so an evaluation can say when its figures are not
        held out."""
        return ()

    @abc.abstractmethod
    def search(self, question: str, *, top_k: int = 10, **options: Any) -> RetrievalResult:
        ...
