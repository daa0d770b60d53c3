"""`mhgraph runs`: the evaluation runs, listed, shown, compared and deleted."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import click

from mhgraph.cli.root import cli, settings_from
from mhgraph.errors import MhgraphError
from mhgraph.eval import traces
from mhgraph.graph.connection import connect

RUNS_DIR = Path("runs")


@cli.group("runs")
def runs_group() -> None:
    """Evaluation runs: their reports (in the runs folder) and traces (in Neo4j)."""


def _runs_dir_option(command):
    return click.option("--runs-dir", default=RUNS_DIR, show_default=True, type=click.Path(path_type=Path),
                        help="Folder the runs' reports are written to.")(command)


@runs_group.command("list")
@click.pass_context
def list_cmd(ctx: click.Context) -> None:
    """The runs stored in Neo4j, newest first."""
    settings = settings_from(ctx)
    with connect(settings) as driver:
        runs = traces.list_runs(driver, settings.neo4j_database)
    if not runs:
        click.echo("no runs in the graph (run 'mhgraph eval --method METHOD')")
    for r in runs:
        click.echo(f"{r['id']:40} {r['method']:10} {r['corpus'] or '-':16} {r['questions']:5} questions  "
                   f"Hits@10 {r['hits_at_10'] or 0:.3f}  MRR@10 {r['mrr_at_10'] or 0:.3f}"
                   + (f"  STALE: {len(r['stale_keys'])} documents changed since" if r["stale"] else ""))


@runs_group.command("show")
@click.argument("run")
@_runs_dir_option
@click.pass_context
def show_cmd(ctx: click.Context, run: str, runs_dir: Path) -> None:
    """The report of RUN (an id under the runs folder, a run folder or its report.json; else the
    summary stored with the run in Neo4j)."""
    from mhgraph.eval.report import to_markdown
    from mhgraph.eval.runner import load_summary

    try:
        summary = load_summary(run, runs_dir)
    except MhgraphError as missing:
        settings = settings_from(ctx)
        with connect(settings) as driver:
            stored = traces.run_summary(driver, settings.neo4j_database, run)
        if stored is None:
            raise MhgraphError(f"{missing} and no run '{run}' in the graph (see 'mhgraph runs list')") from None
        summary = json.loads(stored)
    click.echo(to_markdown(summary))


@runs_group.command("compare")
@click.argument("runs", nargs=-1, required=True)
@_runs_dir_option
@click.pass_context
def compare_cmd(ctx: click.Context, runs: tuple[str, ...], runs_dir: Path) -> None:
    """RUNS (ids or run folders) in one table and one plot, written to the runs folder."""
    from mhgraph.eval.report import compare
    from mhgraph.eval.runner import load_summary

    out = runs_dir / f"compare-{datetime.now(timezone.utc):%Y%m%dT%H%M%S}"
    summaries = [load_summary(r, runs_dir) for r in runs]
    markdown, plots = compare(summaries, out)
    markdown += stale_note(ctx, [s.get("run_id", "") for s in summaries])
    (out / "compare.md").write_text(markdown, encoding="utf-8")
    click.echo(markdown)
    click.echo(f"written: {out / 'compare.md'}, {', '.join(map(str, plots))}")


def stale_note(ctx: click.Context, run_ids: list[str]) -> str:
    """Lines naming the compared runs the graph marks stale (documents they retrieved were replaced
    or deleted since); nothing when the graph cannot be reached (a report folder alone is compared)."""
    try:
        settings = settings_from(ctx)
        with connect(settings) as driver:
            stale = traces.stale_runs(driver, settings.neo4j_database, [r for r in run_ids if r])
    except Exception:   # comparing report folders needs no server
        return ""
    lines = [f"- **stale**: run {run} retrieved documents replaced or deleted since "
             f"({len(keys)}: {', '.join(keys[:3])}{', ...' if len(keys) > 3 else ''}); its figures are of the "
             "corpus as it was" for run, keys in stale.items()]
    return "\n\n" + "\n".join(lines) + "\n" if lines else ""


@runs_group.command("delete")
@click.argument("run")
@click.pass_context
def delete_cmd(ctx: click.Context, run: str) -> None:
    """Delete RUN's traces from Neo4j (its report folder stays)."""
    settings = settings_from(ctx)
    with connect(settings) as driver:
        if not traces.delete_run(driver, settings.neo4j_database, run):
            raise MhgraphError(f"no run '{run}' in the graph (see 'mhgraph runs list')")
    click.echo(f"deleted run {run}")
