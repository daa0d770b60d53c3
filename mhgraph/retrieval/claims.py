"""`claims`: claim-bridge retrieval over the claim layer (mhgraph/claims/build.py).

Hop 1: the question's bridge targets (2 to 4; mhgraph.claims.targets: a model or the labelled
offline finder); for each, its candidate claims (those pointing at a Target of that name, and the
nearest to the target's name in the Claim vector index), scored by similarity to the question;
the best `top_k` claims in all (8 as published). Hop 2: from each claim found, 1 to 2 further
targets (its own Target, another entity it names), at most `max_targets` (20) targets in all,
and for each new target its one claim nearest to the question, not used yet. The claims' chunks
are the evidence, each scored by its best claim's similarity to the question; a hop-2 chunk is
linked to the hop-1 chunk whose claim named its target (parent_id), and its `ClaimTrail` keeps, per hop,
which target led to which claim, so the traces hold question -> target -> claim -> chunk. A hop's
query is its targets, joined by "; ".
One Cypher round trip per hop (cypher/retrieval/claims_for_targets.cypher).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import neo4j

from mhgraph import cypher
from mhgraph.claims.build import CLAIM_INDEX, claim_count
from mhgraph.claims.diagnostics import ClaimTrail
from mhgraph.claims.merge import alias_map
from mhgraph.claims.names import node_key
from mhgraph.claims.targets import LLMTargetFinder, OfflineTargetFinder, TargetFinder
from mhgraph.embeddings import TextEmbedder
from mhgraph.errors import MhgraphError
from mhgraph.filters.sources import SourceCatalog
from mhgraph.graph.context import GraphContext
from mhgraph.graph.schema import index_info
from mhgraph.llm import LLMError
from mhgraph.options import MethodOptions, option
from mhgraph.retrieval.base import Retriever
from mhgraph.retrieval.merge import new_chunks
from mhgraph.retrieval.records import to_chunks
from mhgraph.retrieval.registry import BuildContext, MethodSpec
from mhgraph.types import Hop, RetrievalResult, RetrievedChunk


class ClaimsRetriever(Retriever):
    name = "claims"

    def __init__(self, driver: neo4j.Driver, embedder: TextEmbedder, finder: TargetFinder, database: str | None = None,
                 *, corpus: str, max_targets: int = 20, candidates: int = 20) -> None:
        self.driver = driver
        self.embedder = embedder
        self.finder = finder
        self.database = database
        self.corpus = corpus
        self.max_targets = max_targets
        self.candidates = candidates
        # names merged into another Target (mhgraph/claims/merge.py): a question's target is looked up by the kept key
        self.aliases = alias_map(driver, database, corpus, "Target")

    def _key(self, name: str) -> str:
        return node_key(name, self.aliases)

    @property
    def params(self) -> dict[str, Any]:
        return {"corpus": self.corpus, "max_targets": self.max_targets, "target_finder": self.finder.label}

    def _claims(self, targets: list[str], question: list[float], per_target: int,
                exclude: set[str]) -> list[neo4j.Record]:
        vectors = self.embedder.embed_queries(targets)
        rows = [{"key": self._key(t), "name": t, "embedding": [float(x) for x in v]}
                for t, v in zip(targets, vectors)]
        records, _, _ = self.driver.execute_query(
            cypher.load("retrieval/claims_for_targets"), targets=rows, corpus=self.corpus, question=question,
            per_target=per_target, candidates=self.candidates, exclude=sorted(exclude), database_=self.database,
            routing_=neo4j.RoutingControl.READ)
        return records

    def search(self, question: str, *, top_k: int = 8, **options: Any) -> RetrievalResult:
        started = time.perf_counter()
        failure = None
        q = [float(x) for x in self.embedder.embed_query(question)]
        try:
            asked = self.finder.question_targets(question)
        except LLMError as exc:
            asked, failure = [], str(exc)
        t = time.perf_counter()
        first = sorted(self._claims(asked, q, top_k, set()), key=lambda r: (-r["score"], r["claim_id"]))
        seen_claims: dict[str, None] = {}
        hop1 = []
        for r in first:   # a claim found through two targets counts once; the best top_k claims
            if r["claim_id"] not in seen_claims and len(seen_claims) < top_k:
                seen_claims[r["claim_id"]] = None
                hop1.append(r)
        hops = [Hop(1, self._chunks(hop1, {}), query="; ".join(asked), seconds=time.perf_counter() - t)]
        trail = [{"hop": 1, "target": r["asked"], "claim": r["claim_id"], "claim_text": r["claim"],
                  "chunk": r["chunk_id"]} for r in hop1]
        used = {self._key(a) for a in asked}
        further: list[str] = []
        parent_of: dict[str, str] = {}
        if hop1:
            try:
                named = self.finder.further_targets(question, [(r["claim"], r["claim_target"]) for r in hop1])
            except LLMError as exc:
                named, failure = [[] for _ in hop1], str(exc)
            for r, names in zip(hop1, named):
                for name in names:
                    key = self._key(name)
                    if key not in used and len(used) < self.max_targets:
                        used.add(key)
                        further.append(name)
                        parent_of[key] = r["chunk_id"]
        if further:
            t = time.perf_counter()
            second = self._claims(further, q, 1, set(seen_claims))
            hop2 = [r for r in second if r["claim_id"] not in seen_claims]
            chunks = new_chunks(self._chunks(hop2, parent_of), {c.chunk_id for c in hops[0].chunks}, None)
            hops.append(Hop(2, chunks, query="; ".join(further), seconds=time.perf_counter() - t))
            trail += [{"hop": 2, "target": r["asked"], "claim": r["claim_id"], "claim_text": r["claim"],
                       "chunk": r["chunk_id"], "bridged_from": parent_of.get(r["asked"])} for r in hop2]
        found = ClaimTrail(self.finder.label, tuple(asked), tuple(further), tuple(trail), failure)
        return RetrievalResult(question, self.name, hops, params={"top_k": top_k, **self.params},
                               seconds=time.perf_counter() - started, diagnostics=(found,))

    @staticmethod
    def _chunks(records: list[neo4j.Record], parent_of: dict[str, str]) -> list[RetrievedChunk]:
        """Distinct chunks of the claims, best claim's score first, linked to the chunk that bridged."""
        best: dict[str, neo4j.Record] = {}
        for r in records:
            if r["chunk_id"] not in best or r["score"] > best[r["chunk_id"]]["score"]:
                best[r["chunk_id"]] = r
        ordered = sorted(best.values(), key=lambda r: (-r["score"], r["chunk_id"]))
        return [replace(c, parent_id=parent_of.get(r["asked"])) for c, r in zip(to_chunks(ordered), ordered)]


