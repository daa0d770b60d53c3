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
from mhgraph.claims.extract import LLMClaimExtractor, OfflineClaimExtractor
from mhgraph.claims.merge import DEFAULT_THRESHOLD, MergeSummary, merge_all
from mhgraph.claims.ray_engine import RayClaimsOptions, build_claims_on_ray
from mhgraph.claims.synonyms import DEFAULT_NEIGHBOURS, SynonymSummary, link_synonyms
from mhgraph.claims.synonyms import DEFAULT_THRESHOLD as SYNONYM_THRESHOLD
from mhgraph.config import Settings
from mhgraph.graph.connection import connect
from mhgraph.graph.context import GraphContext
from mhgraph.llm import load_llm
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
    llm = load_llm(settings, cache=cache)
    extractor = OfflineClaimExtractor() if llm is None else LLMClaimExtractor(llm)
    with connect(settings) as driver:
        graph = GraphContext.open(driver, settings.neo4j_database, settings.corpus)
        embedder = question_embedder(graph, settings)
        if engine == "ray":
            summary, pooled = build_claims_on_ray(
                settings, driver, graph.corpus, embedder, options=ray or RayClaimsOptions(), use_model=llm is not None,
                model_label=llm.label if llm is not None else "", batch_size=batch_size, limit=limit,
                merge_threshold=merge_threshold, cache=cache, progress=progress, only_new=only_new,
                documents=documents, extractor_label=extractor.label)
            return ClaimLayerBuild(summary, pooled)
        summary = build_claims(driver, graph.database, graph.corpus, extractor, embedder, batch_size=batch_size,
                               limit=limit, merge_threshold=merge_threshold, progress=progress, only_new=only_new,
                               documents=documents)
    return ClaimLayerBuild(summary, llm)


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
