"""What the benchmark reports share: number cells, Markdown tables, the Neo4j server they ran on,
and the arguments, run summaries, question label and compare table of the run-comparing reports."""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path


def f(value: float | None) -> str:
    """A score cell: three decimals, '-' for none."""
    return "-" if value is None else f"{value:.3f}"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header), *("| " + " | ".join(r) + " |" for r in rows)]


def neo4j_server() -> str:
    """The local server's version line from `mhgraph neo4j status` ('-' when it does not say)."""
    status = subprocess.run(["mhgraph", "neo4j", "status"], capture_output=True, text=True).stdout
    return next((line.split(":", 1)[1].strip() for line in status.splitlines() if line.startswith("server:")), "-")


def report_parser(doc: str) -> argparse.ArgumentParser:
    """The arguments every run-comparing report takes: the compare table, the run folders, the
    questions file and the command that made them; a report adds its own."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("compare")
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--questions", required=True)
    parser.add_argument("--command", required=True)
    return parser


def runs_report_parser(doc: str) -> argparse.ArgumentParser:
    """The arguments of a report over run folders without a compare table: the run folders, the
    corpus name, the questions file, the command that made them and the .json to write."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--name", required=True)
    parser.add_argument("--questions", required=True)
    parser.add_argument("--command", required=True)
    parser.add_argument("--json", required=True)
    return parser


def load_summaries(runs: list[str]) -> dict[str, dict]:
    """Each run folder's report.json, by folder name, in the order given."""
    return {Path(r).name: json.loads((Path(r) / "report.json").read_text()) for r in runs}


def split_label(questions: str) -> str:
    """How a report names its questions: the development split with its count, or a count."""
    count = len(json.loads(Path(questions).read_text()))
    return (f"MultiHop-RAG, development split ({count:,} questions)" if Path(questions).name == "MultiHopRAG.json"
            else f"{count} questions")


def compare_lines(compare: str) -> list[str]:
    """The table of `mhgraph eval --compare`'s compare.md, from its caption on, without the plot."""
    lines = Path(compare).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Macro averages"))
    return [line for line in lines[start:] if not line.startswith("![")]
