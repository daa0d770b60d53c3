"""`decompose`: query decomposition. The decomposer (mhgraph.reasoning.decomposer: a language
model, or the labelled offline strategy) splits the question into at most N sub-questions; each is
one hop: its top-k chunks from the vector index (k = 5 in the comparative study), the chunks an
earlier sub-question already found left out of its hop. The final ranking fuses the
sub-questions' rankings (mhgraph.retrieval.merge). When the model fails, the question itself is
the one sub-question and the failure is recorded."""

from __future__ import annotations

import time
from typing import Any

from mhgraph.filters.sources import SourceCatalog
from mhgraph.llm import LLMError
from mhgraph.options import MethodOptions, option
from mhgraph.reasoning import demonstrations
from mhgraph.reasoning.decomposer import Decomposer, LLMDecomposer, OfflineDecomposer
from mhgraph.reasoning.diagnostics import ReasoningChain
from mhgraph.retrieval.base import Retriever
from mhgraph.retrieval.merge import fused_scores, new_chunks, rescore
from mhgraph.retrieval.registry import BuildContext, MethodSpec
from mhgraph.retrieval.vector import VectorRetriever
from mhgraph.types import Hop, RetrievalResult


class DecomposeRetriever(Retriever):
    name = "decompose"

    def __init__(self, search: VectorRetriever, decomposer: Decomposer, *, sub_questions: int = 3) -> None:
        self.vector = search
        self.decomposer = decomposer
        self.sub_questions = sub_questions

    @property
    def params(self) -> dict[str, Any]:
        return {"corpus": self.vector.corpus, "sub_questions": self.sub_questions,
                "decomposer": self.decomposer.label}

    def search(self, question: str, *, top_k: int = 5, **options: Any) -> RetrievalResult:
        started = time.perf_counter()
        failure = None
        try:
            subs = self.decomposer.decompose(question, self.sub_questions)
        except LLMError as exc:
            subs, failure = [], str(exc)
        phases = {"decompose": time.perf_counter() - started, "search": 0.0}
        asked = subs or [question]
        hops: list[Hop] = []
        rankings: list[list[str]] = []
        held: set[str] = set()
        for sub in asked:
            t = time.perf_counter()
            found = self.vector.search(sub, top_k=top_k).hops[0].chunks
            chunks = new_chunks(found, held, None)
            held |= {c.chunk_id for c in chunks}
            rankings.append([c.chunk_id for c in found])
            hops.append(Hop(index=len(hops) + 1, chunks=chunks, query=sub, seconds=time.perf_counter() - t))
            phases["search"] += hops[-1].seconds
        rescore(hops, fused_scores(rankings))
        chain = ReasoningChain(self.decomposer.label, "sub-questions asked",
                               tuple({"hop": h.index, "thought": None, "query": h.query, "parent": None} for h in hops),
                               sub_questions=tuple(subs), failure=failure)
        return RetrievalResult(question, self.name, hops, params={"top_k": top_k, **self.params},
                               seconds=time.perf_counter() - started, phases=phases, diagnostics=(chain,))


class DecomposeOptions(MethodOptions):
    sub_questions: int = option(3, "Sub-questions N; -k chunks each.", flag="--sub-questions", ge=1,
                                legacy=("decompose_sub_questions",))


def build(ctx: BuildContext, options: DecomposeOptions) -> DecomposeRetriever:
    g = ctx.graph
    vector = VectorRetriever(g.driver, ctx.embedder, g.capabilities, g.database, corpus=g.corpus,
                             search_ratio=ctx.settings.vector_search_ratio)
    decomposer = (LLMDecomposer(ctx.llm, demonstrations.load(demonstrations.benchmark_questions()))
                  if ctx.llm is not None else OfflineDecomposer(SourceCatalog.from_graph(g.driver, g.database, g.corpus)))
    return DecomposeRetriever(vector, decomposer, sub_questions=options.sub_questions)


METHOD = MethodSpec(
    name="decompose", description="query decomposition: sub-questions, each searched by vector, rankings fused",
    options=DecomposeOptions, build=build, indexes=("vector",), embedder=True, uses_llm=True,
    held_out=demonstrations.held_out, diagnostics=(ReasoningChain,))
