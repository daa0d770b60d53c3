"""`mhgraph eval`: runs on the benchmark, their comparison, their traces."""

from __future__ import annotations

from pathlib import Path

import click

from mhgraph.benchmark import default_questions_path
from mhgraph.cli.method_options import method_choice, method_options, pop_method_flags, warn_of_unread_flags
from mhgraph.cli.root import (
    cli,
    corpus_flag,
    engine_options,
    llm_options,
    quiet_progress,
    ray_only,
    sample_corpus_path,
    settings_from,
    similarity_weight_option,
)
from mhgraph.graph.connection import connect


@cli.command("eval")
@click.argument("runs", nargs=-1)
@method_choice(default=None, help="Retrieval method to evaluate")
@click.option("-k", "--top-k", default=10, show_default=True, type=click.IntRange(min=1), help="Chunks per hop.")
@click.option("--model", "embedding_model", help="Embedding model (default: the one the corpus was ingested with).")
@click.option("--corpus", help="Corpus to evaluate on (default: the graph's only corpus; 'sample' with --sample).")
@click.option("--questions", "questions_path", type=click.Path(path_type=Path),
              help="MultiHopRAG.json (default: $MHGRAPH_BENCHMARK_DIR or ../shared/data/multihop-rag/).")
@click.option("--sample", is_flag=True, help="Use the bundled sample questions (for the bundled corpus).")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N questions.")
@click.option("--per-type", type=click.IntRange(min=1),
              help="Only the first N questions of each type (a stratified slice, in file order).")
@click.option("--types", help="Comma-separated question types, e.g. inference,comparison (or inference_query, ...).")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1),
              help="Questions run concurrently: threads, or with --engine ray the cluster's workers.")
@engine_options(workers=False)
@click.option("--no-trace", is_flag=True, help="Do not store the run's evidence paths in Neo4j.")
@click.option("--runs-dir", default=Path("runs"), show_default=True, type=click.Path(path_type=Path))
@click.option("--run-id", help="Name of the run (default: method-kK-timestamp); a stored run of that name, its "
                                "folder and its traces, is replaced.")
@click.option("--compare", is_flag=True, help="Compare the RUNS given (ids or directories) in one table and plot.")
@click.option("--list-runs", is_flag=True, help="List the runs stored in Neo4j.")
@click.option("--delete-run", help="Delete a run's traces from Neo4j.")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
@click.option("--scoring", type=click.Choice(["ours", "official", "both"]), default="both", show_default=True,
              help="Scoring shown: ours, the official MultiHop-RAG rule (retrieval_evaluate.py), or both side by side.")
@click.option("--answer", is_flag=True, help="Also answer each question from its evidence and score the answers.")
@click.option("--answer-k", type=click.IntRange(min=1), help="Chunks given to the reader (default: --top-k).")
@similarity_weight_option
@method_options
@llm_options
@click.pass_context
def eval_cmd(ctx: click.Context, runs: tuple[str, ...], method: str | None, top_k: int,
             embedding_model: str | None, corpus: str | None, questions_path: Path | None, sample: bool,
             limit: int | None, per_type: int | None, types: str | None, workers: int, no_trace: bool, runs_dir: Path,
             run_id: str | None, compare: bool, list_runs: bool, delete_run: str | None, no_progress: bool,
             scoring: str, answer: bool, answer_k: int | None, similarity_weight: float, llm_backend: str | None,
             llm_model: str | None, no_cache: bool, engine: str, address: str | None, **method_flags: object) -> None:
    """Evaluate a retrieval method on MultiHop-RAG; or compare, list or delete runs."""
    if runs and not compare:
        raise click.UsageError(f"unexpected argument '{runs[0]}' (run ids go with --compare)")
    if compare and method:
        raise click.UsageError("--compare renders stored runs; it does not take --method")
    if sample and questions_path:
        raise click.UsageError("give --sample or --questions, not both")
    ray_only(engine, address=address)
    if no_progress:
        quiet_progress()
    if compare or list_runs or delete_run:   # kept for existing scripts; 'mhgraph runs' is the command now
        from mhgraph.cli import runs as runs_cli

        if compare and not runs:
            raise click.UsageError("--compare needs run ids or run directories")
        verb = "compare" if compare else "list" if list_runs else "delete"
        click.echo(f"note: this is 'mhgraph runs {verb}' now", err=True)
        if compare:
            ctx.invoke(runs_cli.compare_cmd, runs=runs, runs_dir=runs_dir)
        elif list_runs:
            ctx.invoke(runs_cli.list_cmd)
        else:
            ctx.invoke(runs_cli.delete_cmd, run=delete_run)
        return
    settings = settings_from(ctx, pop_method_flags(method_flags), embedding_model=embedding_model,
                             corpus=corpus_flag(corpus, sample), llm_backend=llm_backend,
                             llm_model=llm_model)
    if not method:
        raise click.UsageError("give --method (or --compare / --list-runs / --delete-run)")
    warn_of_unread_flags(settings, method)
    from mhgraph.eval.runner import EvalOptions, evaluate

    if sample:
        questions_path = sample_corpus_path().with_name("questions.json")
    options = EvalOptions(
        method=method, questions_path=questions_path or default_questions_path(), top_k=top_k, limit=limit,
        per_type=per_type,
        types=[t.strip() for t in types.split(",")] if types else None, workers=workers, engine=engine,
        address=address, trace=not no_trace,
        runs_dir=runs_dir, run_id=run_id, progress=not no_progress,
        scoring=scoring, answer=answer, answer_k=answer_k, llm_cache=not no_cache,
        similarity_weight=similarity_weight,
    )
    with connect(settings) as driver:
        run = evaluate(settings, driver, options)
    from mhgraph.eval.report import to_markdown

    click.echo(to_markdown(run.summary))   # its "Gold evidence coverage" section holds the coverage lines
    click.echo(f"run {run.run_id}: {run.run_dir}" + ("" if no_trace else " (traces stored in Neo4j)"))
