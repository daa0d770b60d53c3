"""Build, merge and link a corpus's claim layer (`mhgraph claims build|merge|synonyms`, `mhgraph ingest --claims`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from mhgraph.claims.build import (
    ClaimsSummary,
    build_claims,
    claim_layer_built,
    claims_summary,
)
from mhgraph.claims.extract import (
    OFFLINE_LABEL,
    LLMClaimExtractor,
    OfflineClaimExtractor,
)
from mhgraph.claims.merge import DEFAULT_THRESHOLD, MergeSummary, merge_all
from mhgraph.claims.ray_engine import RayClaimsOptions, build_claims_on_ray
from mhgraph.claims.synonyms import DEFAULT_NEIGHBOURS, SynonymSummary, link_synonyms
from mhgraph.claims.synonyms import DEFAULT_THRESHOLD as SYNONYM_THRESHOLD
from mhgraph.config import Settings
from mhgraph.errors import MhgraphError
from mhgraph.graph.connection import connect
from mhgraph.graph.context import GraphContext
from mhgraph.llm import MISSING_MODEL, backend_name, load_llm
from mhgraph.retrieval.registry import question_embedder


@dataclass
class ClaimLayerBuild:
    summary: ClaimsSummary
    llm: Any = None               # the extractor's model (label, usage), None for the offline extractor

    def lines(self) -> list[str]:
        lines = self.summary.lines()
        if self.llm is not None:
            u = self.llm.usage
            lines.append(f"  model     {self.llm.label}: {u.calls} calls ({u.cache_hits} cached), {u.prompt_tokens} "
                         f"prompt and {u.completion_tokens} completion tokens, {u.failures} failures")
        return lines


@dataclass
class NameMerge:
    corpus: str
    embedding_model: str
    merges: list[MergeSummary]
    counts: Any                   # topics, targets, bridges
    synonyms: SynonymSummary


def build_claim_layer(settings: Settings, *, batch_size: int = 32, limit: int | None = None,
                      merge_threshold: float | None = DEFAULT_THRESHOLD, cache: bool = True,
                      progress: bool = True, only_new: bool = False,
                      documents: Sequence[str] | None = None, engine: str = "local",
                      ray: RayClaimsOptions | None = None) -> ClaimLayerBuild:
    """Claims of every chunk of settings.corpus (or the graph's only corpus) not yet done (only_new:
    chunks with none; documents: only these documents' chunks), with the configured language model
    or the offline extractor (spaCy), then near-duplicate names merged (merge_threshold None: by
    name key only). engine "ray" spreads the extraction over a Ray cluster (claims/ray_engine.py)."""
    if engine == "ray":
        return _build_on_ray(settings, ray or RayClaimsOptions(), batch_size=batch_size, limit=limit,
                             merge_threshold=merge_threshold, cache=cache, progress=progress, only_new=only_new,
                             documents=documents)
    llm = load_llm(settings, cache=cache)
    extractor = OfflineClaimExtractor() if llm is None else LLMClaimExtractor(llm)
    with connect(settings) as driver:
        graph = GraphContext.open(driver, settings.neo4j_database, settings.corpus)
        embedder = question_embedder(graph, settings)
        summary = build_claims(driver, graph.database, graph.corpus, extractor, embedder, batch_size=batch_size,
                               limit=limit, merge_threshold=merge_threshold, progress=progress, only_new=only_new,
                               documents=documents)
    return ClaimLayerBuild(summary, llm)


def _build_on_ray(settings: Settings, options: RayClaimsOptions, **build: Any) -> ClaimLayerBuild:
    """The Ray engine's build: offline, or a model behind OpenAI-compatible endpoints (no model is
    loaded here; a local GGUF runs in one process and cannot be spread)."""
    backend = backend_name(settings)
    if backend == "local":
        raise MhgraphError("claims build --engine ray calls a model through OpenAI-compatible endpoints "
                           "(--llm-backend openai with --endpoints or OPENAI_BASE_URL); a local GGUF runs in one "
                           "process: serve it (llama.cpp's server) and name that endpoint")
    if backend == "openai" and not settings.llm_model:
        raise MhgraphError(MISSING_MODEL)
    label = f"openai:{settings.llm_model}" if backend == "openai" else OFFLINE_LABEL
    with connect(settings) as driver:
        graph = GraphContext.open(driver, settings.neo4j_database, settings.corpus)
        summary, pooled = build_claims_on_ray(settings, driver, graph.corpus, question_embedder(graph, settings),
                                              options=options, use_model=backend == "openai", model_label=label,
                                              extractor_label=label, **build)
    return ClaimLayerBuild(summary, pooled)


def has_claim_layer(settings: Settings) -> bool:
    """Whether settings.corpus has a claim layer (built or begun): an ingest that writes documents
    into it then extracts their claims, so the layer covers them too."""
    with connect(settings) as driver:
        graph = GraphContext.open(driver, settings.neo4j_database, settings.corpus)
        return claim_layer_built(driver, graph.database, graph.corpus)


def merge_names(settings: Settings, threshold: float = DEFAULT_THRESHOLD) -> NameMerge:
    """Merge the near-duplicate Topic and Target names of a built claim layer."""
    with connect(settings) as driver:
        graph = GraphContext.open(driver, settings.neo4j_database, settings.corpus)
        embedder = question_embedder(graph, settings)
        merges = merge_all(driver, graph.database, graph.corpus, embedder, threshold)
        synonyms = link_synonyms(driver, graph.database, graph.corpus, embedder)
        counts = claims_summary(driver, graph.database, graph.corpus)
    return NameMerge(graph.corpus, embedder.model_name, merges, counts, synonyms)


@dataclass
class SynonymLinks:
    corpus: str
    embedding_model: str
    summary: SynonymSummary


def link_names(settings: Settings, threshold: float = SYNONYM_THRESHOLD,
               neighbours: int = DEFAULT_NEIGHBOURS) -> SynonymLinks:
    """Redraw the SYNONYM edges between a built claim layer's Topic and Target names."""
    with connect(settings) as driver:
        graph = GraphContext.open(driver, settings.neo4j_database, settings.corpus)
        embedder = question_embedder(graph, settings)
        summary = link_synonyms(driver, graph.database, graph.corpus, embedder, threshold, neighbours)
    return SynonymLinks(graph.corpus, embedder.model_name, summary)
