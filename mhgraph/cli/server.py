"""`mhgraph neo4j ...`: the local server."""

from __future__ import annotations

import click

from mhgraph.cli.root import cli, settings_from
from mhgraph.config import Settings
from mhgraph.graph.capabilities import detect
from mhgraph.graph.connection import connect
from mhgraph.server import LocalNeo4j
from mhgraph.server.artifacts import LOCK_FILE, generate_lock


@cli.group()
def neo4j() -> None:
    """Install, start, stop and inspect the local Neo4j Community server."""


def _local(ctx: click.Context):
    settings = settings_from(ctx)
    if not settings.uses_local_server:
        click.echo(f"note: NEO4J_URI is set ({settings.neo4j_uri}); other commands use that server, "
                   "not the local one", err=True)
    return LocalNeo4j(settings)


@neo4j.command("install")
@click.pass_context
def neo4j_install(ctx: click.Context) -> None:
    """Fetch the pinned Neo4j jars, check Java 21+, write the config, set the password."""
    server = _local(ctx)
    installed = server.install()
    click.echo(f"Neo4j {server.lock.neo4j_version} Community + Browser {server.lock.browser_version}: {installed.lib}")
    click.echo(f"Java {installed.java_major}: {installed.java}")
    click.echo(f"home: {server.home}")


@neo4j.command("start")
@click.option("--timeout", default=180.0, show_default=True, help="Seconds to wait for Bolt.")
@click.pass_context
def neo4j_start(ctx: click.Context, timeout: float) -> None:
    """Start the server; returns when Bolt answers."""
    status = _local(ctx).start(timeout=timeout)
    click.echo("\n".join(status.lines()))


@neo4j.command("stop")
@click.pass_context
def neo4j_stop(ctx: click.Context) -> None:
    """Stop the server."""
    click.echo("stopped" if _local(ctx).stop() else "not running")


@neo4j.command("reset-password")
@click.option("--timeout", default=180.0, show_default=True, help="Seconds to wait for Bolt.")
@click.pass_context
def neo4j_reset_password(ctx: click.Context, timeout: float) -> None:
    """Set the neo4j user's password again when it is lost (NEO4J_PASSWORD, else a new stored one)."""
    server = _local(ctx)
    restarted = server.reset_password(timeout=timeout)
    click.echo(f"password of user 'neo4j' set; stored in {server.password_file}"
               + ("; server restarted" if restarted else ""))


@neo4j.command("status")
@click.pass_context
def neo4j_status(ctx: click.Context) -> None:
    """Version, edition, URI, data dir and server capabilities."""
    settings = settings_from(ctx)
    if settings.uses_local_server:
        status = LocalNeo4j(settings).status()
        click.echo("\n".join(status.lines()))
        if not status.running:
            return
    _print_capabilities(settings)


def _print_capabilities(settings: Settings) -> None:
    with connect(settings) as driver:
        caps = detect(driver, settings.neo4j_database)
    click.echo(f"server:   {settings.uri} Neo4j {caps.version} {caps.edition}")
    click.echo(f"cypher:   {', '.join(caps.cypher_versions)}")
    click.echo(f"vector index: {caps.vector_index}; with filter properties: {caps.vector_filter_properties}; "
               f"SEARCH clause: {caps.search_clause}")


@neo4j.command("lock", hidden=True)
@click.argument("neo4j_version")
@click.argument("browser_version")
def neo4j_lock(neo4j_version: str, browser_version: str) -> None:
    """(maintainers) Re-resolve the server's jars and pin them with checksums."""
    lock = generate_lock(neo4j_version, browser_version)
    click.echo(f"pinned {len(lock.artifacts)} jars in {LOCK_FILE}")
