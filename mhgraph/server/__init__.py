"""The local Neo4j Community server that mhgraph installs from Maven Central and runs itself."""

from mhgraph.server.local import Installation, LocalNeo4j, ServerStatus

__all__ = ["Installation", "LocalNeo4j", "ServerStatus"]
