"""`mhgraph claims`: the claim layer (Claim / Topic / Target nodes) of an ingested corpus."""

from __future__ import annotations

import click

from mhgraph.app.claim_layer import build_claim_layer, link_names, merge_names
from mhgraph.claims import synonyms
from mhgraph.claims.merge import DEFAULT_THRESHOLD
from mhgraph.claims.ray_engine import RayClaimsOptions
from mhgraph.cli.root import (
    engine_options,
    llm_options,
    quiet_progress,
    ray_only,
    settings_from,
)


@click.group("claims")
def claims_group() -> None:
    """Claims with bridge topics and targets, extracted from a corpus's chunks."""


@claims_group.command("build")
@click.option("--corpus", help="Corpus whose chunks to read (default: the graph's only corpus).")
@click.option("--batch-size", default=32, show_default=True, type=click.IntRange(min=1),
              help="Chunks extracted, embedded and written per transaction.")
@click.option("--limit", type=click.IntRange(min=1), help="At most N chunks this run (a build resumes where it stopped).")
@click.option("--merge-threshold", default=DEFAULT_THRESHOLD, show_default=True,
              type=click.FloatRange(0, 1, min_open=True),
              help="Merge Topic / Target names whose embeddings are at least this similar (cosine) and that are "
                   "spelled alike or one a short form of the other (mhgraph/claims/merge.py).")
@click.option("--no-merge", is_flag=True, help="Merge names by key only, not by embedding similarity.")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
@engine_options
@click.option("--endpoints", help="With --engine ray and a model: its OpenAI-compatible servers, comma-separated "
                                  "(default: OPENAI_BASE_URL).")
@click.option("--per-endpoint", default=2, show_default=True, type=click.IntRange(min=1),
              help="With --engine ray and a model: requests in flight per endpoint.")
@llm_options
@click.pass_context
def claims_build(ctx: click.Context, corpus: str | None, batch_size: int, limit: int | None, merge_threshold: float,
                 no_merge: bool, no_progress: bool, engine: str, address: str | None, workers: int | None,
                 endpoints: str | None, per_endpoint: int,
                 llm_backend: str | None, llm_model: str | None, no_cache: bool) -> None:
    """Extract the claims of every chunk not yet done: with the configured language model, or
    with the offline extractor (spaCy) when the backend is none; then merge near-duplicate names
    and link each name to its nearest names (SYNONYM edges, for graph traversal)."""
    ray_only(engine, address=address, workers=workers, endpoints=endpoints)
    if no_progress:
        quiet_progress()
    settings = settings_from(ctx, corpus=corpus, llm_backend=llm_backend, llm_model=llm_model)
    built = build_claim_layer(settings, batch_size=batch_size, limit=limit,
                              merge_threshold=None if no_merge else merge_threshold, cache=not no_cache,
                              progress=not no_progress, engine=engine,
                              ray=RayClaimsOptions(address=address, workers=workers, per_endpoint=per_endpoint,
                                                   endpoints=tuple(e.strip() for e in (endpoints or "").split(",")
                                                                   if e.strip())))
    click.echo("\n".join(built.lines()))


@claims_group.command("merge")
@click.option("--corpus", help="Corpus whose claim layer to merge (default: the graph's only corpus).")
@click.option("--threshold", default=DEFAULT_THRESHOLD, show_default=True, type=click.FloatRange(0, 1, min_open=True),
              help="Cosine similarity two names' embeddings need (besides being spelled alike or one a short "
                   "form of the other; mhgraph/claims/merge.py).")
@click.option("--examples", default=0, show_default=True, type=click.IntRange(min=0),
              help="Print the first N merged pairs of each kind.")
@click.pass_context
def claims_merge(ctx: click.Context, corpus: str | None, threshold: float, examples: int) -> None:
    """Merge near-duplicate Topic and Target names of a built claim layer ('claims build' does this
    at its end): the absorbed node's claims move to the kept one, which records its names as aliases."""
    done = merge_names(settings_from(ctx, corpus=corpus), threshold)
    click.echo(f"names of corpus '{done.corpus}' merged at cosine >= {threshold:.2f} ({done.embedding_model})")
    for m in done.merges:
        click.echo(f"  {m.label.lower() + 's':9} {m.merged} of {m.names} merged into another "
                   f"({m.embedded} names embedded now)")
        for absorbed, kept, similarity in m.examples[:examples]:
            click.echo(f"    {absorbed!r} -> {kept!r} ({similarity:.3f})")
    click.echo(done.synonyms.line())
    click.echo(f"  now       {done.counts['topics']} topics, {done.counts['targets']} targets, of which bridges "
               f"{done.counts['bridges']}")


@claims_group.command("synonyms")
@click.option("--corpus", help="Corpus whose claim layer to link (default: the graph's only corpus).")
@click.option("--threshold", default=synonyms.DEFAULT_THRESHOLD, show_default=True,
              type=click.FloatRange(0, 1, min_open=True), help="Cosine similarity two names need to be linked.")
@click.option("--neighbours", default=synonyms.DEFAULT_NEIGHBOURS, show_default=True, type=click.IntRange(min=1),
              help="Nearest names linked per name, at most.")
@click.pass_context
def claims_synonyms(ctx: click.Context, corpus: str | None, threshold: float, neighbours: int) -> None:
    """Redraw the SYNONYM edges between Topic and Target names ('claims build' and 'claims merge' do
    this at their end, with the defaults): what graph traversal ('--method ppr') walks across."""
    done = link_names(settings_from(ctx, corpus=corpus), threshold, neighbours)
    click.echo(f"names of corpus '{done.corpus}' linked ({done.embedding_model})")
    click.echo(done.summary.line())
