"""`mhgraph documents list|show|delete`: one corpus's documents after ingest."""

from __future__ import annotations

from pathlib import Path

import click

from mhgraph.cli.root import cli, settings_from
from mhgraph.errors import MhgraphError
from mhgraph.graph.connection import connect
from mhgraph.graph.context import GraphContext
from mhgraph.graph.documents import (
    delete_documents,
    documents_by_key,
    documents_of_file,
    list_documents,
    release_file,
    show_document,
)
from mhgraph.graph.schema import rebuild_corpus_fulltext
from mhgraph.wording import counted

_corpus = click.option("--corpus", help="The corpus (default: the graph's only corpus).")


@cli.group("documents")
def documents_group() -> None:
    """A corpus's documents, by key (url, else title: ingest's --key): list, show, delete."""


@documents_group.command("list")
@_corpus
@click.option("--file", "file", type=click.Path(path_type=Path), help="Only the documents FILE holds.")
@click.pass_context
def list_cmd(ctx: click.Context, corpus: str | None, file: Path | None) -> None:
    """Every document of the corpus: key, version, chunks (and how many have claims), title."""
    settings = settings_from(ctx, corpus=corpus)
    with connect(settings) as driver:
        graph = GraphContext.open(driver, settings.neo4j_database, settings.corpus)
        rows = list_documents(driver, graph.database, graph.corpus, str(file.resolve()) if file else None)
    # keys whole: 'documents show' and 'delete' take them as printed; the column as wide as they are
    width = max([len("key"), *(len(r["key"] or "-") for r in rows)])
    click.echo(f"{'key':{width}} {'version':10} {'chunks':>6} {'with claims':>11}  title")
    for r in rows:
        click.echo(f"{r['key'] or '-':{width}} {(r['version'] or '-')[:10]:10} {r['chunks']:6d} "
                   f"{r['chunks_with_claims']:11d}  {_cut(r['title'] or '', 60)}")
    click.echo(f"{len(rows)} document{'s' * (len(rows) != 1)} in corpus '{graph.corpus}'")
    if unkeyed := sum(r["key"] is None for r in rows):
        click.echo(f"{unkeyed} of them were stored before documents had keys: ingest their file again to key them "
                   "(unchanged documents are not re-embedded)")


@documents_group.command("show")
@_corpus
@click.option("--key", required=True, help="The document's key.")
@click.pass_context
def show_cmd(ctx: click.Context, corpus: str | None, key: str) -> None:
    """One document: its metadata, its chunks in order, the evaluation runs that reached it."""
    settings = settings_from(ctx, corpus=corpus)
    with connect(settings) as driver:
        graph = GraphContext.open(driver, settings.neo4j_database, settings.corpus)
        shown = show_document(driver, graph.database, graph.corpus, key)
    doc = shown["document"]
    for name in ("key", "version", "title", "source", "author", "category", "url", "published_at", "files",
                 "written_by", "revision", "embedding_model", "chunk_size", "chunk_overlap"):
        if doc.get(name) is not None:
            click.echo(f"{name:15} {doc[name]}")
    click.echo(f"{'chunks':15} {len(shown['chunks'])}")
    for c in shown["chunks"]:
        click.echo(f"  [{c['index']}] {c['tokens']} tokens, chars {c['start']}-{c['end']}, {c['claim_count']} claims: "
                   f"{_cut(' '.join(c['text'].split()), 90)}")
    if shown["runs"]:
        click.echo(f"{'runs':15} {', '.join(shown['runs'])}")


@documents_group.command("delete")
@_corpus
@click.option("--key", help="The key of the document to delete.")
@click.option("--file", "file", type=click.Path(path_type=Path),
              help="Delete every document FILE holds (the file need not exist any more); one another file also holds stays.")
@click.pass_context
def delete_cmd(ctx: click.Context, corpus: str | None, key: str | None, file: Path | None) -> None:
    """Delete a document (--key) or every document of a file (--file), with everything that hangs
    only from them; evaluation runs whose traces reach them are marked stale."""
    if (key is None) == (file is None):
        raise click.UsageError("give --key KEY or --file FILE")
    settings = settings_from(ctx, corpus=corpus)
    with connect(settings) as driver:
        graph = GraphContext.open(driver, settings.neo4j_database, settings.corpus)
        if key is not None:
            found = documents_by_key(driver, graph.database, graph.corpus, key)
            what = f"key {key!r}"
        else:
            found = documents_of_file(driver, graph.database, graph.corpus, str(file.resolve()))
            what = f"file {file}"
        if not found:
            raise MhgraphError(f"corpus '{graph.corpus}' has no document with {what} (see 'mhgraph documents list "
                               f"--corpus {graph.corpus}')")
        if key is not None:
            removal = delete_documents(driver, graph.database, graph.corpus, found)
        else:   # a document another file also holds stays, for that file
            removal = release_file(driver, graph.database, graph.corpus, str(file.resolve()), found)
        reindex = rebuild_corpus_fulltext(driver, graph.database, graph.corpus)
    click.echo(f"deleted {counted(removal.documents, 'document')} of corpus '{graph.corpus}' ({what}): "
               f"{counted(removal.chunks, 'chunk')}, {counted(removal.claims, 'claim')}, {removal.unused} names and "
               f"sources nothing else used"
               + (f"; {removal.retired} nodes kept as Retired for evaluation traces" if removal.retired else "")
               + f"; fulltext index rebuilt in {reindex:.1f} s")
    if removal.kept:
        click.echo(f"kept {counted(removal.kept, 'document')} that another file also holds (they leave {file})")
    if removal.stale_runs:
        click.echo(f"marked stale: {counted(len(removal.stale_runs), 'evaluation run')} whose traces reach them "
                   f"({', '.join(sorted(removal.stale_runs))})")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."
