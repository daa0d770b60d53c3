"""`decompose`: query decomposition. The decomposer (mhgraph.reasoning.decomposer: a language
model, or the labelled offline strategy) splits the question into at most N sub-questions; each is
one hop: its top-k chunks from the vector index (k = 5 in the comparative study), the chunks an
earlier sub-question already found left out of its hop. The final ranking fuses the
sub-questions' rankings (mhgraph.retrieval.merge). When the model fails, the question itself is
the one sub-question and the failure is recorded."""

from __future__ import annotations

import time
from typing import Any

from mhgraph.llm import LLMError
from mhgraph.reasoning.decomposer import Decomposer
from mhgraph.types import Hop, RetrievalResult
from mhgraph.retrieval.base import Retriever
from mhgraph.retrieval.merge import fused_scores, new_chunks, rescore
from mhgraph.retrieval.vector import VectorRetriever


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
        details: dict[str, Any] = {
            "sub_questions": subs, "steps": [{"hop": h.index, "thought": None, "query": h.query, "parent": None}
                                             for h in hops],
            **({"failure": failure} if failure else {})}
        return RetrievalResult(question, self.name, hops, params={"top_k": top_k, **self.params},
                               seconds=time.perf_counter() - started, phases=phases, details=details)
