"""A server without the Cypher 25 SEARCH clause (Neo4j before 2026.01, e.g. 5.26 on Aura): every
method whose queries need it stops with one line naming the server's version before it sends a
query or loads a model (the local server mhgraph installs has the clause, so the capability is set
here as detection reports it for such a server)."""

from __future__ import annotations

import pytest

from mhgraph.errors import MhgraphError
from mhgraph.graph.capabilities import Capabilities
from mhgraph.graph.context import GraphContext
from mhgraph.retrieval import registry
from mhgraph.retrieval.hybrid import HybridRetriever

OLD = Capabilities(version="5.26.12", edition="enterprise", cypher_versions=("5",), vector_index=True,
                   vector_filter_properties=False, search_clause=False)
NEW = Capabilities(version="2026.01.4", edition="community", cypher_versions=("5", "25"), vector_index=True,
                   vector_filter_properties=True, search_clause=True)


def _old_graph() -> GraphContext:
    # no driver: a check that sent a query before looking at the capability would fail on it
    return GraphContext(driver=None, database=None, corpus="news", _capabilities=OLD)  # type: ignore[arg-type]


def _one_line(error: pytest.ExceptionInfo[MhgraphError]) -> str:
    message = str(error.value)
    assert "\n" not in message
    return message


def test_the_check_passes_on_a_server_with_the_clause_and_names_the_version_without() -> None:
    NEW.require_search_clause("anything")
    with pytest.raises(MhgraphError) as error:
        OLD.require_search_clause("the thing", "do this instead")
    message = _one_line(error)
    assert message.startswith("the thing needs the Cypher 25 SEARCH clause")
    assert "5.26.12" in message and message.endswith(": do this instead")


@pytest.mark.parametrize("method", ["claims", "ppr"])
def test_the_claim_layers_methods_stop_before_any_query(method: str) -> None:
    options = registry.get(method).options()
    with pytest.raises(MhgraphError) as error:
        registry.check_ready(method, _old_graph(), options)
    message = _one_line(error)
    assert "Claim vector index" in message and "5.26.12" in message


def test_hybrid_stops_before_any_query() -> None:
    with pytest.raises(MhgraphError) as error:
        HybridRetriever(None, None, OLD, corpus="news", search_ratio=10)  # type: ignore[arg-type]
    assert "hybrid" in _one_line(error) and "5.26.12" in str(error.value)
