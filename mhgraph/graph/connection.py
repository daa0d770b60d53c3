"""One driver factory for every command: the configured server, or the local one."""

from __future__ import annotations

from neo4j import Driver, GraphDatabase
from neo4j.exceptions import AuthError, ConfigurationError, ServiceUnavailable

from mhgraph.config import Settings
from mhgraph.errors import MhgraphError
from mhgraph.server import LocalNeo4j


def credentials(settings: Settings) -> tuple[str, str]:
    if settings.neo4j_password:
        return settings.neo4j_username, settings.neo4j_password
    if settings.uses_local_server:
        return settings.neo4j_username, LocalNeo4j(settings).password()
    raise MhgraphError(f"NEO4J_PASSWORD is not set for {settings.uri}")


def connect(settings: Settings, *, retry_seconds: float | None = None) -> Driver:
    """A verified driver, or a one-line error saying what to do. `retry_seconds`: how long a
    transaction is retried while the server is unavailable (the driver's default: 30 s)."""
    # Schema notifications (e.g. "property does not exist yet" on a fresh graph) are expected noise.
    retry = {"max_transaction_retry_time": retry_seconds} if retry_seconds is not None else {}
    try:
        driver = GraphDatabase.driver(settings.uri, auth=credentials(settings), notifications_min_severity="OFF",
                                      **retry)
    except (ConfigurationError, ValueError) as exc:   # a scheme, query or address the driver does not take
        raise MhgraphError(f"{settings.uri}: not a Neo4j URI: {exc}") from exc
    try:
        driver.verify_connectivity()
    except ValueError as exc:   # e.g. a port the resolver refuses
        driver.close()
        raise MhgraphError(f"{settings.uri}: not a Neo4j address: {exc}") from exc
    except AuthError as exc:
        driver.close()
        raise MhgraphError(f"{settings.uri}: authentication failed for user '{settings.neo4j_username}'") from exc
    except (ServiceUnavailable, OSError) as exc:
        driver.close()
        hint = " (start it with 'mhgraph neo4j start')" if settings.uses_local_server else ""
        raise MhgraphError(f"Neo4j is not reachable at {settings.uri}{hint}") from exc
    return driver
