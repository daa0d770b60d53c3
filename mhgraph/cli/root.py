"""The `mhgraph` command group, the settings every command resolves, and the one-line error
reporting of `main`; each command group lives in its own module beside this one."""

from __future__ import annotations

import os
import shlex
import sys
import warnings
from importlib import resources
from pathlib import Path

import click
from neo4j.exceptions import DriverError, Neo4jError

from mhgraph.benchmark import default_questions_path
from mhgraph.cli.reference import configuration_markdown
from mhgraph.config import LLM_BACKENDS, Settings, default_config_path, load_settings
from mhgraph.engine import ENGINES
from mhgraph.errors import MhgraphError
from mhgraph.eval.difficulty import LAMBDA
from mhgraph.retrieval import registry

SAMPLE_CORPUS = "data/sample/corpus.json"
SAMPLE_CORPUS_NAME = "sample"


def sample_corpus_path() -> Path:
    return Path(str(resources.files("mhgraph").joinpath(SAMPLE_CORPUS)))


def corpus_flag(corpus: str | None, sample: bool) -> str | None:
    """The corpus a command with --corpus and --sample names: --corpus as given ('' too, which the
    settings refuse as a name rather than read as unset), else the sample's with --sample."""
    return corpus if corpus is not None else (SAMPLE_CORPUS_NAME if sample else None)


def check_models_folder(out: Path) -> None:
    """--out of a trainer: a folder, new or not; a file there is refused before any work."""
    if out.exists() and not out.is_dir():
        raise MhgraphError(f"{out}: a file, not a folder (--out names the folder the models are written to)")


def question_flags(sample: bool, corpus: str, questions: Path) -> str:
    """The flags naming the questions a model was trained on and their corpus, for the eval command
    a trainer prints (the default questions file goes unsaid)."""
    if sample and corpus == SAMPLE_CORPUS_NAME:
        return "--sample"
    return f"--corpus {shlex.quote(corpus)}" + ("" if questions == default_questions_path()
                                                else f" --questions {shlex.quote(str(questions))}")


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


def settings_from(ctx: click.Context, method_flags: dict | None = None, **more: object) -> Settings:
    """The settings of this command: its flags (shared ones, and method options by method), the
    environment, the config file (whose method tables are checked against the registry)."""
    root = ctx.find_root().obj
    settings = load_settings({**root["flags"], **more}, root["config_path"], method_flags)
    registry.check_config(settings.option_sources)
    return settings


@cli.command("config")
@click.option("--reference", is_flag=True, help="Print the reference of every setting and method option (Markdown: "
                                                "docs/configuration.md) instead.")
@click.pass_context
def config_cmd(ctx: click.Context, reference: bool) -> None:
    """Print the resolved settings and where each came from (secrets masked)."""
    if reference:
        click.echo(configuration_markdown(), nl=False)
        return
    settings = settings_from(ctx)
    path = Path(ctx.find_root().obj["config_path"] or default_config_path())
    click.echo(f"# config file: {path}" + ("" if path.is_file() else " (not present: defaults and environment)"))
    shown = settings.resolved()
    if settings.uses_local_server:  # say what "unset" means here
        shown["neo4j_uri"] = f"(local server) {settings.uri}"
        if not settings.neo4j_password:
            shown["neo4j_password"] = f"(generated, in {settings.home / 'password'})"
    for name, value in shown.items():
        click.echo(f"{name:20} = {value!s:50} [{settings.origins.get(name, 'default')}]")
    for spec in registry.specs():   # each method's options, as its [table] in the config file
        options, origins = registry.options_with_origins(settings, spec.name)
        if not origins:
            continue
        click.echo(f"[{spec.name}]")
        own = options.own_defaults()      # e.g. a shipped pipeline's options, where nothing set them
        for name, origin in origins.items():
            value, origin = own.get(name, (getattr(options, name), origin))
            click.echo(f"{name:20} = {value!s:50} [{origin}]")


def llm_options(command):
    """The flags that choose the language model, shared by ask and eval."""
    for option in reversed([
        click.option("--llm-backend", type=click.Choice(LLM_BACKENDS),
                     help="openai (OPENAI_BASE_URL, OPENAI_API_KEY), local (a GGUF in process), none (offline "
                          "strategy); default auto: openai when an endpoint or key is set, else none."),
        click.option("--llm-model", help="Model name (openai), or packaged model (local)."),
        click.option("--no-cache", is_flag=True, help="Call the model even for a prompt it has answered before."),
    ]):
        command = option(command)
    return command


def engine_options(command=None, *, workers: bool = True):
    """--engine, --address (and --workers, unless the command has its own): where a command's
    work runs (mhgraph.engine)."""
    if command is None:
        return lambda c: engine_options(c, workers=workers)
    if workers:
        command = click.option("--workers", type=click.IntRange(min=1),
                               help="With --engine ray: workers (default: one per GPU of the cluster, else 1).")(command)
    command = click.option("--address", help="With --engine ray: the Ray cluster's address (default: RAY_ADDRESS, "
                                             "else a Ray started on this machine for the command).")(command)
    return click.option("--engine", type=click.Choice(ENGINES), default="local", show_default=True,
                        help="Where the work runs: this process, or a Ray cluster (pip install 'mhgraph[ray]').")(command)


def similarity_weight_option(command):
    """--similarity-weight: lambda of the MHTS difficulty D = h - lambda * s (generate, eval)."""
    return click.option("--similarity-weight", default=LAMBDA, show_default=True, type=click.FloatRange(min=0),
                        help="lambda of the MHTS difficulty D = h - lambda * s (1 as published); "
                             "'mhgraph runs calibrate RUN' fits one to a run's misses.")(command)


def ray_only(engine: str, **flags: object) -> None:
    """Refuse the Ray engine's flags on the local engine rather than ignore them."""
    given = [f"--{name.replace('_', '-')}" for name, value in flags.items() if value not in (None, ())]
    if engine != "ray" and given:
        raise click.UsageError(f"{', '.join(given)} go with --engine ray")


def quiet_progress() -> None:
    """--no-progress also silences the bars of the libraries that load models."""
    os.environ["TQDM_DISABLE"] = "1"
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"


def _one_line(exc: BaseException) -> str:
    # a server error's message is its own text; a driver error's GQL message is generic, its str the reason
    text = str(exc) if isinstance(exc, DriverError) else str(getattr(exc, "message", None) or exc)
    return " ".join((text or type(exc).__name__).split())


def main() -> None:
    warnings.formatwarning = lambda message, *args, **kwargs: f"warning: {message}\n"
    try:
        if failures := registry.plugin_failures():
            raise MhgraphError(failures[0])
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
