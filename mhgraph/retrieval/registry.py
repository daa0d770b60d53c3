"""The retrieval methods mhgraph knows: a table of data, imported lazily.

Each method's module declares it once as `METHOD = MethodSpec(...)`: its name, a one-line
description, the indexes it needs, whether it calls a language model, whether its model steps
are shown demonstrations, its options class, its diagnostics records and how it is built from a
graph context. `BUILTIN` maps names to those modules, so listing the methods imports nothing;
building one imports its module only. Everything the CLI, the configuration and the evaluation
know about methods comes from here.

Methods from elsewhere register themselves: a module named in $MHGRAPH_PLUGINS (comma-separated)
or in the `mhgraph.methods` entry-point group is imported on first use, and calls `register()`
(or defines `METHOD`).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Callable, Mapping, Sequence

from mhgraph.config import DEFAULT_EMBEDDING_MODEL, SHARED, Settings
from mhgraph.embeddings import TextEmbedder, canonical_model_name, load_embedder
from mhgraph.errors import MhgraphError, NotFoundError
from mhgraph.graph.context import GraphContext
from mhgraph.graph.schema import (
    VECTOR_INDEX,
    corpus_embedding_model,
    fulltext_index,
    require_index,
)
from mhgraph.options import (
    MethodOptions,
    OptionInfo,
    OptionSources,
    legacy_keys,
    option_infos,
    resolve,
)
from mhgraph.retrieval.base import Retriever
from mhgraph.types import Diagnostics

# name -> the module that declares it (METHOD); the order is the order users see
BUILTIN: dict[str, str] = {
    "vector": "mhgraph.retrieval.vector",
    "bm25": "mhgraph.retrieval.bm25",
    "hybrid": "mhgraph.retrieval.hybrid",
    "metarag": "mhgraph.retrieval.metarag",
    "treehop": "mhgraph.retrieval.treehop",
    "ircot": "mhgraph.retrieval.ircot",
    "decompose": "mhgraph.retrieval.decompose",
    "claims": "mhgraph.retrieval.claims",
    "ppr": "mhgraph.retrieval.ppr",
    "compose": "mhgraph.retrieval.compose",
}
DEFAULT_METHOD = "vector"
PLUGINS_ENV = "MHGRAPH_PLUGINS"
ENTRY_POINTS = "mhgraph.methods"
# the index names a spec may list, and the Neo4j index each means for a corpus
INDEXES: dict[str, Callable[[str], str]] = {"vector": lambda corpus: VECTOR_INDEX, "fulltext": fulltext_index}


@dataclass(frozen=True)
class BuildContext:
    """What a method's `build` gets: the graph, the shared settings, the question embedder (when
    the method needs one), the language model (when it calls one; None: its offline strategy),
    the evaluated questions (an oracle's input) and components a caller loaded already."""

    graph: GraphContext
    settings: Settings
    embedder: TextEmbedder | None = None
    llm: Any = None
    questions: Sequence[Any] | None = None
    components: Mapping[str, Any] = field(default_factory=dict)
    # says what is loading (a model, a reranker), for a user waiting on the first line
    status: Callable[[str], None] = lambda message: None


@dataclass(frozen=True)
class MethodSpec:
    name: str
    description: str                                 # one line, shown by --help and the docs
    options: type[MethodOptions]
    build: Callable[[BuildContext, Any], Retriever]  # (context, its options) -> the retriever
    # "vector" / "fulltext", or a function of the options giving them
    indexes: Sequence[str] | Callable[[Any], Sequence[str]] = ()
    embedder: bool = False                           # embeds the question with the corpus's model
    # whether it calls a language model itself (with the none backend: its offline strategy)
    uses_llm: bool | Callable[[Any], bool] = False
    # question texts its model steps are shown as demonstrations: left out of every figure
    held_out: Callable[[], frozenset[str]] | None = None
    diagnostics: tuple[type[Diagnostics], ...] = ()
    # a check before anything loads (e.g. a layer the method reads must be built)
    requires: Callable[[GraphContext], None] | None = None
    # where the method needs more than its module (an optional extra): `pip install ...`
    extra: str | None = None
    # its own command groups ("module:attribute" of a click group; imported when the CLI starts)
    commands: tuple[str, ...] = ()
    # the other methods whose options it reads, given its own (compose: its stages' methods), and
    # those of their options ("method.field") it sets itself or leaves unused (the stages line's)
    reads: Callable[[Any], Sequence[str]] | None = None
    overrides: Callable[[Any], Sequence[str]] | None = None

    def needed_indexes(self, options: Any) -> tuple[str, ...]:
        return tuple(self.indexes(options) if callable(self.indexes) else self.indexes)

    def calls_llm(self, options: Any) -> bool:
        return bool(self.uses_llm(options) if callable(self.uses_llm) else self.uses_llm)

    @property
    def demonstrated(self) -> bool:
        return self.held_out is not None

    def option_infos(self) -> list[OptionInfo]:
        return option_infos(self.name, self.options)


_registered: dict[str, MethodSpec] = {}
_plugins_loaded = False
_plugin_failures: list[str] = []


def register(spec: MethodSpec) -> MethodSpec:
    """Add (or replace) a method; returns it, so a module can write `METHOD = register(...)`."""
    if not spec.name.replace("-", "").replace("_", "").isalnum():
        raise MhgraphError(f"method name {spec.name!r}: letters, digits, '-' and '_' only")
    _registered[spec.name] = spec
    return spec


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    modules = [m.strip() for m in os.environ.get(PLUGINS_ENV, "").split(",") if m.strip()]
    for entry in metadata.entry_points(group=ENTRY_POINTS):
        modules.append(entry.value.split(":")[0])
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:   # kept, not raised: the CLI is importing its commands (plugin_failures)
            _plugin_failures.append(f"${PLUGINS_ENV}: cannot import method module '{name}': {exc}")
            continue
        if isinstance(spec := getattr(module, "METHOD", None), MethodSpec):
            register(spec)


def plugin_failures() -> list[str]:
    """Why each method module named in $MHGRAPH_PLUGINS or the entry points did not import."""
    _load_plugins()
    return list(_plugin_failures)


def names() -> tuple[str, ...]:
    """Every method's name, built-in ones first; nothing is imported but plugin modules."""
    _load_plugins()
    return tuple(BUILTIN) + tuple(n for n in _registered if n not in BUILTIN)


def get(name: str) -> MethodSpec:
    """The method called `name`, its module imported on first use; a one-line error listing the
    methods otherwise."""
    if name in _registered:
        return _registered[name]
    if name in BUILTIN:
        spec = importlib.import_module(BUILTIN[name]).METHOD
        return _registered.setdefault(name, spec)
    known = names()
    if name in _registered:
        return _registered[name]
    raise NotFoundError(f"unknown method '{name}' (available: {', '.join(known)})")


def specs() -> list[MethodSpec]:
    return [get(n) for n in names()]


def diagnostics_types() -> dict[str, type[Diagnostics]]:
    """kind -> Diagnostics class, over every method (a report renders the kinds its summary holds)."""
    out: dict[str, type[Diagnostics]] = {}
    for spec in specs():
        for cls in spec.diagnostics:
            out.setdefault(cls.kind, cls)
    return out


def options_for(settings: Settings, name: str) -> Any:
    """The resolved options of method `name` (flags > environment > config file > defaults)."""
    return options_with_origins(settings, name)[0]


def options_with_origins(settings: Settings, name: str) -> tuple[Any, dict[str, str]]:
    spec = get(name)
    return resolve(name, spec.options, settings.option_sources)


def methods_read(settings: Settings, name: str) -> tuple[str, ...]:
    """`name` and every method whose options it reads as configured (its stages', theirs)."""
    return tuple(_reading(settings, name)[0])


def options_overridden(settings: Settings, name: str) -> frozenset[str]:
    """The options ("method.field") of the methods `name` reads that it sets itself or leaves
    unused as configured (a pipeline's line sets its filtered search's extractor, say)."""
    return frozenset(_reading(settings, name)[1])


def _reading(settings: Settings, name: str) -> tuple[list[str], set[str]]:
    seen: list[str] = []
    overridden: set[str] = set()
    todo = [name]
    while todo:
        method = todo.pop(0)
        if method in seen:
            continue
        seen.append(method)
        spec = get(method)
        if spec.reads is not None or spec.overrides is not None:
            options = options_for(settings, method)
            todo.extend(spec.reads(options) if spec.reads else ())
            overridden.update(spec.overrides(options) if spec.overrides else ())
    return seen, overridden


def unread_flags(settings: Settings, name: str) -> dict[str, tuple[str, ...]]:
    """The flags given on the command line that set no option method `name` reads (an option of
    a method it does not read, or one it sets itself), each with the options it sets
    ("method.field"): a flag every command takes, ignored by this run."""
    read, overridden = _reading(settings, name)
    sets: dict[str, list[str]] = {}
    for method, fields in settings.option_sources.flags.items():
        flags = {info.name: info.flag for info in get(method).option_infos()}
        for field_name in fields:
            sets.setdefault(flags[field_name], []).append(f"{method}.{field_name}")
    order = {method: n for n, method in enumerate(names())}
    return {flag: tuple(sorted(keys, key=lambda key: order.get(key.partition(".")[0], len(order))))
            for flag, keys in sets.items()
            if all(key.partition(".")[0] not in read or key in overridden for key in keys)}


def check_config(sources: OptionSources) -> None:
    """A one-line error for a config-file table that is no method, or a top-level key that is
    neither a setting nor an older flat key of some method's option."""
    known = names()
    if unknown := sorted(set(sources.tables) - set(known)):
        raise MhgraphError(f"{sources.path}: unknown table [{unknown[0]}] (methods: {', '.join(known)})")
    legacy = legacy_keys([i for spec in specs() for i in spec.option_infos()])
    if unknown := sorted(set(sources.flat) - legacy):
        raise MhgraphError(f"{sources.path}: unknown setting '{unknown[0]}' (settings: {', '.join(sorted(SHARED))}; "
                           f"method options go in a table such as [{DEFAULT_METHOD}])")


def question_embedder(graph: GraphContext, settings: Settings,
                      status: Callable[[str], None] = lambda message: None) -> TextEmbedder:
    """The embedder of the model the corpus was ingested with; a model set explicitly (--model,
    MHGRAPH_EMBEDDING_MODEL, the config file) must be that one."""
    explicit = (settings.origins.get("embedding_model", "default") != "default"
                or settings.embedding_model != DEFAULT_EMBEDDING_MODEL)
    model = corpus_embedding_model(graph.driver, graph.database, graph.corpus,
                                   canonical_model_name(settings.embedding_model) if explicit else None)
    status(f"loading embedding model {model or settings.embedding_model}")
    return load_embedder(model or settings.embedding_model, settings.cache_dir)


def check_ready(name: str, graph: GraphContext, options: Any) -> None:
    """What method `name` needs of the graph is there (its layer, its indexes): a one-line error
    otherwise, before any model loads."""
    spec = get(name)
    if spec.requires is not None:
        spec.requires(graph)
    for index in spec.needed_indexes(options):
        require_index(graph.driver, graph.database, INDEXES[index](graph.corpus) if index in INDEXES else index)


def build_retriever(name: str, graph: GraphContext, settings: Settings, options: Any = None, *,
                    embedder: TextEmbedder | None = None, llm: Any = None, questions: Sequence[Any] | None = None,
                    status: Callable[[str], None] = lambda message: None, **components: Any) -> Retriever:
    """Method `name` on `graph`'s corpus with `options` (default: resolved from `settings`): its
    requirements checked before any model loads, the indexes it needs checked, the corpus's
    embedder loaded if it needs one (a caller's embedder must be the corpus's model)."""
    spec = get(name)
    options = options if options is not None else options_for(settings, name)
    check_ready(name, graph, options)
    if spec.embedder:
        if embedder is None:
            embedder = question_embedder(graph, settings, status)
        else:  # same-size vectors of another model would not tell
            corpus_embedding_model(graph.driver, graph.database, graph.corpus, embedder.model_name)
    context = BuildContext(graph, settings, embedder, llm if spec.calls_llm(options) else None, questions, components,
                           status)
    return spec.build(context, options)


def held_out(name: str) -> frozenset[str]:
    spec = get(name)
    return spec.held_out() if spec.held_out is not None else frozenset()