class ClaimsOptions(MethodOptions):
    max_targets: int = option(20, "Targets searched in all, hop 2's included.", ge=1)
    candidates: int = option(20, "Candidate claims per target (by Target name and the Claim vector index) "
                             "before they are scored against the question.", ge=1)


def require_claims(graph: GraphContext) -> None:
    """Before any model loads: the corpus's claim layer must be there, and the server able to search it."""
    graph.capabilities.require_search_clause("the claim layer's search (the Claim vector index, inside one corpus)")
    if index_info(graph.driver, graph.database, CLAIM_INDEX) is None or not claim_count(
            graph.driver, graph.database, graph.corpus):
        raise MhgraphError(f"corpus '{graph.corpus}' has no claims: run 'mhgraph claims build --corpus "
                           f"{graph.corpus}' first")


def build(ctx: BuildContext, options: ClaimsOptions) -> ClaimsRetriever:
    g = ctx.graph
    finder = (LLMTargetFinder(ctx.llm) if ctx.llm is not None
              else OfflineTargetFinder(SourceCatalog.from_graph(g.driver, g.database, g.corpus)))
    return ClaimsRetriever(g.driver, ctx.embedder, finder, g.database, corpus=g.corpus,
                           max_targets=options.max_targets, candidates=options.candidates)


METHOD = MethodSpec(
    name="claims", description="claim-bridge retrieval over the claim layer: question targets, claims, "
                               "and the targets those claims name",
    options=ClaimsOptions, build=build, indexes=("vector",), embedder=True, uses_llm=True,
    requires=require_claims, diagnostics=(ClaimTrail,), extra="claims",
    commands=("mhgraph.cli.claims:claims_group",))
