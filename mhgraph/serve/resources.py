"""What every request of a server shares: one pooled Neo4j driver, each model loaded once, and the
retrievers built from them, kept while their corpus is unchanged.

Requests run in worker threads. The Neo4j driver and the LLM layer are thread-safe (the LLM layer
serialises generation itself); an embedder or a reranker is called under its own lock, since a
fast tokenizer raises "Already borrowed" when two threads use it at once. The retrievers keep no
state between searches, so one serves concurrent requests.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

from pydantic import ValidationError

from mhgraph.answer import build_reader
from mhgraph.app.search import Evidence, language_model
from mhgraph.config import Settings
from mhgraph.embeddings import TextEmbedder, load_embedder
from mhgraph.errors import InputError
from mhgraph.graph.connection import connect
from mhgraph.graph.context import GraphContext
from mhgraph.graph.documents import corpus_facts
from mhgraph.graph.schema import corpus_embedding_model
from mhgraph.options import MethodOptions
from mhgraph.retrieval import registry
from mhgraph.retrieval.base import Retriever
from mhgraph.serve.schemas import error_at
from mhgraph.types import RetrievalResult

# retrievers kept (one per method, corpus and options); the least recently used goes first
RETRIEVERS_KEPT = 32
# while a corpus keeps changing (an ingest), its retrievers are rebuilt at most this often
REFRESH_SECONDS = 30.0


class Serialized:
    """`target` with the methods named in `methods` called one at a time; every other attribute
    is `target`'s own (a tokenizer, a model, a name)."""

    def __init__(self, target: Any, methods: tuple[str, ...]) -> None:
        self._target = target
        self._methods = methods
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if name not in self._methods:
            return value

        def locked(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return value(*args, **kwargs)
        return locked


# what runs a model (and its fast tokenizer): an embedder's and a reranker's
EMBEDDER_CALLS = ("embed_query", "embed_queries", "embed_documents")
RERANKER_CALLS = ("score", "scores_by_part")      # a combination's parts score through the second


class Resources:
    """The server's shared state: settings (the defaults of every request), the driver, the models
    and the retrievers. close() closes the driver."""

    def __init__(self, settings: Settings, *, cache: bool = True) -> None:
        self.settings = settings
        self.cache = cache
        self.driver = connect(settings)
        self._lock = threading.Lock()           # the tables below; held for lookups only, never a load
        self._loading: dict[object, threading.Lock] = {}   # one per model or retriever being loaded
        self._embedders: dict[str, TextEmbedder] = {}
        self._retrievers: OrderedDict[tuple, KeptRetriever] = OrderedDict()
        self._llm: Any = None
        self._llm_loaded = False

    def close(self) -> None:
        self.driver.close()

    @property
    def database(self) -> str | None:
        return self.settings.neo4j_database

    def graph(self, corpus: str | None) -> GraphContext:
        """The context of `corpus` (None: the server's corpus, else the graph's only one);
        NotFoundError if it is not there."""
        return GraphContext.open(self.driver, self.database, corpus or self.settings.corpus)

    def _loading_lock(self, key: object) -> threading.Lock:
        with self._lock:
            return self._loading.setdefault(key, threading.Lock())

    def llm(self) -> Any:
        """The configured language model, loaded on first use (None: the offline strategies)."""
        if not self._llm_loaded:
            with self._loading_lock("llm"):
                if not self._llm_loaded:
                    self._llm = language_model(self.settings, self.cache)
                    self._llm_loaded = True
        return self._llm

    def reader(self) -> Any:
        return build_reader(self.llm())

    def embedder(self, graph: GraphContext) -> TextEmbedder:
        """The embedder of the model `graph`'s corpus was ingested with, loaded once per model."""
        model = corpus_embedding_model(self.driver, self.database, graph.corpus, None) or self.settings.embedding_model
        if model not in self._embedders:
            with self._loading_lock(("embedder", model)):   # others wait for this model only
                if model not in self._embedders:
                    loaded = Serialized(load_embedder(model, self.settings.cache_dir), EMBEDDER_CALLS)
                    with self._lock:
                        self._embedders[model] = loaded
        return self._embedders[model]

    def options(self, method: str, given: dict[str, Any]) -> MethodOptions:
        """Method `method`'s options: the server's (its flags, environment and config file), with
        `given` over them, validated by the method's options class; InputError names the field."""
        spec = registry.get(method)
        base = registry.options_for(self.settings, method)
        try:
            # only what was set, so that fields left at their defaults still read as unset (a
            # shipped pipeline's own options fill those)
            return spec.options.model_validate({**base.model_dump(exclude_unset=True), **given})
        except ValidationError as exc:
            raise InputError("request", *error_at(exc, ("options",))) from None

    def search(self, question: str, method: str, k: int, corpus: str | None,
               options: dict[str, Any] | None = None) -> RetrievalResult:
        """`method`'s evidence for `question` on `corpus`, `options` over the server's."""
        resolved = self.options(method, options or {})
        graph = self.graph(corpus)
        return self.retriever(method, graph, resolved).search(question, top_k=k)

    def evidence(self, question: str, method: str, k: int, corpus: str | None,
                 options: dict[str, Any] | None = None) -> Evidence:
        """What an answer is read from, as `mhgraph ask` gathers it (app.search.gather_evidence):
        the reader (a model problem shows before retrieval) and the top `k` chunks of the final
        ranking."""
        reader = self.reader()
        result = self.search(question, method, k, corpus, options)
        return Evidence(result, result.final_ranking()[:k], reader)

    def retriever(self, method: str, graph: GraphContext, options: MethodOptions,
                  status: Callable[[str], None] = lambda message: None) -> Retriever:
        """Method `method` on `graph`'s corpus with `options`, built once and kept while the corpus
        is unchanged: the first request after an ingest or a delete (by this server or another
        process) changed the corpus's revision builds it afresh; while the corpus keeps changing
        (an ingest running), a retriever rebuilt so is kept REFRESH_SECONDS. One retriever per
        method, corpus and options, the least recently used dropped past RETRIEVERS_KEPT; a build
        holds up only the requests that need that retriever."""
        facts = corpus_facts(self.driver, self.database, graph.corpus)
        state = (facts["corpus_revision"], facts["corpus_created"])
        key = (method, graph.corpus, json.dumps(options.model_dump(mode="json"), sort_keys=True))
        if (found := self._kept(key, state)) is not None:
            return found
        with self._loading_lock(key):   # one build per key; the others wait for it, then find it kept
            if (found := self._kept(key, state)) is not None:
                return found
            with self._lock:
                previous = self._retrievers.get(key)
            try:
                retriever = self._build(method, graph, options, status)
            except BaseException:
                with self._lock:   # nothing kept: its lock need not stay
                    if key not in self._retrievers:
                        self._loading.pop(key, None)
                raise
            # a method that reranks holds its cross-encoder (tokenizer and all) as `reranker`
            if getattr(retriever, "reranker", None) is not None:
                retriever.reranker = Serialized(retriever.reranker, RERANKER_CALLS)
            refreshed = previous is not None and previous.state[1] == state[1]
            with self._lock:
                self._retrievers[key] = KeptRetriever(retriever, state, time.monotonic(), refreshed)
                self._retrievers.move_to_end(key)
                while len(self._retrievers) > RETRIEVERS_KEPT:
                    dropped, _ = self._retrievers.popitem(last=False)
                    self._loading.pop(dropped, None)
            return retriever

    def _build(self, method: str, graph: GraphContext, options: MethodOptions,
               status: Callable[[str], None]) -> Retriever:
        spec = registry.get(method)
        registry.check_ready(method, graph, options)
        embedder = self.embedder(graph) if spec.embedder else None
        llm = self.llm() if spec.calls_llm(options) else None
        return registry.build_retriever(method, graph, self.settings, options, embedder=embedder, llm=llm,
                                        status=status)

    def _kept(self, key: tuple, state: tuple) -> Retriever | None:
        """The kept retriever of `key` if it may serve a corpus in `state`, marked recently used:
        built on the corpus as it is, or a rebuild of a corpus still changing, less than
        REFRESH_SECONDS old (a corpus deleted and made again is never the same one)."""
        with self._lock:
            kept = self._retrievers.get(key)
            if kept is None:
                return None
            usable = kept.state == state or (kept.refreshed and kept.state[1] == state[1]
                                             and time.monotonic() - kept.built_at < REFRESH_SECONDS)
            if not usable:
                return None
            self._retrievers.move_to_end(key)
            return kept.retriever


@dataclass
class KeptRetriever:
    retriever: Retriever
    state: tuple            # the corpus's (revision, created) it was built on
    built_at: float         # time.monotonic() then
    refreshed: bool         # a rebuild after the corpus changed (kept a while if it changes again)
