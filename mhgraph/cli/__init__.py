"""The `mhgraph` command line: the root group (root.py), one module per shared command group,
and the command groups a method registers as its own (MethodSpec.commands: TreeHop's training,
metarag's reranker, the claim layer)."""

import importlib

from mhgraph.cli import (  # noqa: F401,E501  (each registers)
    corpus,
    documents,
    evaluate,
    generate,
    methods,
    runs,
    search,
    serve,
    server,
)
from mhgraph.cli.root import cli, main
from mhgraph.retrieval import registry

for _spec in registry.specs():
    for _ref in _spec.commands:
        _module, _, _name = _ref.partition(":")
        cli.add_command(getattr(importlib.import_module(_module), _name))

__all__ = ["cli", "main"]
