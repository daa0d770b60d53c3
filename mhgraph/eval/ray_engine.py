"""`mhgraph eval --engine ray`: the questions spread over a Ray cluster.

Each worker (a Ray Data actor) connects to the graph and builds the method's retriever as `eval`
does here (same settings, options and models; a k-fold model still scores each question with the
fold that never saw it), then searches its share of the questions. The results come back here and
are scored, reported and traced exactly as the local engine's, so both engines give the same
figures; each worker warms its retriever up first, as eval does, and the workers' model calls are
counted in the run's usage. Wall time differs, and per-question seconds with the workers' load.
"""

from __future__ import annotations

import pickle
from typing import Any, Sequence

from tqdm import tqdm

from mhgraph.config import Settings
from mhgraph.engine.ray_cluster import import_ray, ray_cluster, worker_settings
from mhgraph.graph.connection import connect
from mhgraph.graph.context import GraphContext
from mhgraph.llm import LLM, Usage, load_llm
from mhgraph.retrieval import registry
from mhgraph.types import Question, RetrievalResult

QUESTIONS_PER_BATCH = 8


class SearchStage:
    """Ray Data stage (one per actor): the method's retriever, built once, searching a batch of questions."""

    def __init__(self, settings: Settings, method: str, questions: bytes, top_k: int, llm_cache: bool) -> None:
        self.top_k = top_k
        self.driver = connect(settings)
        graph = GraphContext.open(self.driver, settings.neo4j_database, settings.corpus)
        method_options = registry.options_for(settings, method)
        self.llm = load_llm(settings, cache=llm_cache) if registry.get(method).calls_llm(method_options) else None
        asked = pickle.loads(questions)
        self.retriever = registry.build_retriever(method, graph, settings, method_options,
                                                  embedder=registry.question_embedder(graph, settings), llm=self.llm,
                                                  questions=asked)
        # as eval does: model loading and the first query's planning before any timed search, and
        # the warm-up's model calls not counted
        self.retriever.search(asked[0].query, top_k=top_k)
        if self.llm is not None:
            self.llm.usage = Usage()

    def __call__(self, batch: dict[str, Any]) -> dict[str, list]:
        before = self.llm.usage.copy() if self.llm is not None else Usage()
        results = [pickle.dumps(self.retriever.search(str(query), top_k=self.top_k), protocol=5)
                   for query in batch["query"]]
        spent = self.llm.usage.since(before) if self.llm is not None else Usage()
        # the batch's model calls ride on its first row
        return {"id": list(batch["id"]), "result": results,
                "usage": [pickle.dumps(spent, protocol=5)] + [b""] * (len(results) - 1)}


def search_on_ray(settings: Settings, corpus: str, method: str, questions: Sequence[Question], top_k: int, *,
                  address: str | None, workers: int, progress: bool = True, llm: LLM | None = None,
                  llm_cache: bool = True) -> dict[str, RetrievalResult]:
    """question id -> the method's result, searched by `workers` actors of the Ray cluster at `address`;
    the workers' model calls are added to `llm.usage`."""
    ray = import_ray()
    shared = worker_settings(settings, corpus)
    results: dict[str, RetrievalResult] = {}
    with ray_cluster(address) as cluster, \
            tqdm(total=len(questions), desc=f"eval {method} (ray)", unit="q", disable=not progress) as bar:
        data = ray.data.from_items([{"id": q.id, "query": q.query} for q in questions],   # a block per batch
                                   override_num_blocks=max(1, -(-len(questions) // QUESTIONS_PER_BATCH)))
        data = data.map_batches(SearchStage, batch_size=QUESTIONS_PER_BATCH,
                                compute=ray.data.ActorPoolStrategy(size=workers),
                                num_cpus=cluster.cpus_per_worker(workers, reserved=0.0),
                                fn_constructor_kwargs={"settings": shared, "method": method, "top_k": top_k,
                                                       "questions": pickle.dumps(list(questions), protocol=5),
                                                       "llm_cache": llm_cache})
        for rows in data.iter_batches(batch_size=None, batch_format="numpy"):
            for qid, blob, spent in zip(rows["id"], rows["result"], rows["usage"]):
                results[str(qid)] = pickle.loads(blob)
                if spent and llm is not None:
                    llm.usage.add(pickle.loads(spent))
            bar.update(len(rows["id"]))
    return {q.id: results[q.id] for q in questions}   # in question order, as the local engine gives them
