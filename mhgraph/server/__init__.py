"""The local Neo4j Community server that mhgraph installs from Maven Central and runs itself."""

from mhgraph.server.local import LocalNeo4j, ServerStatus

__all__ = ["LocalNeo4j", "ServerStatus"]
