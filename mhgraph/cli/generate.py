"""`mhgraph generate`: a multi-hop question file with verified evidence, from any ingested corpus."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from pydantic import ValidationError

from mhgraph.app.generation import generate_questions
from mhgraph.cli.root import (
    cli,
    llm_options,
    quiet_progress,
    settings_from,
    similarity_weight_option,
)
from mhgraph.errors import MhgraphError
from mhgraph.generate.pipeline import partial_path
from mhgraph.generate.report import summary_lines
from mhgraph.generate.request import CONSTRUCTIONS, GROUPINGS, WORDINGS, GenerateRequest


@cli.command("generate")
@click.option("--corpus", help="Corpus to write questions about (default: the graph's only corpus).")
@click.option("--out", "out", required=True, type=click.Path(path_type=Path),
              help="Questions file to write (MultiHop-RAG's format: JSON Lines for a .jsonl or .ndjson name, gzipped "
                   "for .gz; its summary goes beside it as NAME.summary.json).")
@click.option("--n", "n", default=500, show_default=True, type=click.IntRange(min=1), help="Questions to write.")
@click.option("--types", default="inference,comparison,temporal,null", show_default=True,
              help="Question types, comma-separated; split by MultiHop-RAG's published shares.")
@click.option("--construction", type=click.Choice(CONSTRUCTIONS), default="both", show_default=True,
              help="multihop-rag: claims joined by a bridge-target or topic; mhts: claim trees from Gaussian-mixture "
                   "clusters (inference questions); both.")
@click.option("--hops", default="2-4", show_default=True, help="Evidence facts per question, LOW-HIGH.")
@click.option("--grouping", type=click.Choice(GROUPINGS), default="story", show_default=True,
              help="MultiHop-RAG construction: story draws a group's other articles closest (by chunk embedding) to a "
                   "first drawn one; random draws any that share the bridge.")
@click.option("--coherence", default=0.9, show_default=True, type=float,
              help="Story grouping: an article joins a group only when its chunk is at least as close to the group's "
                   "as this quantile of random pairs of chunks from different articles.")
@click.option("--wording", type=click.Choice(WORDINGS), default="describe", show_default=True,
              help="Offline templates: describe names each article by its source and headline and its fact by the "
                   "fact's rarest names and figures; quote cuts the fact itself into the question.")
@click.option("--difficulty", help="Keep questions whose MHTS difficulty D = h - lambda * s lies in LOW-HIGH "
                                   "(a negative bound: --difficulty=-20--10).")
@similarity_weight_option
@click.option("--seed", default=0, show_default=True, type=int, help="Same corpus, seed and settings: the same file.")
@click.option("--duplicate-threshold", default=0.92, show_default=True, type=float,
              help="Questions whose embeddings' cosine reaches this are near-duplicates (the later one is dropped).")
@click.option("--components", type=click.IntRange(min=1), help="MHTS mixture components (default ~ sqrt(claims/2)).")
@click.option("--theta", default=0.1, show_default=True, type=float, help="MHTS soft-assignment threshold.")
@click.option("--answer-check", default=50, show_default=True, type=click.IntRange(min=0),
              help="With a model: questions it answers from their own gold evidence (the share answerable).")
@click.option("--no-build", is_flag=True, help="Fail instead of building the corpus's claim layer when it is missing.")
@click.option("--no-progress", is_flag=True, help="Print only the summary.")
@llm_options
@click.pass_context
def generate(ctx: click.Context, corpus: str | None, out: Path, n: int, types: str, construction: str, hops: str,
             grouping: str, coherence: float, wording: str, difficulty: str | None, similarity_weight: float,
             seed: int, duplicate_threshold: float, components: int | None, theta: float, answer_check: int,
             no_build: bool, no_progress: bool, llm_backend: str | None, llm_model: str | None, no_cache: bool) -> None:
    """Write multi-hop questions with verbatim evidence from a corpus's claim layer: by templates
    (offline) or by the configured language model; checked, and summarised beside the file. Score
    methods on it with 'mhgraph eval --questions FILE --corpus NAME'."""
    if no_progress:
        quiet_progress()
    try:
        request = GenerateRequest(n=n, types=types, construction=construction, hops=hops, grouping=grouping,
                                  coherence=coherence, wording=wording, difficulty=difficulty,
                                  similarity_weight=similarity_weight, seed=seed,
                                  duplicate_threshold=duplicate_threshold, components=components, theta=theta,
                                  answer_check=answer_check)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else "options"
        message = first["msg"].removeprefix("Value error, ")
        raise MhgraphError(f"--{field.replace('_', '-')}: {message}") from None
    settings = settings_from(ctx, corpus=corpus, llm_backend=llm_backend, llm_model=llm_model)
    status = (lambda message: None) if no_progress else (lambda message: click.echo(message, err=True))
    try:
        made = generate_questions(settings, request, out, build=not no_build, cache=not no_cache, status=status)
    except KeyboardInterrupt:
        if not partial_path(out).is_file():
            raise
        click.echo(f"interrupted: the decisions made so far are kept in {partial_path(out)}; run the same command "
                   "again to resume", err=True)
        sys.exit(130)
    click.echo("\n".join(summary_lines(made.summary, made.path, made.summary_path)))
