"""`mhgraph query` (evidence per hop) and `mhgraph ask` (an answer from it)."""

from __future__ import annotations

import sys

import click

from mhgraph.app.search import gather_evidence, retrieve
from mhgraph.cli.method_options import method_choice, method_options, pop_method_flags, warn_of_unread_flags
from mhgraph.cli.root import cli, llm_options, settings_from
from mhgraph.errors import MhgraphError


@cli.command()
@click.argument("question")
@method_choice()
@click.option("-k", "--top-k", default=10, show_default=True, type=click.IntRange(min=1), help="Chunks per hop.")
@click.option("--model", "embedding_model", help="Embedding model (default: the one the corpus was ingested with).")
@click.option("--corpus", help="Corpus to search (default: the graph's only corpus).")
@click.option("--width", default=160, show_default=True, help="Characters of chunk text to show.")
@method_options
@llm_options
@click.pass_context
def query(ctx: click.Context, question: str, method: str, top_k: int, embedding_model: str | None,
          corpus: str | None, width: int, llm_backend: str | None, llm_model: str | None,
          no_cache: bool, **method_flags: object) -> None:
    """Retrieve evidence for QUESTION and print it per hop."""

    settings = settings_from(ctx, pop_method_flags(method_flags), embedding_model=embedding_model, corpus=corpus,
                             llm_backend=llm_backend, llm_model=llm_model)
    warn_of_unread_flags(settings, method)
    result = retrieve(settings, method, question, top_k, cache=not no_cache, status=say)
    phases = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in result.phases.items())
    click.echo(f"{result.method} on corpus '{result.params.get('corpus')}': {len(result.hops)} hop(s), "
               f"{result.seconds * 1000:.0f} ms" + (f" ({phases})" if phases else ""))
    for record in result.diagnostics:   # what the method decided: its filter, chain, claims, tree
        for line in record.lines(result, width):
            click.echo(line)
    for hop in result.hops:
        # as sent, on one line (repr would double the backslashes of an escaped fulltext query)
        query = (f"'{' '.join(hop.query.split())}'" if hop.query is not None
                 else "(embeddings: each branch's next query)")
        click.echo(f"\nhop {hop.index}  query: {query}  filters: {hop.filters or '-'}  "
                   f"({hop.seconds * 1000:.0f} ms)")
        for c in hop.chunks:
            date = c.published_at.date().isoformat() if c.published_at else "-"
            click.echo(f"{c.rank:3d}  {c.score:8.4f}  {c.title or '-'} | {c.source or '-'} | {date}"
                       + (f"  (from chunk {c.parent_id})" if c.parent_id else ""))
            snippet = " ".join(c.text.split())
            click.echo(f"     {snippet[:width]}{'...' if len(snippet) > width else ''}")


@cli.command()
@click.argument("question")
@method_choice()
@click.option("-k", "--top-k", default=10, show_default=True, type=click.IntRange(min=1),
              help="Chunks of the final ranking given to the model.")
@click.option("--corpus", help="Corpus to search (default: the graph's only corpus).")
@method_options
@llm_options
@click.pass_context
def ask(ctx: click.Context, question: str, method: str, top_k: int, corpus: str | None, llm_backend: str | None,
        llm_model: str | None, no_cache: bool, **method_flags: object) -> None:
    """Answer QUESTION from retrieved evidence, citing it, or abstain ("Insufficient information.")."""

    settings = settings_from(ctx, pop_method_flags(method_flags), corpus=corpus, llm_backend=llm_backend,
                             llm_model=llm_model)
    warn_of_unread_flags(settings, method)
    evidence = gather_evidence(settings, method, question, top_k, cache=not no_cache, status=say)
    click.echo(f"[{evidence.reader.label}, {len(evidence.chunks)} chunks from {method}]", err=True)
    answer = None
    for piece in evidence.reader.stream(question, evidence.chunks):
        if isinstance(piece, str):
            click.echo(piece, nl=False)
            sys.stdout.flush()
        else:
            answer = piece
    click.echo()
    if answer is None or answer.failed:
        raise MhgraphError(f"no answer: {answer.failed if answer else 'the reader returned nothing'}")
    if answer.citations:
        click.echo("\nSources:")
        for citation in answer.citations:
            click.echo(f"  {citation.line()}")


def say(message: str) -> None:
    """What is loading, on stderr, so the first seconds of a command are not silent."""
    click.echo(f"{message} ...", err=True)
