"""`mhgraph serve` (the HTTP API) and `mhgraph mcp` (the MCP server): mhgraph for applications and
agents, with the models loaded once."""

from __future__ import annotations

import errno
import importlib.util
import ipaddress
import socket
import sys
from pathlib import Path

import click

from mhgraph.cli.root import cli, llm_options, settings_from
from mhgraph.errors import MhgraphError
from mhgraph.serve.auth import require_key


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _key_for(host: str, api_key: str | None) -> str | None:
    """The API key, which a server reachable from other machines must have."""
    if not api_key and not is_loopback(host):
        raise MhgraphError(f"--host {host} is reachable from other machines: set MHGRAPH_API_KEY (or --api-key) so "
                           f"that requests need a key, or serve on 127.0.0.1")
    return api_key or None


def _require_extra() -> None:
    """The serve extra's packages are there, or a one-line error saying how to get them."""
    missing = [m for m in ("fastapi", "uvicorn", "multipart", "mcp") if importlib.util.find_spec(m) is None]
    if missing:
        raise MhgraphError(f"mhgraph serve and mhgraph mcp need the serve extra ({', '.join(missing)} missing): "
                           f"pip install 'mhgraph[serve]'")


def _listening(host: str, port: int) -> socket.socket:
    """The server's socket, bound before it says where it serves, as uvicorn binds it (IPv6 for a
    host with ':', else IPv4): a port in use is one line, not the address printed and then
    uvicorn's error."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        hint = " (another server there? choose another --port)" if exc.errno == errno.EADDRINUSE else ""
        raise MhgraphError(f"cannot listen on {host}:{port}: {exc.strerror or exc}{hint}") from None
    return sock


def _run(app: object, sock: socket.socket) -> None:
    """uvicorn on `sock` until it stops; Ctrl-C ends it as uvicorn.run does (a clean exit)."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:   # raised again once the server has shut down
        pass
    if not server.started:      # its startup failed (uvicorn logged why)
        sys.exit(3)


def _check_corpus(resources: object) -> None:
    """The server's default corpus (--corpus, else the configured one) is there, before requests
    that name none all fail."""
    if resources.settings.corpus:
        resources.graph(None)   # NotFoundError, one line, listing the corpora


def _host_options(command):
    for option in reversed([
        click.option("--host", default="127.0.0.1", show_default=True,
                     help="Address to listen on; any but loopback needs an API key."),
        click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535)),
        click.option("--api-key", envvar="MHGRAPH_API_KEY", show_envvar=True,
                     help="Requests must send it (X-API-Key or Authorization: Bearer)."),
        click.option("--corpus", help="The corpus requests search when they name none."),
    ]):
        command = option(command)
    return command


@cli.command()
@_host_options
@click.option("--cors-origin", "cors_origins", multiple=True, envvar="MHGRAPH_CORS_ORIGINS", show_envvar=True,
              help="An origin a browser may call the API from (repeat it; the variable takes them space-separated).")
@click.option("--uploads", type=click.Path(file_okay=False, path_type=Path),
              help="Folder uploaded corpus files are kept in (default: a temporary folder).")
@click.option("--ingest-root", "ingest_roots", multiple=True,
              type=click.Path(exists=True, file_okay=False, resolve_path=True, path_type=Path),
              help="A folder whose corpus files POST /ingest may name (repeat it; default none: uploads only).")
@click.option("--threads", "threads", default=40, show_default=True, type=click.IntRange(1, 1000),
              help="Requests served at once (worker threads).")
@llm_options
@click.pass_context
def serve(ctx: click.Context, host: str, port: int, api_key: str | None, corpus: str | None,
          cors_origins: tuple[str, ...], uploads: Path | None, ingest_roots: tuple[Path, ...], threads: int,
          llm_backend: str | None, llm_model: str | None, no_cache: bool) -> None:
    """Serve the HTTP API (OpenAPI docs at /docs): /query, /ask (streamed with stream: true),
    /corpora, /methods, /runs, /ingest and /jobs, /health."""
    _require_extra()
    from mhgraph.serve.api import create_app
    from mhgraph.serve.resources import Resources

    key = _key_for(host, api_key)
    settings = settings_from(ctx, corpus=corpus, llm_backend=llm_backend, llm_model=llm_model)
    resources = Resources(settings, cache=not no_cache)
    _check_corpus(resources)
    sock = _listening(host, port)
    app = create_app(resources, api_key=key, cors_origins=cors_origins, uploads=uploads, ingest_roots=ingest_roots,
                     threads=threads, host=host)
    click.echo(f"mhgraph API on http://{host}:{port} (docs: /docs){', API key required' if key else ''}", err=True)
    _run(app, sock)


@cli.command()
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True,
              help="stdio (an agent starts mhgraph itself) or streamable HTTP (at /mcp).")
@_host_options
@llm_options
@click.pass_context
def mcp(ctx: click.Context, transport: str, host: str, port: int, api_key: str | None, corpus: str | None,
        llm_backend: str | None, llm_model: str | None, no_cache: bool) -> None:
    """Serve the MCP tools search, ask, list_corpora and explain_evidence."""
    _require_extra()
    from mhgraph.serve.mcp_server import create_mcp
    from mhgraph.serve.resources import Resources

    settings = settings_from(ctx, corpus=corpus, llm_backend=llm_backend, llm_model=llm_model)
    key = _key_for(host, api_key) if transport == "http" else None
    resources = Resources(settings, cache=not no_cache)
    server = create_mcp(resources)
    try:
        _check_corpus(resources)
        if transport == "stdio":
            server.run("stdio")
        else:
            sock = _listening(host, port)
            app = require_key(server.streamable_http_app(host=host), key)
            click.echo(f"mhgraph MCP on http://{host}:{port}/mcp{', API key required' if key else ''}", err=True)
            _run(app, sock)
    finally:
        resources.close()
