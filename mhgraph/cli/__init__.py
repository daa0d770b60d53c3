"""The `mhgraph` command line: the root group (root.py) and one module per command group."""

from mhgraph.cli import (  # noqa: F401  (each registers)
    claims,
    corpus,
    evaluate,
    methods,
    rerank,
    runs,
    search,
    server,
    treehop,
)
from mhgraph.cli.root import cli, main

__all__ = ["cli", "main"]
