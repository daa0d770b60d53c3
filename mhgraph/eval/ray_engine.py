"""`mhgraph eval --engine ray`: the questions spread over a Ray cluster.

Each worker (a Ray Data actor) connects to the graph and builds the method's retriever as `eval`
does here (same settings, options and models; a k-fold model still scores each question with the
fold that never saw it), then searches its share of the questions. The results come back here and
are scored, reported and traced exactly as the local engine's, so both engines give the same
figures; only wall time differs.
"""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any, Sequence

from tqdm import tqdm

from mhgraph.config import Settings
from mhgraph.engine.ray_cluster import import_ray, ray_cluster
from mhgraph.graph.connection import connect, credentials
from mhgraph.graph.context import GraphContext
from mhgraph.llm import load_llm
from mhgraph.retrieval import registry
from mhgraph.types import Question, RetrievalResult

QUESTIONS_PER_BATCH = 8


class SearchStage:
    """Ray Data stage (one per actor): the method's retriever, built once, searching a batch of questions."""

    def __init__(self, settings: Settings, method: str, questions: bytes, top_k: int) -> None:
        self.top_k = top_k
        self.driver = connect(settings)
        graph = GraphContext.open(self.driver, settings.neo4j_database, settings.corpus)
        method_options = registry.options_for(settings, method)
        llm = load_llm(settings) if registry.get(method).calls_llm(method_options) else None
        self.retriever = registry.build_retriever(method, graph, settings, method_options,
                                                  embedder=registry.question_embedder(graph, settings), llm=llm,
                                                  questions=pickle.loads(questions))

    def __call__(self, batch: dict[str, Any]) -> dict[str, list]:
        return {"id": list(batch["id"]),
                "result": [pickle.dumps(self.retriever.search(str(query), top_k=self.top_k), protocol=5)
                           for query in batch["query"]]}


def search_on_ray(settings: Settings, corpus: str, method: str, questions: Sequence[Question], top_k: int, *,
                  address: str | None, workers: int, progress: bool = True) -> dict[str, RetrievalResult]:
    """question id -> the method's result, searched by `workers` actors of the Ray cluster at `address`."""
    ray = import_ray()
    user, password = credentials(settings)   # the local server's password file is on this machine
    shared = dataclasses.replace(settings, corpus=corpus, neo4j_uri=settings.uri, neo4j_username=user,
                                 neo4j_password=password)
    results: dict[str, RetrievalResult] = {}
    with ray_cluster(address) as cluster, \
            tqdm(total=len(questions), desc=f"eval {method} (ray)", unit="q", disable=not progress) as bar:
        data = ray.data.from_items([{"id": q.id, "query": q.query} for q in questions])
        data = data.map_batches(SearchStage, batch_size=QUESTIONS_PER_BATCH,
                                compute=ray.data.ActorPoolStrategy(size=workers),
                                num_cpus=cluster.cpus_per_worker(workers, reserved=0.0),
                                fn_constructor_kwargs={"settings": shared, "method": method, "top_k": top_k,
                                                       "questions": pickle.dumps(list(questions), protocol=5)})
        for rows in data.iter_batches(batch_size=None, batch_format="numpy"):
            for qid, blob in zip(rows["id"], rows["result"]):
                results[str(qid)] = pickle.loads(blob)
            bar.update(len(rows["id"]))
    return {q.id: results[q.id] for q in questions}   # in question order, as the local engine gives them
