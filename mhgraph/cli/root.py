"""The `mhgraph` command group, the settings every command resolves, and the one-line error
reporting of `main`; each command group lives in its own module beside this one."""

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
# what --rerank uses when no reranker is named: a relevance model a registry package carries. Not the
# packaged cross-encoder (multihop-rag-minilm): its scores barely depend on the question (README,
# Multi-Meta-RAG), which helps on its benchmark fused with the search and nowhere else.
DEFAULT_RERANKER = "bi-encoder:bge-small-en-v1.5"


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


def metarag_options(command):
    """The flags of the metarag method, shared by query, ask and eval. They become the settings
    filter_extractor, filter_mode, metarag_candidates and reranker (see mhgraph/config.py)."""
    from mhgraph.config import FILTER_EXTRACTORS, FILTER_MODES, METARAG_SEARCHES

    for option in reversed([
        click.option("--filter-extractor", type=click.Choice(FILTER_EXTRACTORS),
                     help="metarag: where the metadata filter comes from (default rules; gold is an upper bound, "
                          "eval only)."),
        click.option("--filter-mode", type=click.Choice(FILTER_MODES),
                     help="metarag: filter inside the vector index (default) or exact pre-filtered search."),
        click.option("--candidates", "metarag_candidates", type=click.IntRange(min=1),
                     help="metarag: chunks searched before reranking (K, default 20); -k keeps K'."),
        click.option("--metarag-search", type=click.Choice(METARAG_SEARCHES),
                     help="metarag: candidates by vector (the original, default) or hybrid (vector + BM25 inside "
                          "the filter, linear ranker with hybrid_alpha; its vector side is scored exactly)."),
        click.option("--rerank/--no-rerank", default=None,
                     help=f"metarag: rerank the candidates (with --reranker, else {DEFAULT_RERANKER})."),
        click.option("--reranker", help="metarag: a cross-encoder name or path, an exported ONNX folder, "
                                        "multihop-rag-minilm (the packaged one), nanoranker, bi-encoder:MODEL or "
                                        "kfold:DIR (implies --rerank)."),
        click.option("--rerank-weight", type=click.FloatRange(0, 1),
                     help="metarag: the reranker's weight fused with the search's score, each standardised "
                          "(default: the reranker's own, 0.5 for the packaged cross-encoder, else 1: its order "
                          "alone, as the original)."),
    ]):
        command = option(command)
    return command


def treehop_options(command):
    """The flags of the treehop method, shared by query, ask and eval; they become the settings
    treehop_model, treehop_hops, treehop_redundancy_pruning, treehop_layer_top_k, treehop_branches and
    treehop_filter."""
    for option in reversed([
        click.option("--treehop-model", help="treehop: a checkpoint or k-fold folder from 'mhgraph treehop train' "
                                             "(default: the packaged model, for all-MiniLM-L6-v2)."),
        click.option("--hops", "treehop_hops", type=click.IntRange(min=1), help="treehop: hops (default 2)."),
        click.option("--redundancy-pruning/--no-redundancy-pruning", "treehop_redundancy_pruning", default=None,
                     help="treehop: stop a branch whose chunk was already retrieved (default on)."),
        click.option("--layer-top-k/--no-layer-top-k", "treehop_layer_top_k", default=None,
                     help="treehop: keep only the best new branches per hop (default on)."),
        click.option("--branches", "treehop_branches", type=click.IntRange(min=1),
                     help="treehop: new branches layer-wise top-k keeps per hop (default: -k)."),
        click.option("--hop-filter/--no-hop-filter", "treehop_filter", default=None,
                     help="treehop: metarag's metadata filter (--filter-extractor) at every hop (default off)."),
    ]):
        command = option(command)
    return command


def reasoning_options(command):
    """The flags of ircot and decompose, shared by query, ask and eval; they become the settings
    ircot_max_steps, ircot_max_paragraphs, ircot_paragraph_words, ircot_step_sources and
    decompose_sub_questions. Which model reasons is the LLM layer's (--llm-backend; none: the
    offline strategies)."""
    for option in reversed([
        click.option("--max-steps", "ircot_max_steps", type=click.IntRange(min=1),
                     help="ircot: reasoning steps after the first BM25 search (default 8)."),
        click.option("--max-paragraphs", "ircot_max_paragraphs", type=click.IntRange(min=1),
                     help="ircot: paragraphs held at most (default 15)."),
        click.option("--paragraph-words", "ircot_paragraph_words", type=click.IntRange(min=1),
                     help="ircot: words of each paragraph shown to the model (default: all)."),
        click.option("--step-sources/--no-step-sources", "ircot_step_sources", default=None,
                     help="ircot: a step whose thought names outlets searches only their chunks (default on; off: "
                          "the original method)."),
        click.option("--sub-questions", "decompose_sub_questions", type=click.IntRange(min=1),
                     help="decompose: sub-questions N (default 3); -k chunks each."),
    ]):
        command = option(command)
    return command


def apply_rerank(settings: Settings, rerank: bool | None) -> Settings:
    """--no-rerank clears the reranker; --rerank without one named takes DEFAULT_RERANKER."""
    import dataclasses

    if rerank is False:
        return dataclasses.replace(settings, reranker=None)
    if rerank and not settings.reranker:
        return dataclasses.replace(settings, reranker=DEFAULT_RERANKER)
    return settings


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
