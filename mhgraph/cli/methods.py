"""`mhgraph methods`: the retrieval methods this installation knows, from the registry."""

from __future__ import annotations

import click

from mhgraph.cli.root import cli
from mhgraph.retrieval import registry


@cli.command("methods")
@click.option("--options", "show_options", is_flag=True, help="Also list each method's options.")
def methods_cmd(show_options: bool) -> None:
    """The retrieval methods: what each does, the indexes it needs, whether it calls a model."""
    for spec in registry.specs():
        defaults = spec.options()
        needs = ", ".join(spec.needed_indexes(defaults)) or "-"
        model = "language model or offline strategy" if spec.calls_llm(defaults) else (
            "language model when its options ask" if callable(spec.uses_llm) else "no language model")
        click.echo(f"{spec.name:10} {spec.description}")
        click.echo(f"{'':10} indexes: {needs}; {model}"
                   + ("; few-shot demonstrations left out of its figures" if spec.demonstrated else "")
                   + (f"; needs mhgraph[{spec.extra}]" if spec.extra else ""))
        if show_options:
            for info in spec.option_infos():
                where = (f"[{spec.name}] {info.name}, config file only" if info.config_only
                         else f"{info.flag} (${info.envs[0]}, [{spec.name}] {info.name})")
                click.echo(f"{'':12}{where}: {info.help}")
