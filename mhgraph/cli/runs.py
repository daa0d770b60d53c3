"""`mhgraph runs`: the evaluation runs, listed, shown, compared, calibrated and deleted."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path

import click

from mhgraph.cli.root import cli, settings_from
from mhgraph.errors import MhgraphError
from mhgraph.eval import traces
from mhgraph.eval.calibration import calibration_report, points_from_results
from mhgraph.graph.connection import connect
from mhgraph.wording import counted

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
                   + (f"  STALE: {counted(len(r['stale_keys']), 'document')} changed since" if r["stale"] else ""))


@runs_group.command("show")
@click.argument("run")
@_runs_dir_option
@click.pass_context
def show_cmd(ctx: click.Context, run: str, runs_dir: Path) -> None:
    """The report of RUN (an id under the runs folder, a run folder or its report.json; else the
    summary stored with the run in Neo4j)."""
    from mhgraph.eval.report import to_markdown

    click.echo(to_markdown(_summary(ctx, run, runs_dir)))


def _summary(ctx: click.Context, run: str, runs_dir: Path) -> dict:
    """RUN's summary: from its folder (an id under the runs folder, a run folder or its report.json),
    else the one stored with the run in Neo4j (a run made in another folder)."""
    from mhgraph.eval.runner import load_summary

    try:
        return load_summary(run, runs_dir)
    except MhgraphError as missing:
        if Path(run).exists():   # a file or folder that is not a run: no id to look up
            raise
        settings = settings_from(ctx)
        with connect(settings) as driver:
            stored = traces.run_summary(driver, settings.neo4j_database, run)
        if stored is None:
            raise MhgraphError(f"{missing} and no run '{run}' in the graph (see 'mhgraph runs list')") from None
        return json.loads(stored)


@runs_group.command("compare")
@click.argument("runs", nargs=-1, required=True)
@_runs_dir_option
@click.pass_context
def compare_cmd(ctx: click.Context, runs: tuple[str, ...], runs_dir: Path) -> None:
    """RUNS (ids or run folders; else the summaries stored with the runs in Neo4j) in one table and one
    plot, written to the runs folder."""
    from mhgraph.eval.report import compare

    out = runs_dir / f"compare-{datetime.now(timezone.utc):%Y%m%dT%H%M%S}"
    summaries = [_summary(ctx, r, runs_dir) for r in runs]
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


@runs_group.command("calibrate")
@click.argument("run")
@click.option("--check", "checks", multiple=True, help="Another run (e.g. on real questions) to score the fitted "
                                                      "weight on; repeatable.")
@click.option("--at", "at", default=10, show_default=True, type=click.IntRange(min=1), help="The miss is 1 - Recall@AT.")
@click.option("--rule", type=click.Choice(["official", "ours"]), default="official", show_default=True,
              help="Whose Recall@AT: the official MultiHop-RAG rule's (the run must have been scored with it) or ours.")
@click.option("--min-bin", default=50, show_default=True, type=click.IntRange(min=1), help="Questions per D bin, at least.")
@click.option("--max-bins", default=10, show_default=True, type=click.IntRange(min=3), help="D bins, at most.")
@_runs_dir_option
def calibrate_cmd(run: str, checks: tuple[str, ...], at: int, rule: str, min_bin: int, max_bins: int,
                  runs_dir: Path) -> None:
    """Fit the similarity weight lambda of the MHTS difficulty D = h - lambda * s to RUN's misses, and
    say how well D orders them (Pearson r over equal-count D bins) with lambda 1 and the fitted one.
    Written beside RUN's results as calibration.json."""
    from mhgraph.eval.runner import load_results

    def points(name: str) -> tuple[Path, list]:
        path, rows = load_results(name, runs_dir)
        found = points_from_results(rows, at=at, rule=rule)
        if not found:
            hint = (" (the official rule scores Recall@10 only)" if rule == "official" and at != 10 else
                    " (run eval with --scoring official or both)" if rule == "official" else "")
            raise MhgraphError(f"{path}: no question with a difficulty and a Recall@{at} by the {rule} rule{hint}")
        return path, found

    path, fitted_on = points(run)
    report = calibration_report((str(path), fitted_on), {str(p): found for p, found in map(points, checks)},
                                min_bin=min_bin, max_bins=max_bins)
    fit = report.fit
    click.echo(f"{path}: {len(fitted_on)} questions with gold evidence; miss = 1 - Recall@{at} ({rule} rule)")
    click.echo(f"least-squares miss: {fit.hop_slope:+.3f} per hop, {fit.similarity_slope:+.3f} per unit of s; "
               + (f"similarity weight lambda = {report.weight:g}" if report.weight is not None
                  else f"no weight fitted: {fit.note}"))
    for where, by_weight in report.runs.items():
        role = "fitted on" if where == str(path) else "checked on"
        rows = [*((f"lambda {w}", cal) for w, cal in by_weight.items()), ("s alone", report.similarity_alone[where])]
        for name, cal in rows:
            shown = f"r {cal.r:.3f} (p {cal.p:.2g}, {len(cal.bins)} bins)" if cal.r is not None else cal.note
            click.echo(f"  {role} {where}: {name}: {shown}")
    for b in report.runs[str(path)][f"{report.weights[-1]:g}"].bins:
        click.echo(f"    D [{b.low:.3f}, {b.high:.3f})  {b.questions:5} questions  mean D {b.mean_difficulty:.3f}  "
                   f"miss {b.miss_rate:.3f}")
    out = path.with_name("calibration.json")
    try:
        out.write_text(json.dumps({"run": str(path), "at": at, "rule": rule, **asdict(report)}, indent=1),
                       encoding="utf-8")
    except OSError as exc:
        raise MhgraphError(f"{out}: cannot write the calibration ({exc.strerror})") from None
    if report.weight is not None:
        click.echo(f"use it: mhgraph eval --similarity-weight {report.weight:g} ...; "
                   f"mhgraph generate --similarity-weight {report.weight:g} ...")
    click.echo(f"written: {out}")


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
