"""`mhgraph claims`: the claim layer (Claim / Topic / Target nodes) of an ingested corpus."""

from __future__ import annotations

import click

from mhgraph.cli.root import cli, llm_options, quiet_progress, settings_from


@cli.group("claims")
def claims_group() -> None:
    """Claims with bridge topics and targets, extracted from a corpus's chunks."""


@claims_group.command("build")
@click.option("--corpus", help="Corpus whose chunks to read (default: the graph's only corpus).")
@click.option("--batch-size", default=32, show_default=True, type=click.IntRange(min=1),
              help="Chunks extracted, embedded and written per transaction.")
@click.option("--limit", type=click.IntRange(min=1), help="At most N chunks this run (a build resumes where it stopped).")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
@llm_options
@click.pass_context
def claims_build(ctx: click.Context, corpus: str | None, batch_size: int, limit: int | None, no_progress: bool,
                 llm_backend: str | None, llm_model: str | None, no_cache: bool) -> None:
    """Extract the claims of every chunk not yet done: with the configured language model, or
    with the offline extractor (spaCy) when the backend is none."""
    from mhgraph.claims.build import build_claims
    from mhgraph.graph.connection import connect
    from mhgraph.graph.corpora import resolve_corpus
    from mhgraph.llm import load_llm
    from mhgraph.retrieval import question_embedder

    if no_progress:
        quiet_progress()
    settings = settings_from(ctx, corpus=corpus, llm_backend=llm_backend, llm_model=llm_model)
    llm = load_llm(settings, cache=not no_cache)
    if llm is None:
        from mhgraph.claims.extract import OfflineClaimExtractor

        extractor = OfflineClaimExtractor()
    else:
        from mhgraph.claims.extract import LLMClaimExtractor

        extractor = LLMClaimExtractor(llm)
    with connect(settings) as driver:
        name = resolve_corpus(driver, settings.neo4j_database, settings.corpus)
        embedder = question_embedder(driver, settings, name)
        summary = build_claims(driver, settings.neo4j_database, name, extractor, embedder, batch_size=batch_size,
                               limit=limit, progress=not no_progress)
    click.echo("\n".join(summary.lines()))
    if llm is not None:
        usage = llm.usage
        click.echo(f"  model     {llm.label}: {usage.calls} calls ({usage.cache_hits} cached), {usage.prompt_tokens} "
                   f"prompt and {usage.completion_tokens} completion tokens, {usage.failures} failures")
